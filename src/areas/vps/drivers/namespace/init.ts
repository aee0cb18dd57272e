/**
 * A server starts in two stages, both run by the host's /bin/sh.
 *
 * STAGE0_SCRIPT runs as the host's root, already in the server's cgroups and network namespace,
 * in a mount namespace of its own (private: nothing it mounts is seen by the host). It lays the
 * server's disk out: the shared template root as an idmapped, read-only mount (its files, owned
 * by 0…65535 on disk, appear owned by the server's own host id range), the server's upper layer
 * (already owned by that range) over it with overlayfs, all under a scratch tmpfs on
 * `/run/fjord-vps/mnt` whose path any id may walk (the data dir may not). Then, under the seccomp
 * filter, it execs `unshare` into a new user namespace mapping the server's root to the first id
 * of its range (newuidmap/newgidmap from Debian's uidmap, allowed by /etc/subuid), with new mount,
 * PID, UTS, IPC and cgroup namespaces. From there on nothing holds a host capability: the
 * server's root is an unprivileged id on the host, every mount above is locked in place, and the
 * cgroup namespace roots its view at its own cgroups.
 *
 * STAGE1_SCRIPT is the server's root in those namespaces: it mounts what a system needs (proc,
 * tmpfs /run, /tmp and /dev with only null, zero, full, random, urandom and tty bound from the
 * host, a private devpts), masks what tells about or acts on the host (`/proc/sysrq-trigger`,
 * `kcore`, `kmsg`, `keys`, `timer_list`; `/proc/sys`, `bus`, `fs` and `irq` read-only; `/sys` is
 * left unmounted), shows lxcfs's per-cgroup `/proc` files when lxcfs runs, sets the host name,
 * and `pivot_root`s into the server's root, detaching the host's. Then it becomes PID 1: a shell
 * that starts sshd and, on SIGTERM (a graceful stop), sends every process SIGTERM and waits for
 * sshd. When PID 1 leaves, the kernel ends the namespaces and every mount goes with them.
 */
export const MOUNT_SCRATCH = '/run/fjord-vps/mnt';

export const STAGE0_SCRIPT = `set -e
S=${MOUNT_SCRATCH}
mount -t tmpfs -o mode=755,size=1m tmpfs "$S"
mkdir "$S/lower" "$S/root"
"$FJORD_PYTHON" -c "$FJORD_HELPER" idmap "$FJORD_LOWER" "$S/lower" "$FJORD_ID_BASE" "$FJORD_ID_COUNT"
mount -t overlay overlay -o "lowerdir=$S/lower,upperdir=$FJORD_UPPER,workdir=$FJORD_WORK" "$S/root"
set -- --user --map-users="$FJORD_ID_BASE,0,$FJORD_ID_COUNT" --map-groups="$FJORD_ID_BASE,0,$FJORD_ID_COUNT" --setuid 0 --setgid 0 \\
  --mount --pid --uts --ipc --cgroup --fork --kill-child -- /bin/sh -c "$FJORD_INIT" "$0"
if [ -n "$FJORD_SECCOMP" ]; then exec "$FJORD_PYTHON" -c "$FJORD_HELPER" seccomp "$FJORD_SECCOMP" unshare "$@"; fi
exec unshare "$@"
`;

export const STAGE1_SCRIPT = `set -e
M=${MOUNT_SCRATCH}/root
# The disk came locked from stage 0; pivot_root wants a mount of this namespace's own.
mount --bind "$M" "$M"
mount -t proc -o nosuid,nodev,noexec proc "$M/proc"
mount -t tmpfs -o mode=755,nosuid,nodev tmpfs "$M/run"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$M/tmp"
mount -t tmpfs -o mode=755,nosuid tmpfs "$M/dev"
for d in null zero full random urandom tty; do touch "$M/dev/$d"; mount --bind "/dev/$d" "$M/dev/$d"; done
mkdir -p "$M/dev/pts" "$M/dev/shm" "$M/run/sshd" "$M/run/lock"
mount -t devpts -o newinstance,ptmxmode=0666,mode=620,gid=5 devpts "$M/dev/pts"
ln -s pts/ptmx "$M/dev/ptmx"
ln -s /proc/self/fd "$M/dev/fd"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$M/dev/shm"
for f in sysrq-trigger kcore kmsg keys timer_list sched_debug; do
  if [ -e "$M/proc/$f" ]; then mount --bind /dev/null "$M/proc/$f"; fi
done
for d in acpi scsi; do
  if [ -d "$M/proc/$d" ]; then mount -t tmpfs -o ro,nosuid,nodev,noexec,size=0 tmpfs "$M/proc/$d"; fi
done
for d in sys bus fs irq; do
  if [ -d "$M/proc/$d" ]; then mount --bind "$M/proc/$d" "$M/proc/$d"; mount -o remount,bind,ro,nosuid,nodev,noexec "$M/proc/$d"; fi
done
if [ -n "$FJORD_LXCFS" ]; then
  for f in meminfo cpuinfo stat uptime loadavg diskstats swaps; do
    if [ -e "$FJORD_LXCFS/proc/$f" ]; then mount --bind "$FJORD_LXCFS/proc/$f" "$M/proc/$f"; fi
  done
fi
hostname "$FJORD_HOSTNAME"
cd "$M"
pivot_root . .
umount -l -n -c .
cd /
exec /bin/sh -c 'trap "kill -TERM -1 2>/dev/null; wait; exit 0" TERM INT
/usr/sbin/sshd -D -e &
wait $!'
`;
