/**
 * The seccomp filter every process of a server runs under, in the spirit of LXC's and podman's
 * defaults: a deny list of system calls that reach the host kernel as a whole (modules, kexec,
 * the kernel log, BPF, perf, keyrings, swap, accounting, file handles that walk out of a mount,
 * the new mount API) on top of what the user namespace already refuses. Calls of another
 * architecture (i386 or x32 on x86-64) are refused outright, so the table cannot be sidestepped.
 *
 * Written as classic BPF by hand (struct seccomp_data: nr at offset 0, arch at 4) because no
 * seccomp compiler ships for Node 20; launch-helper.ts installs it.
 */

const EPERM = 1;
const ENOSYS = 38;

/** [x86-64 number, aarch64 number, errno]; ENOSYS where software falls back gracefully. */
const DENIED: Record<string, [number | null, number | null, number]> = {
  syslog: [103, 116, EPERM],
  acct: [163, 89, EPERM],
  swapon: [167, 224, EPERM],
  swapoff: [168, 225, EPERM],
  iopl: [172, null, EPERM],
  ioperm: [173, null, EPERM],
  uselib: [134, null, EPERM],
  init_module: [175, 105, EPERM],
  finit_module: [313, 273, EPERM],
  delete_module: [176, 106, EPERM],
  quotactl: [179, 60, EPERM],
  nfsservctl: [180, 42, EPERM],
  lookup_dcookie: [212, 18, EPERM],
  kexec_load: [246, 104, EPERM],
  kexec_file_load: [320, 294, EPERM],
  add_key: [248, 217, ENOSYS],
  request_key: [249, 218, ENOSYS],
  keyctl: [250, 219, ENOSYS],
  perf_event_open: [298, 241, EPERM],
  fanotify_init: [300, 262, EPERM],
  open_by_handle_at: [304, 265, EPERM],
  bpf: [321, 280, EPERM],
  userfaultfd: [323, 282, EPERM],
  // The new mount API (same numbers everywhere): mount(2) still works for tmpfs and the like.
  open_tree: [428, 428, ENOSYS],
  move_mount: [429, 429, ENOSYS],
  fsopen: [430, 430, ENOSYS],
  fsconfig: [431, 431, ENOSYS],
  fsmount: [432, 432, ENOSYS],
  fspick: [433, 433, ENOSYS],
  mount_setattr: [442, 442, ENOSYS],
};

const AUDIT_ARCH = { x64: 0xc000003e, arm64: 0xc00000b7 } as const;
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const RET_K = 0x06;
const RET_ALLOW = 0x7fff0000;
const retErrno = (errno: number) => 0x00050000 | errno;

/** Whether this architecture has a filter (elsewhere servers start without one, logged). */
export const seccompSupported = (arch: string = process.arch) => arch in AUDIT_ARCH;

/** The filter as the kernel's `struct sock_filter[]` for this machine's architecture. */
export function seccompFilter(arch: string = process.arch): Buffer {
  if (!seccompSupported(arch)) throw new Error(`no seccomp filter for ${arch}`);
  const x64 = arch === 'x64';
  const code: [number, number, number, number][] = [];
  const op = (c: number, jt: number, jf: number, k: number) => code.push([c, jt, jf, k]);
  op(LD_W_ABS, 0, 0, 4);
  op(JEQ_K, 1, 0, AUDIT_ARCH[arch as keyof typeof AUDIT_ARCH]);
  op(RET_K, 0, 0, retErrno(ENOSYS));
  op(LD_W_ABS, 0, 0, 0);
  if (x64) {
    // x32 calls are x86-64 calls with bit 30 set: refuse them all.
    op(JGE_K, 0, 1, 0x40000000);
    op(RET_K, 0, 0, retErrno(ENOSYS));
  }
  for (const [x, a, errno] of Object.values(DENIED)) {
    const nr = x64 ? x : a;
    if (nr === null) continue;
    op(JEQ_K, 0, 1, nr);
    op(RET_K, 0, 0, retErrno(errno));
  }
  op(RET_K, 0, 0, RET_ALLOW);
  const out = Buffer.alloc(code.length * 8);
  code.forEach(([c, jt, jf, k], i) => {
    out.writeUInt16LE(c, i * 8);
    out.writeUInt8(jt, i * 8 + 2);
    out.writeUInt8(jf, i * 8 + 3);
    out.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return out;
}
