/**
 * Launching a server's process tree from the host: the one `spawn` that puts a shell in the
 * server's cgroups and network namespace and runs the two stages of init.ts, with everything they
 * need in their environment. The driver decides when; this knows how.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { cgroupDirs, netnsOf } from './host.js';
import { ID_COUNT } from './idmaps.js';
import { STAGE0_SCRIPT, STAGE1_SCRIPT } from './init.js';
import { LAUNCH_HELPER, PYTHON } from './launch-helper.js';
import { lxcfsRoot } from './lxcfs.js';
import { seccompFilter, seccompSupported } from './seccomp.js';

const PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export interface Launch {
  id: string;
  /** Marks every process of the launch on its command line, so it is found again after a crash. */
  marker: string;
  hostname: string;
  /** The first host id of the server's range. */
  idBase: number;
  /** The template's root (overlay lower layer), the server's upper layer and overlay work dir. */
  lower: string;
  upper: string;
  work: string;
  /** sshd's log, appended to. */
  consoleLog: string;
}

/** Where the seccomp filter is kept for launches and for logins that join a server. */
export const SECCOMP_FILE = '/run/fjord-vps/seccomp.bpf';

/** Launches of this process so far: each writes its own temporary seccomp file. */
let launches = 0;

/** The seccomp filter's file, written once per launch (root only reads it); '' without one. */
async function seccompFile(log: Logger): Promise<string> {
  if (!seccompSupported()) {
    log.warn({ arch: process.arch }, 'no seccomp filter for this architecture: servers start without one');
    return '';
  }
  const file = SECCOMP_FILE;
  // Named per process and launch: two servers starting at once in one process each rename their
  // own file (with the pid alone, the second rename found the first had taken it: ENOENT).
  const temp = `${file}.${process.pid}.${++launches}`;
  await writeFile(temp, seccompFilter());
  await rename(temp, file);
  return file;
}

/**
 * Starts the server. The shell joins the server's cgroups, then becomes nsenter (its netns), then
 * unshare (a private mount namespace) running stage 0, which execs the user namespace's unshare:
 * one pid throughout (the answer), whose one child is the server's PID 1. It starts under umask
 * 022, as a Debian machine's init does: Fjord's own 077 (set for its data dir) would otherwise pass
 * down to sshd and every login, leaving the customer's files unreadable to the server's other users.
 */
export async function launchServer(l: Launch, log: Logger): Promise<ChildProcess> {
  const procs = cgroupDirs(l.id).map((d) => join(d, 'cgroup.procs'));
  const console = openSync(l.consoleLog, 'a');
  const env = {
    PATH,
    FJORD_STAGE0: STAGE0_SCRIPT,
    FJORD_INIT: STAGE1_SCRIPT,
    FJORD_PYTHON: PYTHON,
    FJORD_HELPER: LAUNCH_HELPER,
    FJORD_SECCOMP: await seccompFile(log),
    FJORD_ID_BASE: String(l.idBase),
    FJORD_ID_COUNT: String(ID_COUNT),
    FJORD_LXCFS: (await lxcfsRoot(log)) ?? '',
    FJORD_LOWER: l.lower,
    FJORD_UPPER: l.upper,
    FJORD_WORK: l.work,
    FJORD_HOSTNAME: l.hostname,
  };
  const child = spawn(
    '/bin/sh',
    [
      '-c',
      `umask 022; for f in "$@"; do echo $$ > "$f"; done; exec nsenter --net=/run/netns/${netnsOf(l.id)} unshare --mount --propagation private -- /bin/sh -c "$FJORD_STAGE0" ${l.marker}`,
      l.marker,
      ...procs,
    ],
    { detached: true, stdio: ['ignore', console, console], env },
  );
  closeSync(console);
  child.unref();
  child.on('error', () => {});
  if (!child.pid) throw new Error('cannot launch the server');
  return child;
}
