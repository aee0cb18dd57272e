import { readFileSync } from 'node:fs';

/**
 * Processes Fjord supervises (database engines, media and SSH servers, containers) outlive a
 * `kill -9` of Fjord: they are re-parented and keep their files, sockets and ports. Before a
 * supervisor starts its process again it calls `stopOrphan` with the pid file the process writes
 * and what its command line must contain (the binary and the data directory), so a stale pid file
 * or a reused pid never kills a stranger. A matching orphan is asked to stop (SIGTERM, which
 * engines answer with a clean shutdown) and killed if it is still there after `graceMs`.
 */
export interface OrphanCheck {
  pidFile: string;
  /** Substrings the process's command line must all contain to be ours. */
  cmdline: string[];
  graceMs?: number;
  log?: (message: string) => void;
}

/** The pid in `pidFile` when that process is alive and its command line matches; else null. */
export function findOrphan(check: Pick<OrphanCheck, 'pidFile' | 'cmdline'>): number | null {
  let pid: number;
  try {
    pid = Number.parseInt(readFileSync(check.pidFile, 'utf8').trim(), 10);
  } catch {
    return null;
  }
  if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid) return null;
  let cmdline: string;
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return null; // gone (or no /proc: nothing we can prove is ours)
  }
  return check.cmdline.every((part) => cmdline.includes(part)) ? pid : null;
}

/**
 * True while a process with this pid runs (signal 0 only checks). A zombie has ended: only its
 * parent's wait is missing, which never comes where PID 1 is no init that reaps (a container
 * started without one), so waiting for it to go would wait forever.
 */
export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z';
  } catch {
    return false; // gone between the two looks
  }
};

/** Stops a matching orphan; resolves to its pid, or null when there was none. */
export async function stopOrphan(check: OrphanCheck): Promise<number | null> {
  const pid = findOrphan(check);
  if (pid === null) return null;
  check.log?.(`stopping orphaned process ${pid} left by an earlier Fjord (${check.cmdline[0]})`);
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return pid;
  }
  const deadline = Date.now() + (check.graceMs ?? 30_000);
  while (isAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (isAlive(pid)) {
    check.log?.(`orphaned process ${pid} did not stop in time; killing it`);
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
    while (isAlive(pid)) await new Promise((r) => setTimeout(r, 50));
  }
  return pid;
}
