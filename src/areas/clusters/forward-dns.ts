import type { DnsLookup } from '../../kernel/net/resolver.js';
import type { DnsService } from '../dns/service.js';

/** The IPv4 addresses a name resolves to (CNAMEs followed); throws ResolverError when no answer came. */
export interface ForwardDns {
  a(name: string): Promise<string[]>;
}

const MAX_CNAME_HOPS = 8;

/**
 * Forward lookups for PTR checks. A name in one of Fjord's own zones is answered from what Fjord's
 * DNS serves right now — a record added a moment ago counts at once, before any cache or delegation
 * would show it; any other name goes to the recursive resolver (FJORD_RESOLVER or the system's).
 */
export function forwardDns(dns: DnsService | undefined, resolver: DnsLookup): ForwardDns {
  async function servedZone(name: string) {
    if (!dns) return null;
    const labels = name.split('.');
    for (let i = 0; i < labels.length - 1; i++) {
      const zone = await dns.source.loadZone(labels.slice(i).join('.'));
      if (zone) return zone;
    }
    return null;
  }
  return {
    async a(name) {
      let current = name;
      for (let hop = 0; hop <= MAX_CNAME_HOPS; hop++) {
        const zone = await servedZone(current);
        if (!zone) return resolver.a(current);
        // A name that does not exist (no records at or below it) is answered by the wildcard of its
        // closest existing ancestor, as RFC 4592 has it.
        const exists = (n: string) => zone.records.some((r) => r.name === n || r.name.endsWith(`.${n}`));
        let owner = current;
        if (!exists(current)) {
          let encloser = current;
          while (encloser !== zone.apex) {
            encloser = encloser.slice(encloser.indexOf('.') + 1);
            if (exists(encloser)) break;
          }
          owner = `*.${encloser}`;
        }
        const here = zone.records.filter((r) => r.name === owner);
        const addresses = here.flatMap((r) => (r.data.type === 'A' ? [r.data.address] : []));
        if (addresses.length > 0) return addresses;
        const cname = here.find((r) => r.data.type === 'CNAME');
        if (!cname || cname.data.type !== 'CNAME') return [];
        current = cname.data.target.toLowerCase().replace(/\.$/, '');
      }
      return [];
    },
  };
}
