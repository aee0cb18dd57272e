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
