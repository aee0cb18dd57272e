// The Debian mirror the image's root is made from: the one this machine's apt already uses, so
// the build reaches no host that apt would not. FJORD_IMAGE_MIRROR overrides it.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** `URIs:` of deb822 `.sources` files and the URL of one-line `deb` entries, in file order. */
function aptEntries() {
  const entries = [];
  const files = [];
  if (existsSync('/etc/apt/sources.list')) files.push('/etc/apt/sources.list');
  const dir = '/etc/apt/sources.list.d';
  if (existsSync(dir)) for (const name of readdirSync(dir).sort()) files.push(join(dir, name));
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    if (file.endsWith('.sources')) {
      for (const stanza of text.split(/\n\s*\n/)) {
        const field = (name) => stanza.match(new RegExp(`^${name}:\\s*(.+)$`, 'mi'))?.[1].trim() ?? '';
        if (!/\bdeb\b/.test(field('Types')) || /^\s*Enabled:\s*no/im.test(stanza)) continue;
        for (const uri of field('URIs').split(/\s+/).filter(Boolean))
          entries.push({ uri, suites: field('Suites').split(/\s+/) });
      }
    } else if (file.endsWith('.list')) {
      for (const line of text.split('\n')) {
        const m = line.match(/^\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)/);
        if (m) entries.push({ uri: m[1], suites: [m[2]] });
      }
    }
  }
  return entries;
}

/**
 * `{ archive, security }`: the Debian archive's URL and, when apt has one, the security
 * archive's (null otherwise). Throws when neither the environment nor apt names a mirror.
 */
export function debianMirrors(env = process.env) {
  const entries = aptEntries();
  const security =
    env.FJORD_IMAGE_SECURITY_MIRROR ||
    entries.find((e) => e.suites.some((s) => s.endsWith('-security')))?.uri ||
    null;
  const archive =
    env.FJORD_IMAGE_MIRROR ||
    entries.find((e) => e.suites.some((s) => !s.includes('-')) && !/security/.test(e.uri))?.uri;
  if (!archive)
    throw new Error('no Debian mirror: apt names none in /etc/apt; set FJORD_IMAGE_MIRROR to one');
  return { archive: archive.replace(/\/+$/, ''), security: security?.replace(/\/+$/, '') ?? null };
}
