/**
 * Two kernel calls Node cannot make and util-linux 2.38 has no command for, run through Debian's
 * Python (`/usr/bin/python3`, ctypes only, so nothing to build or install beyond python3):
 *
 * - `idmap SRC DST BASE COUNT`: a read-only idmapped bind mount of SRC at DST (open_tree,
 *   mount_setattr with MOUNT_ATTR_IDMAP, move_mount; Linux ≥ 5.12), mapping ids 0…COUNT-1 on disk
 *   to BASE…BASE+COUNT-1. The user namespace that carries the mapping is a throwaway child's.
 *   This is how one shared template root appears owned by each server's own id range without
 *   a copy: the server's root (uid 0 inside) is BASE on the host.
 * - `seccomp FILE CMD ARGS…`: installs the classic-BPF filter in FILE (see seccomp.ts) with
 *   prctl(PR_SET_SECCOMP), then execs CMD. Filters are inherited across fork and exec and can
 *   never be removed, so everything the server runs is under it.
 */
export const PYTHON = '/usr/bin/python3';

export const LAUNCH_HELPER = String.raw`
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

def fail(what):
    e = ctypes.get_errno()
    sys.stderr.write("fjord-vps helper: %s: %s\n" % (what, os.strerror(e)))
    sys.exit(1)

def idmap(src, dst, base, count):
    # Numbers shared by every architecture (new syscalls are numbered alike since 5.1).
    OPEN_TREE, MOVE_MOUNT, MOUNT_SETATTR = 428, 429, 442
    ready_r, ready_w = os.pipe()
    done_r, done_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        if libc.unshare(0x10000000) != 0:
            os._exit(1)
        os.write(ready_w, b"x")
        os.read(done_r, 1)
        os._exit(0)
    if os.read(ready_r, 1) != b"x":
        sys.exit("fjord-vps helper: cannot make a user namespace")
    for f in ("uid_map", "gid_map"):
        with open("/proc/%d/%s" % (pid, f), "w") as m:
            m.write("0 %d %d\n" % (base, count))
    userns = os.open("/proc/%d/ns/user" % pid, os.O_RDONLY)
    os.write(done_w, b"x")
    os.waitpid(pid, 0)
    AT_FDCWD, AT_EMPTY_PATH, AT_RECURSIVE = -100, 0x1000, 0x8000
    OPEN_TREE_CLONE, OPEN_TREE_CLOEXEC = 1, 0o2000000
    tree = libc.syscall(OPEN_TREE, AT_FDCWD, src.encode(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE)
    if tree < 0:
        fail("open_tree " + src)
    class MountAttr(ctypes.Structure):
        _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                    ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]
    MOUNT_ATTR_RDONLY, MOUNT_ATTR_NODEV, MOUNT_ATTR_IDMAP = 0x1, 0x4, 0x100000
    attr = MountAttr(MOUNT_ATTR_IDMAP | MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV, 0, 0, userns)
    if libc.syscall(MOUNT_SETATTR, tree, b"", AT_EMPTY_PATH, ctypes.byref(attr), ctypes.sizeof(attr)) < 0:
        fail("idmapped mount of " + src)
    if libc.syscall(MOVE_MOUNT, tree, b"", AT_FDCWD, dst.encode(), 4) < 0:
        fail("move_mount to " + dst)

def seccomp(path, argv):
    prog = open(path, "rb").read()
    class Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]
    fprog = Fprog(len(prog) // 8, prog)
    PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        fail("seccomp")
    os.execvp(argv[0], argv)

if sys.argv[1] == "idmap":
    idmap(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
elif sys.argv[1] == "seccomp":
    seccomp(sys.argv[2], sys.argv[3:])
else:
    sys.exit("fjord-vps helper: unknown command")
`;
