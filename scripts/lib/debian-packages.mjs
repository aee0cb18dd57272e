// The Debian packages the tests need (scripts/test.mjs installs the missing ones as root).
//
// Plain ESM, node builtins only: this runs before `npm ci` may have happened.

import { existsSync } from 'node:fs';
import { findPostgresBinDir } from './throwaway-postgres.mjs';

// Debian packages the tests need. `probe` is a command looked up on PATH (and the sbin dirs), or a
// function returning true when the package is present. Missing ones are installed in one apt-get
// call when running as root. Add e.g. { name: 'mariadb-server', probe: 'mariadbd' },
// { name: 'bind9-dnsutils', probe: 'dig' }.
export const DEBIAN_PACKAGES = [
  { name: 'postgresql', probe: () => findPostgresBinDir() !== null },
  { name: 'openssh-client', probe: 'ssh-keygen' },
  { name: 'redis-server', probe: 'redis-server' },
  // Object storage: the S3 clients people use.
  { name: 'awscli', probe: () => existsSync('/usr/bin/aws') },
  { name: 's3cmd', probe: 's3cmd' },
  { name: 'rclone', probe: 'rclone' },
  // DNS: dig/delv, drill, kdig, and dnsperf + NSD for the benchmark.
  { name: 'bind9-dnsutils', probe: 'delv' },
  { name: 'ldnsutils', probe: 'drill' },
  { name: 'knot-dnsutils', probe: 'kdig' },
  // Knot as a TSIG secondary (test/e2e/dns-tsig.test.ts).
  { name: 'knot', probe: () => existsSync('/usr/sbin/knotd') },
  { name: 'dnsperf', probe: 'dnsperf' },
  { name: 'nsd', probe: 'nsd' },
  // Dynamic DNS clients.
  { name: 'ddclient', probe: 'ddclient' },
  { name: 'inadyn', probe: 'inadyn' },
  // Databases: the second engine (PostgreSQL is above).
  { name: 'mariadb-server', probe: 'mariadbd' },
  // GPU jobs: the reference worker renders test clips with ffmpeg, the tests check them with ffprobe.
  { name: 'ffmpeg', probe: 'ffprobe' },
  // Speech: flite makes test speech, pocketsphinx (US English model) recognises it; ffmpeg above.
  { name: 'flite', probe: 'flite' },
  { name: 'pocketsphinx', probe: 'pocketsphinx_continuous' },
  { name: 'pocketsphinx-en-us', probe: () => existsSync('/usr/share/pocketsphinx/model/en-us') },
  // IoT: the MQTT command-line clients.
  { name: 'mosquitto-clients', probe: 'mosquitto_pub' },
  // Clusters: kubectl reads the kubeconfig Fjord hands out.
  { name: 'kubernetes-client', probe: 'kubectl' },
  // Container apps: real containers with podman and runc; busybox-static makes the test image.
  { name: 'podman', probe: 'podman' },
  { name: 'runc', probe: 'runc' },
  { name: 'busybox-static', probe: () => existsSync('/bin/busybox') || existsSync('/usr/bin/busybox') },
  // Container apps: volumes are ext4 file systems of their size (mkfs.ext4), loop-mounted.
  { name: 'e2fsprogs', probe: 'mkfs.ext4' },
  // Virtual servers (namespace driver): debootstrap builds the Debian root, whose sshd customers log in to.
  { name: 'debootstrap', probe: 'debootstrap' },
  // Fjord's image (test/e2e/image.test.ts): debootstrap and podman above; `ip` brings up loopback
  // in the namespace where the image's Node writes the code caches.
  { name: 'iproute2', probe: 'ip' },
  // …each an unprivileged container: id ranges (newuidmap), per-cgroup /proc, the tenant
  // firewall, and Debian's Python for the idmapped mount and the seccomp filter.
  { name: 'uidmap', probe: 'newuidmap' },
  { name: 'lxcfs', probe: 'lxcfs' },
  { name: 'nftables', probe: 'nft' },
  { name: 'python3', probe: () => existsSync('/usr/bin/python3') },
  { name: 'openssh-server', probe: () => existsSync('/usr/sbin/sshd') },
  // Live events: the watch and embed pages are driven in Debian's Chromium (playwright-core).
  { name: 'chromium', probe: () => existsSync('/usr/bin/chromium') },
  // Container apps: pebble, a test ACME server, issues custom domains' certificates in the tests.
  { name: 'pebble', probe: 'pebble' },
  // docs/tour.md reads JSON answers with jq, as users do.
  { name: 'jq', probe: 'jq' },
];
