/**
 * The authoritative DNS server (role `dns`): UDP and TCP on FJORD_DNS_PORT, answering for the
 * zones of `ZoneSource` from an in-memory view that follows its change feed, signing online
 * when a zone has a key, reporting counts to `QueryStatsSink` in batches.
 */
import type { AddressInfo, Server } from 'node:net';
import type { Kernel, RoleServer } from '../../../kernel/kernel.js';
import type { QueryStatsSink, ZoneSource } from '../server-contract.js';
import { allowList } from './axfr.js';
import { DnsEngine } from './engine.js';
import { listenTcp } from './listeners.js';
import { Notifier, parseTargets } from './notify.js';
import { ResponseRateLimiter } from './rrl.js';
import { QueryStatsBatcher } from './stats.js';
import { UdpListenerSet } from './udp-per-address.js';
import { ZoneLoader } from './zone-loader.js';

const STATS_FLUSH_MS = 5000;

export interface DnsServer extends RoleServer {
  /** The bound UDP/TCP port (useful with FJORD_DNS_PORT=0), once started. */
  port(): number | null;
  /** Resolves when every zone change reported so far is being served. */
  settled(): Promise<void>;
  flushStats(): Promise<void>;
}

export interface DnsServerOptions {
  /** Wall clock for signature times (validators compare with real time). */
  wallClock?: () => number;
  /** The host's addresses, when bound to a wildcard (default: the interfaces' addresses). */
  localAddresses?: () => string[];
}

export function createDnsServer(
  kernel: Kernel,
  source: ZoneSource,
  sink: QueryStatsSink,
  options: DnsServerOptions = {},
): DnsServer[] {
  const log = kernel.log.child({ role: 'dns' });
  const wall = options.wallClock ?? Date.now;
  const cfg = kernel.config.dns;
  // An exception while answering is a bug: logged with its stack and the question.
  const engine = new DnsEngine(wall, (err, q) =>
    log.error(
      { err, qname: q.labels.join('.'), qtype: q.qtype },
      'dns: unexpected error answering a query (sent SERVFAIL)',
    ),
  );
  const notifier = new Notifier(
    parseTargets(cfg.notify),
    log,
    () => engine.tsigKeys.values(),
    () => engine.nowSeconds(),
  );
  const loader = new ZoneLoader(source, engine, log, wall, (zone) => notifier.notify(zone));
  const stats = new QueryStatsBatcher(sink, () => kernel.clock.now().getTime(), log);
  const deps = {
    engine,
    rrl: new ResponseRateLimiter(cfg.rrlRate, 2, wall),
    stats,
    axfrAllow: allowList(cfg.axfrAllow),
    log,
    metrics: kernel.metrics,
  };
  let udp: UdpListenerSet | null = null;
  let tcp: Server | null = null;

  const server: DnsServer = {
    role: 'dns',
    name: 'dns',
    async start() {
      await loader.start();
      const host = kernel.config.host;
      // With port 0 the TCP listener picks the port and UDP takes the same one; should that be
      // taken for UDP, try another.
      for (let attempt = 0; ; attempt++) {
        tcp = await listenTcp(deps, host, kernel.config.ports.dns);
        // Bound to a wildcard, UDP takes one socket per local address, so answers leave from
        // the address that was asked (udp-per-address.ts).
        const set = new UdpListenerSet(
          deps,
          host,
          (tcp.address() as AddressInfo).port,
          options.localAddresses,
        );
        try {
          await set.start();
          udp = set;
          break;
        } catch (err) {
          set.close();
          const busy = (err as NodeJS.ErrnoException).code === 'EADDRINUSE';
          await new Promise<void>((resolve) => tcp!.close(() => resolve()));
          tcp = null;
          if (!busy || kernel.config.ports.dns !== 0 || attempt >= 5) throw err;
        }
      }
      const port = (tcp.address() as AddressInfo).port;
      stats.start(STATS_FLUSH_MS);
      kernel.registry.addListener({ role: 'dns', protocol: 'dns (udp+tcp)', address: `${host}:${port}` });
      log.info({ port, zones: engine.zones.size }, 'dns: authoritative server listening');
    },
    async stop() {
      loader.stop();
      notifier.close();
      udp?.close();
      udp = null;
      await new Promise<void>((resolve) => (tcp ? tcp.close(() => resolve()) : resolve()));
      tcp = null;
      await stats.stop();
    },
    port: () => (tcp ? (tcp.address() as AddressInfo).port : null),
    settled: () => loader.settled(),
    flushStats: () => stats.flush(),
  };
  return [server];
}
