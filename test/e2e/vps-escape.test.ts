import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { securePermissions } from '../../src/app/files.js';
import { planOf } from '../../src/areas/vps/catalogue.js';
import type { ServerSpec } from '../../src/areas/vps/drivers/driver.js';
import { addressesOf } from '../../src/areas/vps/drivers/namespace/host.js';
import { TemplateCache } from '../../src/areas/vps/drivers/namespace/template.js';
import { NamespaceVpsDriver } from '../../src/areas/vps/drivers/namespace.js';

/**
 * Escape attempts, as a customer logged in to their own namespace server would make them: each
 * runs as root inside a real server (two servers of two customers, each attempt one line of one
 * script over one ssh session) and must fail; the root work a customer legitimately does inside
 * must succeed. Skipped, with the reason, where the machine cannot make what the driver needs.
 */
const TEMPLATES = join(tmpdir(), 'fjord-vps-templates');
const exec = promisify(execFile);

function cannotRun(): string | null {
  if (process.getuid?.() !== 0) return 'not root: the namespace driver needs root';
  const tools: [string, string][] = [
    ['debootstrap', 'debootstrap'],
    ['ssh', 'openssh-client'],
    ['newuidmap', 'uidmap'],
    ['nft', 'nftables'],
    ['/usr/bin/python3', 'python3'],
  ];
  for (const [bin, pkg] of tools)
    try {
      execFileSync('sh', ['-c', `command -v ${bin}`], { stdio: 'pipe' });
    } catch {
      return `${bin} is not installed (Debian: apt-get install ${pkg})`;
    }
  try {
    execFileSync('unshare', ['--user', '--map-root-user', '--mount', '--pid', '--fork', 'true'], {
      stdio: 'pipe',
    });
  } catch (err) {
    return `this machine cannot make user namespaces: ${(err as Error).message}`;
  }
  return null;
}
const skip = cannotRun();

