/**
 * Just enough of POSIX ustar for server backups: regular files and directories, written and read
 * in memory-sized pieces. Archives open with GNU tar, bsdtar and Python's tarfile. Names longer
 * than 100 bytes use the ustar prefix field (up to 255 bytes in all).
 */
export interface TarEntry {
  /** Relative path, `/`-separated; a directory's ends without a slash. */
  name: string;
  type: 'file' | 'dir';
  mode: number;
  /** Seconds since the epoch. */
  mtime: number;
  data?: Buffer;
}

const BLOCK = 512;

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

function splitName(name: string): { prefix: string; base: string } {
  if (Buffer.byteLength(name) <= 100) return { prefix: '', base: name };
  for (let i = name.lastIndexOf('/'); i > 0; i = name.lastIndexOf('/', i - 1)) {
    const prefix = name.slice(0, i);
    const base = name.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(base) <= 100) return { prefix, base };
  }
  throw new Error(`path too long for a tar archive: ${name}`);
}

function header(entry: TarEntry, size: number): Buffer {
  const h = Buffer.alloc(BLOCK);
  const { prefix, base } = splitName(entry.type === 'dir' ? `${entry.name}/` : entry.name);
  h.write(base, 0, 100, 'utf8');
  h.write(octal(entry.mode & 0o7777, 8), 100, 'ascii');
  h.write(octal(0, 8), 108, 'ascii');
  h.write(octal(0, 8), 116, 'ascii');
  h.write(octal(size, 12), 124, 'ascii');
  h.write(octal(Math.max(0, Math.floor(entry.mtime)), 12), 136, 'ascii');
  h.write('        ', 148, 'ascii');
  h.write(entry.type === 'dir' ? '5' : '0', 156, 'ascii');
  h.write('ustar\u000000', 257, 'binary');
  h.write('root', 265, 'ascii');
  h.write('root', 297, 'ascii');
  h.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return h;
}

/** The archive's bytes, closing blocks included. */
export function writeTar(entries: TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const data = e.type === 'file' ? (e.data ?? Buffer.alloc(0)) : Buffer.alloc(0);
    parts.push(header(e, data.length), data);
    const pad = (BLOCK - (data.length % BLOCK)) % BLOCK;
    if (pad) parts.push(Buffer.alloc(pad));
  }
  parts.push(Buffer.alloc(BLOCK * 2));
  return Buffer.concat(parts);
}

const field = (h: Buffer, start: number, len: number) =>
  h
    .subarray(start, start + len)
    .toString('utf8')
    .replace(/\0[\s\S]*$/, '');
const numeric = (h: Buffer, start: number, len: number) =>
  Number.parseInt(field(h, start, len).trim() || '0', 8);

/**
 * The entries of an archive; throws on a damaged header (bad checksum), a truncated body, or a
 * name that would leave the directory it is unpacked into (absolute, or with `..`).
 */
export function readTar(archive: Buffer): TarEntry[] {
  const out: TarEntry[] = [];
  let at = 0;
  while (at + BLOCK <= archive.length) {
    const h = archive.subarray(at, at + BLOCK);
    if (h.every((b) => b === 0)) return out;
    const stored = numeric(h, 148, 8);
    let sum = 0;
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : h[i]!;
    if (sum !== stored) throw new Error('damaged tar header');
    const prefix = field(h, 345, 155);
    const name = (prefix ? `${prefix}/${field(h, 0, 100)}` : field(h, 0, 100)).replace(/\/+$/, '');
    if (!name || name.startsWith('/') || name.split('/').includes('..'))
      throw new Error(`unsafe name in tar archive: ${name}`);
    const size = numeric(h, 124, 12);
    const flag = field(h, 156, 1);
    at += BLOCK;
    if (at + size > archive.length) throw new Error('truncated tar archive');
    const entry: TarEntry = {
      name,
      type: flag === '5' ? 'dir' : 'file',
      mode: numeric(h, 100, 8),
      mtime: numeric(h, 136, 12),
    };
    if (flag === '0' || flag === '') entry.data = Buffer.from(archive.subarray(at, at + size));
    if (flag === '0' || flag === '' || flag === '5') out.push(entry);
    at += Math.ceil(size / BLOCK) * BLOCK;
  }
  throw new Error('truncated tar archive: no closing blocks');
}
