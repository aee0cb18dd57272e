/**
 * What running instances wrote: `podman logs`, read once or followed. Apart from podman.ts
 * because it only reads the containers the driver keeps, never changes them.
 */
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { LogLine, LogWindow } from './driver.js';
import type { PodmanCli } from './podman-cli.js';

/** The driver's instances by revision (only their container names are read here). */
type Instances = ReadonlyMap<string, readonly { name: string }[]>;

/** A follower that has not exited this long after being told to stop is killed. */
const KILL_AFTER_MS = 2000;

interface Target {
  name: string;
  revisionId: string;
  instance: string;
}

/** `fjord-app-<rev>` is instance `<rev>-1`, `fjord-app-<rev>-<n>` is `<rev>-<n>`. */
export function instanceOf(container: string, revisionId: string): string {
  const rest = container.slice(`fjord-app-${revisionId}`.length);
  return `${revisionId}${rest || '-1'}`;
}

function targets(running: Instances, revisionIds: string[], instance: string | null): Target[] {
  return revisionIds
    .flatMap((rev) =>
      (running.get(rev) ?? []).map((i) => ({
        name: i.name,
        revisionId: rev,
        instance: instanceOf(i.name, rev),
      })),
    )
    .filter((t) => instance === null || t.instance === instance);
}

const windowArgs = (w: LogWindow) => [
  '--timestamps',
  '--tail',
  String(w.tail),
  ...(w.since ? ['--since', w.since] : []),
];

/** A line of `podman logs --timestamps`: the time, a space, the text. */
function lineOf(raw: string, t: Target, stream: LogLine['stream']): LogLine {
  const space = raw.indexOf(' ');
  const time = Date.parse(raw.slice(0, space));
  return {
    time: Number.isNaN(time) ? 0 : time,
    revisionId: t.revisionId,
    instance: t.instance,
    stream,
    text: Number.isNaN(time) ? raw : raw.slice(space + 1),
  };
}

export async function podmanLogs(
  cli: PodmanCli,
  running: Instances,
  revisionIds: string[],
  window: LogWindow,
): Promise<LogLine[]> {
  const out: LogLine[] = [];
  for (const t of targets(running, revisionIds, window.instance)) {
    const both = await cli.runBoth(['logs', ...windowArgs(window), t.name]).catch(() => null);
    if (!both) continue;
    for (const [stream, text] of [
      ['stdout', both.stdout],
      ['stderr', both.stderr],
    ] as const)
      for (const line of text.split('\n')) if (line) out.push(lineOf(line, t, stream));
  }
  return window.tail === 0 ? [] : out.sort((x, y) => x.time - y.time).slice(-window.tail);
}

/**
 * One `podman logs --follow` per instance running now; resolves when all have exited — podman
 * ends them when their container stops or is removed — or, after `signal` aborts, once they are
 * stopped (SIGTERM, then SIGKILL): no follower outlives the stream.
 */
export async function podmanFollow(
  cli: PodmanCli,
  running: Instances,
  revisionIds: string[],
  window: LogWindow,
  onLine: (line: LogLine) => void,
  signal: AbortSignal,
): Promise<void> {
  if (signal.aborted) return;
  await Promise.all(
    targets(running, revisionIds, window.instance).map((t) => followOne(cli, t, window, onLine, signal)),
  );
}

function followOne(
  cli: PodmanCli,
  t: Target,
  window: LogWindow,
  onLine: (line: LogLine) => void,
  signal: AbortSignal,
): Promise<void> {
  return new Promise((resolve) => {
    const child = cli.spawn(['logs', '--follow', ...windowArgs(window), t.name]);
    let killer: NodeJS.Timeout | undefined;
    const stop = () => {
      child.kill('SIGTERM');
      killer = setTimeout(() => child.kill('SIGKILL'), KILL_AFTER_MS);
      killer.unref();
    };
    signal.addEventListener('abort', stop, { once: true });
    const read = (stream: Readable, name: LogLine['stream']) =>
      createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY }).on('line', (raw) => {
        // Lines without a time are podman's own complaints, not the container's output.
        const line = raw && !signal.aborted ? lineOf(raw, t, name) : null;
        if (line?.time) onLine(line);
      });
    read(child.stdout, 'stdout');
    read(child.stderr, 'stderr');
    const done = () => {
      signal.removeEventListener('abort', stop);
      clearTimeout(killer);
      resolve();
    };
    child.once('error', done);
    child.once('close', done);
  });
}