describe.skipIf(skip !== null)(
  `escape attempts from a namespace server${skip ? ` (skipped: ${skip})` : ''}`,
  () => {
    const work = mkdtempSync(join(tmpdir(), 'fjord-vps-escape-'));
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(work, 'id')]);
    const root = join(work, 'servers');
    const log = pino({ level: 'silent' });
    let driver: NamespaceVpsDriver;
    const listeners: Server[] = [];
    const secret = join(work, 'host-secret');
    const plan = planOf('vps-1-2')!;
    const spec = (id: string, customerId: string): ServerSpec => ({
      id,
      customerId,
      hostname: `${id}.example.test`,
      plan,
      osTemplate: 'debian-12',
      publicKeys: [readFileSync(join(work, 'id.pub'), 'utf8').trim()],
    });
    const a = spec(`esc-a-${process.pid}`, `cust-a-${process.pid}`);
    const b = spec(`esc-b-${process.pid}`, `cust-b-${process.pid}`);
    // A second server of the first customer: its own private network reaches it.
    const a2 = spec(`esc-a2-${process.pid}`, a.customerId);
    let relayA = '';
    let relayB = '';

    const ssh = async (address: string, command: string, user = 'root', extra: string[] = []) =>
      (
        await exec(
          'ssh',
          [
            '-i',
            join(work, 'id'),
            ...[
              '-o',
              'BatchMode=yes',
              '-o',
              'StrictHostKeyChecking=no',
              '-o',
              'UserKnownHostsFile=/dev/null',
            ],
            ...['-o', 'LogLevel=ERROR', '-o', 'ConnectTimeout=10', ...extra],
            `${user}@${address}`,
            command,
          ],
          { encoding: 'utf8', timeout: 120_000 },
        )
      ).stdout;

    /** Host TCP listeners the server must not reach: returns the port. */
    const listen = (host: string) =>
      new Promise<number>((resolve) => {
        const server = createServer((s) => s.end('host service\n'));
        listeners.push(server);
        server.listen({ host, port: 0 }, () => resolve((server.address() as { port: number }).port));
      });

    beforeAll(async () => {
      writeFileSync(secret, 'the host operator token\n');
      // The driver runs under the umask Fjord sets at start (077), as in production.
      securePermissions();
      driver = new NamespaceVpsDriver(root, new TemplateCache(TEMPLATES), log);
      const made = await Promise.all([a, b, a2].map((s) => driver.provision(s)));
      await Promise.all(made.map((m) => m.ready));
      const [ra, rb] = made as [(typeof made)[0], (typeof made)[0]];
      relayA = ra.ipv4;
      relayB = rb.ipv4;
    }, 1_800_000);

    afterAll(async () => {
      for (const l of listeners) l.close();
      await driver?.destroyAll();
      await driver?.shutdown();
      // A removed server leaves no loop device bound to its disk (detached with its last mount).
      for (let i = 0; i < 50 && execFileSync('losetup', ['-a'], { encoding: 'utf8' }).includes(work); i++)
        await new Promise((r) => setTimeout(r, 100));
      expect(execFileSync('losetup', ['-a'], { encoding: 'utf8' })).not.toContain(work);
      rmSync(work, { recursive: true, force: true });
    }, 120_000);

    it('every escape attempt fails', async () => {
      const meta = (id: string) =>
        JSON.parse(readFileSync(join(root, id, 'server.json'), 'utf8')) as { slot: number };
      const gatewayA = addressesOf(meta(a.id).slot).host;
      const serverB = addressesOf(meta(b.id).slot).server;
      const serverA2 = addressesOf(meta(a2.id).slot).server;
      const onGateway = await listen(gatewayA);
      const onLoopback = await listen('127.0.0.1');
      const filesOfB = join(root, b.id, 'disk/upper/root/.ssh/authorized_keys');
      const script = `
try() { n=$1; shift; if ( "$@" ) >/dev/null 2>&1; then echo "$n=escaped"; else echo "$n=held"; fi; }
tcp() { timeout 3 bash -c "exec 3<>/dev/tcp/$1/$2 && head -c 12 <&3 | grep -q host"; }
try chroot-escape perl -e 'mkdir "/tmp/j"; chroot "/tmp/j" or die; chdir ".." for 1..64; chroot "." or die; open(F, "<", "${secret}") or die'
try host-file cat ${secret}
try core-pattern sh -c 'echo "|/bin/sh" > /proc/sys/kernel/core_pattern'
try sysctl-write sh -c 'echo 1 > /proc/sys/vm/drop_caches'
try sysrq sh -c 'echo h > /proc/sysrq-trigger'
try mknod-host-disk sh -c 'mknod /tmp/vda b 254 0 && head -c 512 /tmp/vda | grep -q .'
try mknod-mem sh -c 'mknod /tmp/mem c 1 1 && head -c 1 /tmp/mem'
try dmesg dmesg
try kmsg sh -c 'head -c 1 /proc/kmsg | grep -q .'
try cgroup-v1-raise sh -c 'mkdir -p /tmp/cg && mount -t cgroup -o memory cgroup /tmp/cg; echo -1 > /tmp/cg/memory.limit_in_bytes'
try cgroup2-move sh -c 'mkdir -p /tmp/cg2 && mount -t cgroup2 none /tmp/cg2 && echo $$ > /tmp/cg2/cgroup.procs'
try host-processes sh -c 'ps -eo comm | grep -qx node'
try proc-1-root cat /proc/1/root${secret}
try host-loopback tcp 127.0.0.1 ${onLoopback}
try host-gateway tcp ${gatewayA} ${onGateway}
try other-customer-ssh bash -c 'timeout 3 bash -c "exec 3<>/dev/tcp/${serverB}/22 && head -c 4 <&3 | grep -q SSH"'
try other-customer-files cat ${filesOfB}
try keyring sh -c 'perl -e "exit(syscall(250, 0, -3, 0, 0, 0) < 0 ? 1 : 0)"'
try mount-host-disk sh -c 'mkdir -p /tmp/d && mount /dev/vda /tmp/d'
try change-address ip addr add 10.213.250.2/30 dev eth0
try pids-limit bash -c 'for i in $(seq 1100); do sleep 5 & done 2>/dev/null; n=$(ps -e --no-headers | wc -l); jobs -p >/tmp/storm; while read -r p; do kill -9 "$p"; done </tmp/storm; wait; [ "$n" -gt 1050 ]'
try memory-limit perl -e '$x = "a" x (2300 * 1024 * 1024); exit 0'
hostname evil.example.test
timeout 3 bash -c "exec 3<>/dev/tcp/${serverA2}/22 && head -c 4 <&3" && echo
`;
      const out = await ssh(relayA, script);
      const lines = out.trim().split('\n');
      // The same customer's other server answers: the drops above are the firewall's, not a dead link.
      expect(lines.pop()).toBe('SSH-');
      const escaped = lines.filter((l) => l.endsWith('=escaped'));
      expect(lines.length).toBe(22);
      expect(escaped).toEqual([]);
      // The memory cgroup a server may mount is its own, with the plan's limit.
      expect(await ssh(relayA, 'cat /tmp/cg/memory.limit_in_bytes')).toBe(`${2 * 1024 ** 3}\n`);
      // The host name changed inside only.
      expect(hostname()).not.toBe('evil.example.test');
      expect(await ssh(relayA, 'hostname')).toBe('evil.example.test\n');
      expect(readFileSync(secret, 'utf8')).toBe('the host operator token\n');
    }, 300_000);

    it('the disk is the plan’s: df shows its size, and filling it fills only the server’s own', async () => {
      const size = Number((await ssh(relayA, 'df -B1 --output=size / | tail -1')).trim());
      // ext4 keeps a little of the image for its journal and inode tables.
      expect(size).toBeGreaterThan(plan.storage_gb * 1024 ** 3 * 0.95);
      expect(size).toBeLessThanOrEqual(plan.storage_gb * 1024 ** 3);
      // fallocate takes every free block at once (as fast as a disk can be filled), then a write fails.
      const fill = await ssh(
        relayA,
        `fallocate -l $(df -B1 --output=avail / | tail -1) /fill; dd if=/dev/zero of=/more bs=1M count=8 2>&1; df -B1 --output=avail / | tail -1`,
      );
      expect(fill).toContain('No space left on device');
      expect(Number(fill.trim().split('\n').pop())).toBeLessThan(1024 ** 2);
      // The other server and the host still write.
      expect(await ssh(relayB, 'dd if=/dev/zero of=/root/written bs=1M count=8 2>/dev/null && echo ok')).toBe(
        'ok\n',
      );
      writeFileSync(join(work, 'host-write'), Buffer.alloc(8 * 1024 ** 2));
      expect(await ssh(relayA, 'rm -f /fill /more && touch /root/again && echo ok')).toBe('ok\n');
    }, 120_000);

    it('the customer is root inside: packages, /etc, users, services, and the plan in /proc', async () => {
      const script = `set -e
dpkg-query -W -f '\${Status}\\n' openssh-server
mkdir -p /tmp/pkg/DEBIAN /tmp/pkg/usr/share/hello
printf 'Package: fjord-hello\\nVersion: 1.0\\nArchitecture: all\\nMaintainer: t <t@example.test>\\nDescription: test\\n' > /tmp/pkg/DEBIAN/control
echo hello > /tmp/pkg/usr/share/hello/hello.txt
dpkg-deb -b /tmp/pkg /tmp/fjord-hello.deb >/dev/null
dpkg -i /tmp/fjord-hello.deb >/dev/null
cat /usr/share/hello/hello.txt
echo 'welcome' > /etc/motd && cat /etc/motd
useradd -m -s /bin/bash -p '*' alice
mkdir -p /home/alice/.ssh && cp /root/.ssh/authorized_keys /home/alice/.ssh/ && chown -R alice:alice /home/alice/.ssh
mount -t tmpfs scratch /mnt && echo tmpfs
(/usr/sbin/sshd -p 2222 -o PidFile=/run/sshd-2222.pid)
grep MemTotal /proc/meminfo
`;
      const out = await ssh(relayA, script);
      expect(out).toContain('install ok installed');
      expect(out).toContain('hello\n');
      expect(out).toContain('welcome\n');
      expect(out).toContain('tmpfs\n');
      expect(out).toMatch(/MemTotal:\s+2097152 kB/);
      // A user made with useradd logs in, runs commands, writes its home.
      expect(
        await ssh(relayA, 'id -un; echo mine > ~/note; cat ~/note; ls / >/dev/null && echo ls', 'alice'),
      ).toBe('alice\nmine\nls\n');
      // A service the customer runs on a port of its own is reached through the relay (ssh -W).
      const forward = exec(
        'ssh',
        [
          '-i',
          join(work, 'id'),
          ...['-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null'],
          ...['-o', 'LogLevel=ERROR', '-W', '127.0.0.1:2222', `root@${relayA}`],
        ],
        { encoding: 'utf8', timeout: 30_000 },
      );
      // Nothing to send: the service's greeting comes back, then the relay closes.
      forward.child.stdin?.end();
      const banner = await forward.catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
      expect(banner.stdout).toMatch(/^SSH-2\.0-OpenSSH/);
      // The other customer's server works on its own.
      expect(await ssh(relayB, 'hostname')).toBe(`${b.hostname}\n`);
    }, 300_000);
  },
);
