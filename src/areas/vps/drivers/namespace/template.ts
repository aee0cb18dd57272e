import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { run } from './host.js';

/** The OS templates the namespace driver builds, and the Debian suite of each. */
export const DEBIAN_SUITES: Record<string, string> = { 'debian-12': 'bookworm', 'debian-11': 'bullseye' };

/** The first Debian archive in the host's APT sources (one-line or deb822 form); deb.debian.org else. */
export function debianMirror(): string {
  const files = ['/etc/apt/sources.list'];
  const dir = '/etc/apt/sources.list.d';
  if (existsSync(dir))
    for (const f of readdirSync(dir).sort()) if (/\.(list|sources)$/.test(f)) files.push(join(dir, f));
  for (const file of files) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n')) {
      const m = /^\s*(?:deb\s+(?:\[[^\]]*\]\s+)?|URIs:\s*)(https?:\/\/\S+)/.exec(line);
      if (m && !/security|ports|snapshot/.test(m[1]!) && /debian/.test(m[1]!))
        return m[1]!.replace(/\/$/, '');
    }
  }
  return 'http://deb.debian.org/debian';
}

/**
 * What a template has beyond minbase: sshd, `ip`, and `procps` (`ps`, `free`, `top`, `uptime`,
 * which read the plan's figures through lxcfs).
 */
const TEMPLATE_PACKAGES = ['openssh-server', 'iproute2', 'procps'];

/** Whether this host can build templates at all. */
export const canDebootstrap = () =>
  ['/usr/sbin/debootstrap', '/usr/bin/debootstrap'].some((p) => existsSync(p)) &&
  ['/usr/bin/ssh-keygen'].every((p) => existsSync(p));

/**
 * The Debian roots servers are made from, one per template, under `dir/<template>/root`, built
 * once with `debootstrap --variant=minbase` and TEMPLATE_PACKAGES, under umask 022. A root appears
 * only when complete (built beside it, then renamed), so several Fjords (or test runs) may share
 * the directory: a second builder's copy is dropped.
 */
export class TemplateCache {
  private readonly building = new Map<string, Promise<string>>();

  constructor(
    readonly dir: string,
    private readonly mirror: string = debianMirror(),
    /** Where the build says what it is doing: it takes about a minute, and nothing else would. */
    private readonly log: Pick<Logger, 'info'> | null = null,
  ) {}

  /** `root2`: roots built before the umask fix (`root`, mode 0700 throughout) are never reused. */
  rootOf(template: string): string {
    return join(this.dir, template, 'root2');
  }
  isReady(template: string): boolean {
    return existsSync(join(this.rootOf(template), 'usr/sbin/sshd'));
  }

  /** The template's root, built first when missing (about 40 s and 210 MB for bookworm). */
  ensure(template: string): Promise<string> {
    if (this.isReady(template)) return Promise.resolve(this.rootOf(template));
    let pending = this.building.get(template);
    if (!pending) {
      pending = this.build(template).finally(() => this.building.delete(template));
      this.building.set(template, pending);
    }
    return pending;
  }

  private async build(template: string): Promise<string> {
    const suite = DEBIAN_SUITES[template];
    if (!suite) throw new Error(`the namespace driver cannot build ${template}`);
    const target = this.rootOf(template);
    const temp = join(this.dir, template, `build-${randomBytes(4).toString('hex')}`);
    await mkdir(temp, { recursive: true });
    const started = performance.now();
    const step = (what: string) =>
      this.log?.info(
        {
          template,
          suite,
          mirror: this.mirror,
          seconds: Math.round((performance.now() - started) / 100) / 10,
        },
        `vps template: ${what}`,
      );
    step('building with debootstrap (about a minute; once per template)');
    try {
      // Fjord runs under umask 077 (its data dir holds secrets); a Debian root built under it has
      // `/`, `/etc` and `/usr` at 0700, so no user but root could run anything in a server.
      await run(
        'sh',
        [
          '-c',
          'umask 022 && exec debootstrap --variant=minbase --include="$1" "$2" "$3" "$4"',
          'sh',
          TEMPLATE_PACKAGES.join(','),
          suite,
          temp,
          this.mirror,
        ],
        30 * 60_000,
      );
      step('debootstrap done; removing host keys and the package cache');
      // Each server makes its own host keys; none are shared through the template.
      await run('sh', [
        '-c',
        `rm -f "${temp}"/etc/ssh/ssh_host_* && rm -rf "${temp}"/var/cache/apt/archives/*.deb`,
      ]);
      await mkdir(join(temp, 'etc/ssh/sshd_config.d'), { recursive: true });
      // No PAM in a server without a login manager: key logins need none, and pam_loginuid fails there.
      await writeFile(join(temp, 'etc/ssh/sshd_config.d/fjord.conf'), 'UsePAM no\n');
      if (this.isReady(template)) return target;
      await rename(temp, target).catch((err) => {
        if (!this.isReady(template)) throw err;
      });
      step('ready');
      return target;
    } finally {
      await rm(temp, { recursive: true, force: true });
    }
  }
}
