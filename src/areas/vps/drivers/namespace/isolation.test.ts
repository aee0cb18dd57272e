import { mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { chmod, chown } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ID_COUNT, idBaseOf, POOL_BASE, POOL_RANGES, shiftOwnership } from './idmaps.js';
import { seccompFilter } from './seccomp.js';

describe('seccomp filter', () => {
  const decode = (buf: Buffer) =>
    Array.from({ length: buf.length / 8 }, (_, i) => ({
      code: buf.readUInt16LE(i * 8),
      jt: buf.readUInt8(i * 8 + 2),
      jf: buf.readUInt8(i * 8 + 3),
      k: buf.readUInt32LE(i * 8 + 4),
    }));

  /** Runs the classic-BPF program over one system call, as the kernel would. */
  function verdict(prog: ReturnType<typeof decode>, arch: number, nr: number): number {
    let acc = 0;
    for (let pc = 0; pc < prog.length; pc++) {
      const { code, jt, jf, k } = prog[pc]!;
      if (code === 0x20) acc = k === 0 ? nr : arch;
      else if (code === 0x15) pc += acc === k ? jt : jf;
      else if (code === 0x35) pc += acc >= k ? jt : jf;
      else if (code === 0x06) return k;
      else throw new Error(`unexpected op ${code}`);
    }
    throw new Error('fell off the program');
  }

  it('refuses the host-wide calls on x86-64, allows the rest, refuses other ABIs', () => {
    const prog = decode(seccompFilter('x64'));
    const X64 = 0xc000003e;
    expect(verdict(prog, X64, 246)).toBe(0x50001); // kexec_load: EPERM
    expect(verdict(prog, X64, 103)).toBe(0x50001); // syslog
    expect(verdict(prog, X64, 175)).toBe(0x50001); // init_module
    expect(verdict(prog, X64, 250)).toBe(0x50026); // keyctl: ENOSYS
    expect(verdict(prog, X64, 0)).toBe(0x7fff0000); // read
    expect(verdict(prog, X64, 165)).toBe(0x7fff0000); // mount (user namespace rules apply)
    expect(verdict(prog, X64, 0x40000000 + 1)).toBe(0x50026); // x32
    expect(verdict(prog, 0x40000003, 1)).toBe(0x50026); // i386
  });

  it('uses the aarch64 table there', () => {
    const prog = decode(seccompFilter('arm64'));
    expect(verdict(prog, 0xc00000b7, 104)).toBe(0x50001); // kexec_load
    expect(verdict(prog, 0xc00000b7, 246)).toBe(0x7fff0000); // x86-64's kexec_load number means something else here
  });
});

describe.skipIf(process.getuid?.() !== 0)('shifting a disk onto a server id range', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fjord-idshift-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('maps ids 0…65535 and other ranges onto the range, keeps set-id bits, is idempotent', async () => {
    const base = idBaseOf(7);
    expect(base).toBe(POOL_BASE + 7 * ID_COUNT);
    expect(POOL_BASE + POOL_RANGES * ID_COUNT).toBeLessThanOrEqual(2 ** 31);
    mkdirSync(join(dir, 'home/alice'), { recursive: true });
    writeFileSync(join(dir, 'home/alice/note'), 'x');
    writeFileSync(join(dir, 'su'), 'x');
    symlinkSync('home', join(dir, 'link'));
    await chown(join(dir, 'home/alice'), 1000, 1000);
    await chown(join(dir, 'home/alice/note'), idBaseOf(3) + 1000, idBaseOf(3) + 1000);
    await chmod(join(dir, 'su'), 0o4755);
    await shiftOwnership(dir, base);
    await shiftOwnership(dir, base);
    expect(statSync(dir).uid).toBe(base);
    expect(statSync(join(dir, 'home/alice')).uid).toBe(base + 1000);
    expect(statSync(join(dir, 'home/alice/note')).gid).toBe(base + 1000);
    expect(statSync(join(dir, 'su')).mode & 0o7777).toBe(0o4755);
    expect(statSync(join(dir, 'su')).uid).toBe(base);
  });
});
