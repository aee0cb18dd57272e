import { isIP } from 'node:net';
import type { Logger } from 'pino';
import type { RateLimiter } from '../../kernel/limits/rate-limiter.js';
import { normaliseDomain } from '../../kernel/net/domain-name.js';
import type { DynService } from './service.js';

/** DynDNS2 allows several hostnames per request; more than this answers `numhost`. */
export const MAX_HOSTS_PER_REQUEST = 20;

export interface NicUpdateRequest {
  authorization: string | undefined;
  userAgent: string | undefined;
  query: Record<string, unknown>;
  /** The TCP peer's address: the default `myip`. */
  clientIp: string;
}

export interface NicUpdateAnswer {
  status: 200 | 401;
  body: string;
  headers: Record<string, string>;
}

const BADAUTH: NicUpdateAnswer = {
  status: 401,
  body: 'badauth',
  headers: { 'www-authenticate': 'Basic realm="Fjord Dynamic DNS", charset="UTF-8"' },
};
const once = (body: string): NicUpdateAnswer => ({ status: 200, body, headers: {} });

/**
 * The DynDNS2 update protocol (`/nic/update`, as dyn.com defined it and ddclient, inadyn and
 * routers speak it): Basic auth with a router token or updater credential, one answer line per
 * hostname. Nothing here reads the Host header, so clients that drop the port (inadyn) work.
 */
export class NicUpdateHandler {
  constructor(
    private readonly dyn: DynService,
    private readonly limiter: RateLimiter,
    private readonly log: Logger,
  ) {}

  async handle(req: NicUpdateRequest): Promise<NicUpdateAnswer> {
    try {
      return await this.handleUnsafe(req);
    } catch (err) {
      this.log.error({ err }, 'dyndns update failed');
      return once('911');
    }
  }

  private async handleUnsafe(req: NicUpdateRequest): Promise<NicUpdateAnswer> {
    const basic = parseBasic(req.authorization);
    if (!basic) return BADAUTH;
    if (!req.userAgent?.trim()) return once('badagent');
    const credential = await this.dyn.authenticateSource(basic.username, basic.password);
    // Exactly one source may update a hostname: every other credential is refused like a wrong password.
    const hostname = credential ? await this.dyn.hostnameOfSource(credential) : null;
    if (!credential || !hostname) return BADAUTH;
    // Counted as soon as the credential is known, before anything in the request can fail, so
    // malformed requests in a loop are throttled like good ones.
    const burst = await this.limiter.consume(['dyn.update'], credential.id);

    const hosts = paramValues(req.query['hostname'])
      .flatMap((h) => h.split(','))
      .map((h) => h.trim())
      .filter((h) => h !== '');
    if (hosts.length === 0) return once('notfqdn');
    if (hosts.length > MAX_HOSTS_PER_REQUEST) return once('numhost');

    const addresses = requestedAddresses(req);
    const offline = paramValues(req.query['offline']).some((v) => /^(yes|true|1|on)$/i.test(v));
    const shown = addresses.ipv4 ?? addresses.ipv6 ?? '';
    const lines: string[] = [];
    for (const host of hosts) {
      const name = normaliseDomain(host);
      if (!burst.allowed) lines.push('abuse');
      else if (!name) lines.push('notfqdn');
      else if (name !== hostname.hostname) lines.push('nohost');
      else {
        const result = await this.dyn.update(
          credential,
          { ...addresses, offline },
          {
            clientIp: req.clientIp,
            userAgent: req.userAgent ?? null,
          },
        );
        // A switch of the active source can land between authentication and the update.
        if (result === 'badauth') return BADAUTH;
        lines.push(result === 'abuse' ? 'abuse' : `${result} ${shown}`);
      }
    }
    return once(lines.join('\n'));
  }
}

function parseBasic(header: string | undefined): { username: string; password: string } | null {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!m) return null;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return null;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/**
 * `myip` may carry one address or an IPv4 and an IPv6 address separated by a comma; `myipv6`
 * is the form some routers send. An absent or unusable `myip` means the client's own address.
 * Addresses are compared and stored in canonical form; an IPv4-mapped IPv6 address is IPv4.
 */
function requestedAddresses(req: NicUpdateRequest): { ipv4: string | null; ipv6: string | null } {
  const given = [req.query['myip'], req.query['myipv6']].flatMap(paramValues).flatMap((v) => v.split(','));
  let ipv4: string | null = null;
  let ipv6: string | null = null;
  for (const raw of given) {
    const ip = canonicalIp(raw.trim());
    if (ip?.family === 4 && !ipv4) ipv4 = ip.address;
    else if (ip?.family === 6 && !ipv6) ipv6 = ip.address;
  }
  if (!ipv4 && !ipv6) {
    const client = canonicalIp(req.clientIp);
    if (client?.family === 4) ipv4 = client.address;
    else if (client?.family === 6) ipv6 = client.address;
  }
  return { ipv4, ipv6 };
}

/** A repeated query parameter arrives as an array: every value counts. */
export function paramValues(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** `2001:DB8:0:0::1` → `2001:db8::1`; `::ffff:192.0.2.7` → IPv4 `192.0.2.7`; null when not an address. */
export function canonicalIp(raw: string): { family: 4 | 6; address: string } | null {
  if (isIP(raw) === 4)
    return {
      family: 4,
      address: raw
        .split('.')
        .map((o) => String(Number(o)))
        .join('.'),
    };
  // A zone id (`fe80::1%eth0`) names an interface of the sender, not an address DNS can publish;
  // Node's isIP accepts it, the URL parser does not.
  if (isIP(raw) !== 6 || raw.includes('%')) return null;
  const address = new URL(`http://[${raw}]`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(address);
  if (mapped) {
    const hi = Number.parseInt(mapped[1]!, 16);
    const lo = Number.parseInt(mapped[2]!, 16);
    return { family: 4, address: `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}` };
  }
  return { family: 6, address };
}
