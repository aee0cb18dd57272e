/**
 * What runs inside a server's new mount, UTS and PID namespaces (already in its network
 * namespace), with the host's /bin/sh: it mounts the copy-on-write root and what a system needs
 * (proc, sysfs read-only, tmpfs /run, /tmp and /dev with the usual devices, a private devpts),
 * sets the host name, then becomes PID 1 of the server inside the root: a shell that starts
 * sshd and, on SIGTERM (a graceful stop), sends every process of the server SIGTERM and waits
 * for sshd before leaving. When PID 1 leaves, the kernel ends what is left in the namespace and
 * the mounts go with it: nothing of a stopped server stays mounted on the host.
 */
export const INIT_SCRIPT = `set -e
M="$FJORD_ROOT"
mount -t overlay overlay -o "lowerdir=$FJORD_LOWER,upperdir=$FJORD_UPPER,workdir=$FJORD_WORK" "$M"
mount -t proc proc "$M/proc"
mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$M/sys"
mount -t tmpfs -o mode=755,nosuid,nodev tmpfs "$M/run"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$M/tmp"
mount -t tmpfs -o mode=755,nosuid tmpfs "$M/dev"
for d in null zero full random urandom tty; do touch "$M/dev/$d"; mount --bind "/dev/$d" "$M/dev/$d"; done
mkdir -p "$M/dev/pts" "$M/dev/shm" "$M/run/sshd"
mount -t devpts -o newinstance,ptmxmode=0666,mode=620,gid=5 devpts "$M/dev/pts"
ln -s pts/ptmx "$M/dev/ptmx"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$M/dev/shm"
hostname "$FJORD_HOSTNAME"
exec chroot "$M" /bin/sh -c 'trap "kill -TERM -1 2>/dev/null; wait; exit 0" TERM INT
/usr/sbin/sshd -D -e &
wait $!'
`;
