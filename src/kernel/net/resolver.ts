import { Resolver as NodeResolver } from 'node:dns/promises';

/** The resolver could not give an answer (timeout, SERVFAIL, refused): unlike "no such records", try later. */
export class ResolverError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ResolverError';
  }
}

/**
 * Lookups through the configured recursive resolver (FJORD_RESOLVER) or the system's. Names are
 * answered lowercase without the trailing dot. An empty list means the name or the type does not
 * exist (NXDOMAIN or NODATA); a failure to get any answer throws ResolverError.
 */
export interface DnsLookup {
  ns(name: string): Promise<string[]>;
  cname(name: string): Promise<string[]>;
  txt(name: string): Promise<string[][]>;
  a(name: string): Promise<string[]>;
  aaaa(name: string): Promise<string[]>;
  /** Names of an address (PTR, reverse DNS). */
  ptr(address: string): Promise<string[]>;
}

/** Answers meaning "nothing there" rather than "could not ask". */
const EMPTY_CODES = new Set(['ENODATA', 'ENOTFOUND', 'NXDOMAIN', 'ENONAME']);

export function createResolver(
  server: string | null,
  opts: { timeoutMs?: number; tries?: number } = {},
): DnsLookup {
  const resolver = new NodeResolver({ timeout: opts.timeoutMs ?? 3000, tries: opts.tries ?? 2 });
  if (server) resolver.setServers([server]);
  const ask = async <T>(fn: () => Promise<T[]>): Promise<T[]> => {
    try {
      return await fn();
    } catch (err) {
      const code = (err as { code?: string }).code ?? 'EUNKNOWN';
      if (EMPTY_CODES.has(code)) return [];
      throw new ResolverError(code, (err as Error).message);
    }
  };
  const host = (n: string) => n.toLowerCase().replace(/\.$/, '');
  return {
    ns: async (name) => (await ask(() => resolver.resolveNs(name))).map(host),
    cname: async (name) => (await ask(() => resolver.resolveCname(name))).map(host),
    txt: (name) => ask(() => resolver.resolveTxt(name)),
    a: (name) => ask(() => resolver.resolve4(name)),
    aaaa: (name) => ask(() => resolver.resolve6(name)),
    ptr: async (address) => (await ask(() => resolver.reverse(address))).map(host),
  };
}
