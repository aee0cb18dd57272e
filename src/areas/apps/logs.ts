/**
 * What the app's instances wrote: the last lines, or a stream that follows them until they stop.
 * Apart from service.ts because it only reads (the driver's output, the revisions), never writes.
 */
import { type Clock, isoOf } from '../../kernel/clock.js';
import type { AppsDriver, HealthCheck, LogLine, LogWindow } from './drivers/driver.js';
import { appsErrors } from './errors.js';
import { settleRevision } from './lifecycle.js';
import type { AppsRevisionsTable } from './migrations.js';
import type { AppsRepo } from './repo.js';
import { instancesOf, type Loaded, loadApp, parse } from './state.js';

/** How often a followed simulated app is read again for new lines and stopped instances. */
const POLL_MS = 200;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000 } as const;
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

export type LogLineView = ReturnType<typeof viewOf>;
/** Why a follow stream ended on Fjord's side. */
export type FollowEnd = 'stopped' | 'no_instances';

/** `since` as a time: RFC 3339, or a duration back from `now`; refused (422) when neither. */
export function sinceMs(since: string, now: number): number {
  const ago = /^(\d{1,7})([smh])$/.exec(since);
  const at = ago
    ? now - Number(ago[1]) * UNIT_MS[ago[2] as 's' | 'm' | 'h']
    : RFC3339.test(since)
      ? Date.parse(since.replace(' ', 'T'))
      : Number.NaN;
  if (Number.isNaN(at)) throw appsErrors.badSince();
  return at;
}

function viewOf(l: LogLine, numbers: ReadonlyMap<string, number>) {
  return {
    time: isoOf(l.time)!,
    revision_id: l.revisionId,
    revision_number: numbers.get(l.revisionId) ?? null,
    instance: l.instance,
    stream: l.stream,
    text: l.text,
  };
}

/** What a simulated revision "wrote" by `now`: its deploy, told in lines marked simulated. */
function simulatedLines(raw: AppsRevisionsTable, now: number): LogLine[] {
  const v = settleRevision(raw, now);
  const out: LogLine[] = [];
  const at = (time: number, text: string, stream: 'stdout' | 'stderr' = 'stdout') =>
    out.push({ time, revisionId: v.id, instance: `${v.id}-1`, stream, text });
  at(v.created_at, `[simulated] pulling ${v.image}`);
  at(v.created_at, `[simulated] starting an instance listening on port ${v.port}`);
  if (v.ready_at !== null)
    at(v.ready_at, `[simulated] health check GET ${parse<HealthCheck>(v.health_check)!.path} passed`);
  if (v.failed_at !== null) at(v.failed_at, `[simulated] ${v.failure_reason}`, 'stderr');
  return out.filter((l) => l.time <= now);
}

/**
 * Reads an app's logs. Built per request, after the app (and the instance asked for) was found,
 * so a follow stream opens only when its errors are past.
 */
export class AppLogReader {
  private readonly numbers = new Map<string, number>();
  private readonly since: number | null;

  constructor(
    private readonly repo: AppsRepo,
    private readonly driver: AppsDriver,
    private readonly clock: Clock,
    private readonly s: Loaded,
    private window: LogWindow,
  ) {
    const now = clock.nowMs();
    for (const r of [s.serving, s.pending, s.latest]) if (r) this.numbers.set(r.id, r.number);
    const since = window.since === null ? null : sinceMs(window.since, now);
    // A real driver's lines carry the host's time, not the clock's: it reads `since` itself (a
    // duration back from the host's now, or the time in one form).
    this.since = driver.simulated ? since : null;
    if (since !== null && !driver.simulated && !/[smh]$/.test(window.since!))
      this.window = { ...window, since: new Date(since).toISOString() };
    if (window.instance !== null && !this.instances(s, now).includes(window.instance))
      throw appsErrors.instanceNotFound();
  }

  /** Instances running now (of the serving and the deploying revision). */
  private instances(s: Loaded, now: number): string[] {
    return instancesOf(this.driver, s, now).map((i) => i.id);
  }

  private get revisionIds(): string[] {
    return [this.s.serving?.id, this.s.pending?.id].filter((x): x is string => !!x);
  }

  private wanted = (l: LogLine) =>
    (this.since === null || l.time >= this.since) &&
    (this.window.instance === null || l.instance === this.window.instance);

  /**
   * The last lines, oldest first. A driver that runs nothing has no output: the lines then tell
   * what the last five deploys did, marked simulated.
   */
  async last() {
    const now = this.clock.nowMs();
    let out: LogLine[];
    if (this.driver.logs) out = await this.driver.logs(this.revisionIds, this.window);
    else {
      out = [];
      for (const r of (await this.repo.revisions(this.s.app.id)).slice(0, 5).reverse()) {
        this.numbers.set(r.id, r.number);
        out.push(...simulatedLines(r, now));
      }
      out = out.filter(this.wanted);
      out = out.slice(Math.max(0, out.length - this.window.tail));
    }
    return { lines: out.map((l) => viewOf(l, this.numbers)), simulated: this.driver.simulated };
  }

  /**
   * Sends the last lines, then each new one, until every instance followed has stopped (resolves
   * `stopped`; `no_instances` when none ran) or `signal` aborts.
   */
  async follow(send: (line: LogLineView) => void, signal: AbortSignal): Promise<FollowEnd> {
    const now = this.clock.nowMs();
    const followed = this.window.instance ? [this.window.instance] : this.instances(this.s, now);
    if (!followed.length) {
      for (const l of (await this.last()).lines) send(l);
      return 'no_instances';
    }
    const revisions = [...new Set(followed.map((id) => id.replace(/-\d+$/, '')))];
    if (this.driver.followLogs) {
      await this.driver.followLogs(revisions, this.window, (l) => send(viewOf(l, this.numbers)), signal);
      return 'stopped';
    }
    return this.followSimulated(revisions, followed, send, signal);
  }

  /** Reads the revisions again every POLL_MS: new lines on the clock, and whether they still run. */
  private async followSimulated(
    revisions: string[],
    followed: string[],
    send: (line: LogLineView) => void,
    signal: AbortSignal,
  ): Promise<FollowEnd> {
    const sent = new Set<string>();
    let first = true;
    while (!signal.aborted) {
      const now = this.clock.nowMs();
      const raw = await this.repo.appById(this.s.app.id);
      const lines: LogLine[] = [];
      for (const id of revisions) {
        const r = await this.repo.revision(this.s.app.id, id);
        if (r) lines.push(...simulatedLines(r, now).filter(this.wanted));
      }
      const fresh = lines
        .sort((x, y) => x.time - y.time)
        .filter((l) => !sent.has(`${l.instance} ${l.time} ${l.text}`));
      for (const l of fresh) sent.add(`${l.instance} ${l.time} ${l.text}`);
      for (const l of first ? fresh.slice(Math.max(0, fresh.length - this.window.tail)) : fresh)
        send(viewOf(l, this.numbers));
      first = false;
      const running = raw ? this.instances(await loadApp(this.repo, raw, now), now) : [];
      if (!followed.some((id) => running.includes(id))) return 'stopped';
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, POLL_MS);
        function done() {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          resolve();
        }
        signal.addEventListener('abort', done, { once: true });
      });
    }
    return 'stopped';
  }
}
