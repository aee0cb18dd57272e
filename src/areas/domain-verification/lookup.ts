import { Resolver } from 'node:dns/promises';

/** The answers verification needs. Names without a record answer []; a failed lookup throws. */
export interface DnsLookup {
  txt(name: string): Promise<string[]>;
  cname(name: string): Promise<string[]>;
}

export class LookupFailed extends Error {}

/** "Nothing there" answers; anything else (SERVFAIL, timeout, refused) is a failed lookup. */
const EMPTY_ANSWERS = new Set(['ENODATA', 'ENOTFOUND', 'NOTFOUND']);

/**
 * Lookups through the configured resolver (`FJORD_RESOLVER`) or the system's. The lookup is
 * recursive: verification sees what the rest of the internet sees, which for a domain hosted on
 * Fjord's own DNS is what Fjord's server answers.
 */
export class NodeDnsLookup implements DnsLookup {
  private readonly resolver = new Resolver({ timeout: 3000, tries: 2 });

  constructor(server: { host: string; port: number } | null) {
    if (server) {
      const host = server.host.includes(':') ? `[${server.host}]` : server.host;
      this.resolver.setServers([`${host}:${server.port}`]);
    }
  }

  async txt(name: string): Promise<string[]> {
    // A TXT record longer than 255 bytes arrives as several strings: they form one value.
    return (await this.ask(() => this.resolver.resolveTxt(name))).map((chunks) => chunks.join(''));
  }

  cname(name: string): Promise<string[]> {
    return this.ask(() => this.resolver.resolveCname(name));
  }

  private async ask<T>(query: () => Promise<T[]>): Promise<T[]> {
    try {
      return await query();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? '';
      if (EMPTY_ANSWERS.has(code)) return [];
      throw new LookupFailed(`DNS lookup failed (${code || (err as Error).message})`);
    }
  }
}
