import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';

/**
 * One process at a time runs a supervised server on a data directory (the embedded database
 * engines). The owner writes its pid and start time to `file`, created exclusively; another
 * process finding a live owner there is refused, and one finding a dead owner (a Fjord killed with
 * `kill -9`) takes over — its orphans are then stopped by the supervisor. The start time tells a
 * live owner from a stranger that reused a dead owner's pid.
 */
export class OwnedByAnother extends Error {
  constructor(
    readonly file: string,
    readonly pid: number,
  ) {
    super(`${file} is held by the live process ${pid}`);
  }
}

/** This process's start time in clock ticks since boot (/proc/<pid>/stat field 22), or null. */
export function startTimeOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/** Takes `file` for this process, or throws OwnedByAnother. Returns the release function. */
export function claimOwnership(file: string): () => void {
  const mine = `${process.pid} ${startTimeOf(process.pid) ?? ''}\n`;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, mine);
      closeSync(fd);
      return () => release(file, mine);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const [pidText, started] = readOwner(file);
    const pid = Number.parseInt(pidText ?? '', 10);
    if (pid === process.pid) return () => release(file, mine);
    if (Number.isInteger(pid) && pid > 1 && started && startTimeOf(pid) === started)
      throw new OwnedByAnother(file, pid);
    // A dead owner: its claim goes, and the next attempt takes the file.
    try {
      unlinkSync(file);
    } catch {}
  }
  throw new Error(`could not claim ${file}`);
}

function readOwner(file: string): [string | undefined, string | undefined] {
  try {
    const [pid, started] = readFileSync(file, 'utf8').trim().split(' ');
    return [pid, started];
  } catch {
    return [undefined, undefined];
  }
}

function release(file: string, mine: string) {
  try {
    if (readFileSync(file, 'utf8') === mine) unlinkSync(file);
  } catch {}
}
