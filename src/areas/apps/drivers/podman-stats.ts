/**
 * What running instances wrote and use: `podman logs` and `podman stats`, parsed. Apart from
 * podman.ts because they only read the containers the driver keeps, never change them.
 */
import type { InstanceStats, LogLine } from './driver.js';
import type { PodmanCli } from './podman-cli.js';

/** The driver's instances by revision (only their container names are read here). */
type Instances = ReadonlyMap<string, readonly { name: string }[]>;

export async function podmanLogs(
  cli: PodmanCli,
  running: Instances,
  revisionIds: string[],
  lines: number,
): Promise<LogLine[]> {
  const out: LogLine[] = [];
  for (const rev of revisionIds) {
    for (const instance of running.get(rev) ?? []) {
      const both = await cli
        .runBoth(['logs', '--timestamps', '--tail', String(lines), instance.name])
        .catch(() => null);
      if (!both) continue;
      for (const [stream, text] of [
        ['stdout', both.stdout],
        ['stderr', both.stderr],
      ] as const) {
        for (const line of text.split('\n')) {
          if (!line) continue;
          const space = line.indexOf(' ');
          const time = Date.parse(line.slice(0, space));
          out.push({
            time: Number.isNaN(time) ? 0 : time,
            revisionId: rev,
            stream,
            text: Number.isNaN(time) ? line : line.slice(space + 1),
          });
        }
      }
    }
  }
  return out.sort((x, y) => x.time - y.time).slice(-lines);
}

export async function podmanStats(
  cli: PodmanCli,
  running: Instances,
  revisionIds: string[],
): Promise<InstanceStats[]> {
  const wanted = revisionIds.flatMap((rev) =>
    (running.get(rev) ?? []).map((i) => ({ name: i.name, revisionId: rev })),
  );
  if (!wanted.length) return [];
  const out = await cli
    .run(['stats', '--no-stream', '--format', 'json', ...wanted.map((w) => w.name)])
    .catch(() => '[]');
  const rows = JSON.parse(out.trim() || '[]') as {
    name: string;
    cpu_percent?: string;
    mem_usage?: string;
  }[];
  return wanted.map((w) => {
    const row = rows.find((r) => r.name === w.name);
    const cpu = row?.cpu_percent ? Number.parseFloat(row.cpu_percent) : Number.NaN;
    return {
      instance: w.name,
      revisionId: w.revisionId,
      cpuPercent: Number.isFinite(cpu) ? cpu : null,
      memoryBytes: row?.mem_usage ? bytesOf(row.mem_usage.split('/')[0]!.trim()) : null,
    };
  });
}

/** podman's human sizes (`12.5MB`, `980kB`, `1.2GiB`) in bytes; null when unreadable. */
function bytesOf(text: string): number | null {
  const m = /^([\d.]+)\s*([kKMGT]?i?B)$/.exec(text);
  if (!m) return null;
  const unit = m[2]!.toUpperCase();
  const base = unit.includes('I') ? 1024 : 1000;
  const power = { B: 0, K: 1, M: 2, G: 3, T: 4 }[unit[0] as 'B' | 'K' | 'M' | 'G' | 'T'] ?? 0;
  return Math.round(Number(m[1]) * base ** power);
}
