import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { inCidr, type ParsedIp, parseIp } from '../address.js';

export const LIST_FLAGS = ['tor', 'vpn', 'proxy', 'botnet'] as const;
type ListFlag = (typeof LIST_FLAGS)[number];

/**
 * Flags from lists the operator keeps in FJORD_IP_DATA_DIR: `tor.txt`, `vpn.txt`, `proxy.txt`,
 * `botnet.txt`, one address or CIDR range per line, `#` starting a comment. Read again when a
 * file changes (checked at most once a minute). Without a list, its flag comes from reports only
 * (and `tor` is then always false: Fjord never invents a flag).
 */
export class OperatorLists {
  private lists = new Map<ListFlag, { stamp: number; exact: Set<string>; ranges: string[] }>();
  private checkedAt = 0;

  constructor(
    private readonly dataDir: string | null,
    private readonly now: () => number = Date.now,
  ) {}

  async flagsOf(ip: ParsedIp): Promise<Record<ListFlag, boolean>> {
    await this.refresh();
    const out = { tor: false, vpn: false, proxy: false, botnet: false };
    for (const [flag, list] of this.lists)
      out[flag] = list.exact.has(ip.ip) || list.ranges.some((r) => inCidr(ip, r));
    return out;
  }

  private async refresh() {
    if (!this.dataDir || this.now() - this.checkedAt < 60_000) return;
    this.checkedAt = this.now();
    for (const flag of LIST_FLAGS) {
      const path = join(this.dataDir, `${flag}.txt`);
      const stamp = await stat(path).then(
        (s) => s.mtimeMs,
        () => 0,
      );
      if (stamp === 0) {
        this.lists.delete(flag);
        continue;
      }
      if (this.lists.get(flag)?.stamp === stamp) continue;
      const exact = new Set<string>();
      const ranges: string[] = [];
      for (const raw of (await readFile(path, 'utf8')).split('\n')) {
        const line = raw.replace(/#.*/, '').trim();
        if (!line) continue;
        if (line.includes('/')) ranges.push(line);
        else {
          const p = parseIp(line);
          if (p) exact.add(p.ip);
        }
      }
      this.lists.set(flag, { stamp, exact, ranges });
    }
  }
}
