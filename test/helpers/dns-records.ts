import type { DnsServer } from '../../src/areas/dns/server/index.js';
import type { DnsService } from '../../src/areas/dns/service.js';
import type { TestFjord } from './fjord.js';

function dnsService(t: TestFjord): DnsService {
  const dns = t.fjord.areas.get('dns')?.service as DnsService | undefined;
  if (!dns) throw new Error('the DNS area is not set up');
  return dns;
}

/** The DNS server of a started Fjord (role `dns`). */
export function dnsServerOf(t: TestFjord): DnsServer {
  const server = t.fjord.areas.get('dns')?.servers?.find((s) => s.role === 'dns') as DnsServer | undefined;
  if (!server) throw new Error('no DNS server');
  return server;
}

/** The addresses the DNS server's view holds at `name` (from the zone source it serves from). */
export async function dnsAddresses(t: TestFjord, name: string, type: 'A' | 'AAAA'): Promise<string[]> {
  const labels = name.toLowerCase().split('.');
  for (let i = 0; i < labels.length - 1; i++) {
    const zone = await dnsService(t).source.loadZone(labels.slice(i).join('.'));
    if (!zone) continue;
    return zone.records
      .filter((r) => r.name === name.toLowerCase() && r.data.type === type)
      .map((r) => (r.data as { address: string }).address)
      .sort();
  }
  return [];
}

/**
 * Waits until the started DNS server's answer for `name`/`type` satisfies `ok` (TXT values are
 * joined per record). Changes reach the server through the store's change notices (LISTEN/NOTIFY
 * on PostgreSQL), so a test that writes through the API waits here rather than assuming the next
 * query already sees the write.
 */
export async function untilServed(
  t: TestFjord,
  name: string,
  type: 'A' | 'AAAA' | 'TXT' | 'NS',
  ok: (values: string[]) => boolean,
): Promise<string[]> {
  const { Resolver } = await import('node:dns/promises');
  const resolver = new Resolver({ timeout: 500, tries: 1 });
  resolver.setServers([`127.0.0.1:${dnsServerOf(t).port()}`]);
  const ask = async (): Promise<string[]> => {
    if (type === 'TXT') return (await resolver.resolveTxt(name)).map((chunks) => chunks.join(''));
    return resolver.resolve(name, type) as Promise<string[]>;
  };
  const deadline = Date.now() + 10_000;
  for (;;) {
    await dnsServerOf(t).settled();
    const values = await ask().catch(() => [] as string[]);
    if (ok(values)) return values;
    if (Date.now() > deadline)
      throw new Error(`${name} ${type}: not served within 10 s (last: ${JSON.stringify(values)})`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
