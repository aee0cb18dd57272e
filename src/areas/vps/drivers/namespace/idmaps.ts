/**
 * Each server's private range of host user and group ids: its root (id 0 inside) is the range's
 * first id on the host, and no two servers on this machine ever share an id, so a process that
 * leaves one server (or a file it wrote) is nobody to the host and to every other server.
 *
 * Ranges are 65 536 ids from a pool at 0x70000000 (far above any id a distribution hands out),
 * recorded in two places that outlive Fjord and the machine's restarts: the server's
 * `server.json` (which range its files are owned by) and a directory per range under
 * /var/lib/fjord-vps/idmaps naming its owner, shared by every Fjord on the machine. A range whose
 * owner's disk is gone is free again. The pool is granted to root in /etc/subuid and /etc/subgid,
 * which is what lets newuidmap/newgidmap (Debian's uidmap) write the mapping.
 */
import { existsSync } from 'node:fs';
import { appendFile, chmod, lchown, lstat, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const ID_COUNT = 65_536;
export const POOL_BASE = 0x7000_0000;
export const POOL_RANGES = 4096;
const REGISTRY = '/var/lib/fjord-vps/idmaps';

export const idBaseOf = (range: number) => POOL_BASE + range * ID_COUNT;

/** Grants root the pool in /etc/subuid and /etc/subgid when no line covers it yet. */
export async function grantPool(): Promise<void> {
  for (const file of ['/etc/subuid', '/etc/subgid']) {
    const text = await readFile(file, 'utf8').catch(() => '');
    const covered = text.split('\n').some((line) => {
      const [user, start, count] = line.trim().split(':');
      return (
        (user === 'root' || user === '0') &&
        Number(start) <= POOL_BASE &&
        Number(start) + Number(count) >= POOL_BASE + POOL_RANGES * ID_COUNT
      );
    });
    if (covered) continue;
    const sep = text === '' || text.endsWith('\n') ? '' : '\n';
    await appendFile(file, `${sep}root:${POOL_BASE}:${POOL_RANGES * ID_COUNT}\n`, { mode: 0o644 });
  }
}

/**
 * The range held for the server whose directory is `owner`: `preferred` (the one its files
 * are owned by) when free or already its own, else the first free one from a hash of its id.
 */
export async function reserveIdRange(id: string, owner: string, preferred?: number): Promise<number> {
  await mkdir(REGISTRY, { recursive: true });
  let start = preferred ?? 0;
  if (preferred === undefined) for (const c of id) start = (start * 31 + c.charCodeAt(0)) % POOL_RANGES;
  for (let i = 0; i < POOL_RANGES; i++) {
    const range = (start + i) % POOL_RANGES;
    const path = join(REGISTRY, String(range));
    const ownerFile = join(path, 'owner');
    try {
      await mkdir(path);
      await writeFile(ownerFile, owner);
      return range;
    } catch {
      const current = await readFile(ownerFile, 'utf8').catch(() => null);
      if (current === owner) return range;
      if (current !== null && !existsSync(join(current, 'server.json'))) {
        await writeFile(ownerFile, owner);
        return range;
      }
    }
  }
  throw new Error('no free id range for a server');
}

export async function releaseIdRange(owner: string, range: number | undefined): Promise<void> {
  if (range === undefined) return;
  const path = join(REGISTRY, String(range));
  if ((await readFile(join(path, 'owner'), 'utf8').catch(() => null)) === owner)
    await rm(path, { recursive: true, force: true });
}

/**
 * Gives every file under `dir` the owner it has inside a server whose range starts at `base`:
 * id n (0…65535, or n in any other range of the pool) becomes base + n. Idempotent; set-user
 * and set-group bits, which chown clears, are put back.
 */
export async function shiftOwnership(dir: string, base: number): Promise<void> {
  const shift = (n: number) => base + (n % ID_COUNT);
  const visit = async (path: string): Promise<void> => {
    const st = await lstat(path);
    const uid = shift(st.uid);
    const gid = shift(st.gid);
    if (uid !== st.uid || gid !== st.gid) {
      await lchown(path, uid, gid);
      if (!st.isSymbolicLink() && st.mode & 0o6000) await chmod(path, st.mode & 0o7777);
    }
    if (st.isDirectory()) for (const name of await readdir(path)) await visit(join(path, name));
  };
  await visit(dir);
}
