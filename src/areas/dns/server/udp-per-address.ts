/**
 * UDP sockets that answer from the address that was asked. A UDP socket bound to a wildcard
 * (0.0.0.0, ::) replies from whatever source address the kernel's routing picks, so on a host
 * with several addresses a resolver that asked the second one gets the answer from the first
 * and drops it. Node has no IP_PKTINFO, so when the configured host is a wildcard the server
 * binds one socket per local address instead (as Knot and NSD do with `ip-freebind`/per-address
 * sockets) and looks at the host's addresses again every few seconds, binding new ones and
 * closing the ones that went away.
 */
import type { Socket } from 'node:dgram';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { type ListenerDeps, listenUdp } from './listeners.js';

/** How often the host's addresses are looked at again (Node has no address-change events). */
export const ADDRESS_REFRESH_MS = 5000;

/** The host's addresses a wildcard bind covers: IPv4 for 0.0.0.0, both families for ::. */
export function localAddresses(host: string): string[] {
  const out: string[] = [];
  for (const [name, list] of Object.entries(networkInterfaces())) {
    for (const a of list ?? []) {
      if (a.family === 'IPv4') out.push(a.address);
      else if (host === '::') out.push(a.scopeid ? `${a.address}%${name}` : a.address);
    }
  }
  return out;
}

export function isWildcard(host: string): boolean {
  return host === '0.0.0.0' || host === '::';
}

export class UdpListenerSet {
  private readonly sockets = new Map<string, Socket>();
  private timer: NodeJS.Timeout | null = null;
  private refreshing: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: ListenerDeps,
    private readonly host: string,
    private readonly port: number,
    private readonly addresses: () => string[] = () => localAddresses(host),
  ) {}

  /** Binds the host's socket, or one per local address for a wildcard; throws if none can be bound. */
  async start(): Promise<void> {
    if (!isWildcard(this.host)) {
      this.sockets.set(this.host, await listenUdp(this.deps, this.host, this.port));
      return;
    }
    await this.refresh(true);
    this.timer = setInterval(() => void this.refresh(false), ADDRESS_REFRESH_MS);
    this.timer.unref();
  }

  /** The addresses answered on now. */
  bound(): string[] {
    return [...this.sockets.keys()];
  }

  /** Binds sockets for new addresses and closes those of addresses that are gone. */
  refresh(strict = false): Promise<void> {
    this.refreshing = this.refreshing.then(async () => {
      const wanted = new Set(this.addresses().filter((a) => isIP(a.replace(/%.*$/, '')) !== 0));
      for (const [address, socket] of this.sockets) {
        if (wanted.has(address)) continue;
        socket.close();
        this.sockets.delete(address);
        this.deps.log.info({ address }, 'dns: address gone, UDP socket closed');
      }
      for (const address of wanted) {
        if (this.sockets.has(address)) continue;
        try {
          this.sockets.set(address, await listenUdp(this.deps, address, this.port));
        } catch (err) {
          // At start the port must be ours everywhere; a later address may be unusable (tentative IPv6).
          if (strict) throw err;
          this.deps.log.warn({ err, address }, 'dns: could not bind a UDP socket to a new address');
        }
      }
    });
    return this.refreshing;
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    for (const s of this.sockets.values()) s.close();
    this.sockets.clear();
  }
}
