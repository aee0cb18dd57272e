/**
 * What running instances use: `podman stats`, parsed. Apart from podman.ts because it only reads
 * the containers the driver keeps, never changes them.
 */
import type { InstanceStats } from './driver.js';
import type { PodmanCli } from './podman-cli.js';

/** The driver's instances by revision (only their container names are read here). */
type Instances = ReadonlyMap<string, readonly { name: string }[]>;

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
