import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createSecureContext } from 'node:tls';
import type { Kernel, RoleServer } from '../../kernel/kernel.js';
import type { AppDomains } from './domains.js';
import { AppAtCapacity } from './drivers/driver.js';
import type { AppsService } from './service.js';

/** Real time between sweeps that stop instances the clock says should no longer run. */
const SWEEP_MS = 1000;

/**
 * The apps ingress (role `api`, drivers that run containers): routes by `Host` to the serving
 * revision of `<label>.<apps domain>`, cold-starting an instance when none runs and holding the
 * request until it is healthy. At start it adopts the containers that should still run and
 * removes the others, then sweeps idle ones on the clock.
 */
export function appsIngress(
  kernel: Kernel,
  apps: AppsService,
  domains: AppDomains,
  port: number,
  tlsPort: number,
): RoleServer {
  const driver = apps.driver;
  let timer: NodeJS.Timeout | null = null;
  let sweeping = false;
  const plain = (res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers });
    res.end(`${text}\n`);
  };
  const handle = async (req: IncomingMessage, res: ServerResponse, proto: 'http' | 'https') => {
    // ACME HTTP-01 challenges of custom domains' certificates are answered here, for any host.
    const token = /^\/\.well-known\/acme-challenge\/([A-Za-z0-9_-]+)$/.exec(req.url ?? '')?.[1];
    const answer = token && domains.acme ? await domains.acme.challenges.get(token) : null;
    if (answer) {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(answer);
      return;
    }
    const host = (req.headers.host ?? '').toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
    const suffix = `.${apps.domain}`;
    // An app's own host, or an active custom domain of it.
    const label = host.endsWith(suffix)
      ? host.slice(0, -suffix.length)
      : ((await domains.labelFor(host)) ?? '');
    if (!label || label.includes('.')) return plain(res, 404, 'No app at this host.');
    const routed = await apps.runtime.route(label);
    if ('refused' in routed) {
      if (routed.refused === 'not_found') return plain(res, 404, 'No app at this host.');
      if (routed.refused === 'suspended')
        return plain(res, 503, 'This app is suspended.', { 'retry-after': '60' });
      return plain(res, 503, 'This app has no healthy revision yet.', { 'retry-after': '5' });
    }
    let target: { host: string; port: number; release(): void };
    try {
      target = await driver.acquire!(routed.spec);
    } catch (err) {
      if (err instanceof AppAtCapacity)
        return plain(res, 503, 'Every instance of this app is busy; try again shortly.', {
          'retry-after': '1',
        });
      kernel.log.warn({ err, host }, 'apps ingress: cold start failed');
      return plain(res, 503, 'The app did not start.', { 'retry-after': '5' });
    }
    const started = performance.now();
    const appId = routed.spec.appId;
    res.once('close', () => {
      target.release();
      apps.metrics.record(
        appId,
        Math.floor(kernel.clock.nowMs() / 60_000),
        res.statusCode,
        performance.now() - started,
      );
    });
    const upstream = request(
      {
        host: target.host,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: {
          ...req.headers,
          'x-forwarded-host': req.headers.host ?? host,
          'x-forwarded-proto': proto,
          'x-forwarded-for': req.socket.remoteAddress ?? '',
        },
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) plain(res, 502, 'The app did not answer.');
      else res.destroy();
    });
    req.pipe(upstream);
  };
  const serve = (proto: 'http' | 'https') => (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res, proto).catch((err) => {
      kernel.log.error({ err }, 'apps ingress: request failed');
      if (!res.headersSent) plain(res, 502, 'The app did not answer.');
    });
  };
  const server = createServer(serve('http'));
  // HTTPS for custom domains: the certificate is picked by SNI from the domain's issued one.
  const tlsServer = createTlsServer(
    {
      SNICallback: (name, cb) => {
        domains
          .certificateFor(name.toLowerCase())
          .then((c) => cb(null, c ? createSecureContext({ cert: c.cert, key: c.key }) : undefined))
          .catch((err: Error) => cb(err, undefined));
      },
    },
    serve('https'),
  );
  const listen = (s: Server, p: number, protocol: string) =>
    new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(p, kernel.config.host, () => {
        const address = s.address() as AddressInfo;
        kernel.registry.addListener({ role: 'api', protocol, address: `${address.address}:${address.port}` });
        resolve();
      });
    });
  return {
    role: 'api',
    name: 'apps-ingress',
    async start() {
      const interrupted = await apps.runtime.failInterruptedDeploys();
      if (interrupted)
        kernel.log.warn({ interrupted }, 'apps: deploys interrupted by a restart marked failed');
      const kept = await driver.adopt?.(await apps.runtime.wantedRevisions());
      if (kept) kernel.log.info(kept, 'apps: containers of an earlier run adopted or removed');
      await listen(server, port, 'http (apps ingress)');
      await listen(tlsServer, tlsPort, 'https (apps ingress)');
      timer = setInterval(() => {
        if (sweeping) return;
        sweeping = true;
        apps.runtime
          .sweep()
          .catch((err) => kernel.log.warn({ err }, 'apps: sweep failed'))
          .finally(() => {
            sweeping = false;
          });
      }, SWEEP_MS);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      for (const s of [server, tlsServer]) {
        s.closeAllConnections();
        await new Promise<void>((resolve) => s.close(() => resolve()));
      }
      await driver.close?.();
    },
  };
}
