import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { AREAS } from '../areas/index.js';
import { serviceOf } from '../areas/wiring.js';
import { type Config, listenerUrl, type Role } from '../config/config.js';
import { AppError } from '../kernel/errors.js';
import { buildHttpApp } from '../kernel/http/app.js';
import { IdempotencyStore } from '../kernel/http/idempotency.js';
import { HttpMetrics } from '../kernel/http/metrics.js';
import { describeAccess } from '../kernel/http/openapi.js';
import type { AnyRoute } from '../kernel/http/route.js';
import { deepFreeze } from '../kernel/immutable.js';
import type { Kernel } from '../kernel/kernel.js';
import { createLogger } from '../kernel/log.js';
import { truncateAll } from '../kernel/store/dialect.js';
import { kernelMigrations } from '../kernel/store/kernel-migrations.js';
import { openStore, type Store } from '../kernel/store/store.js';
import {
  type AreaInstance,
  type AreaModule,
  absentOptionalNeeds,
  orderAreas,
  PlugBoard,
} from '../kernel/wiring.js';
import { adminLimitRoutes } from './admin-limit-routes.js';
import { adminRoutes } from './admin-routes.js';
import { consoleOidcRoutes } from './console/oidc-routes.js';
import { consoleSessionRoutes } from './console/session-routes.js';
import { consoleStaticRoutes } from './console/static-routes.js';
import { attachConsoleTerminal } from './console/terminal.js';
import { consoleTerminalRoute } from './console/terminal-route.js';
import { consoleUploadRoute } from './console/upload-route.js';
import { ensureDevCredentials } from './dev-credentials.js';
import { fixDataDirModes, securePermissions } from './files.js';
import { buildKernel } from './kernel-factory.js';
import { referenceRoutes } from './reference-routes.js';
import { sdkSample } from './sdk-samples.js';
import { applySeed, readSeedFile, type Seed } from './seed.js';
import { swaggerUiRoutes } from './swagger-ui-routes.js';
import { systemRoutes } from './system-routes.js';

export interface FjordOptions {
  config: Config;
  log?: Logger;
  store?: Store;
  fetchImpl?: typeof fetch;
  areas?: AreaModule[];
}

export const ALL_MIGRATIONS = (areas: AreaModule[] = AREAS) =>
  Object.assign({}, kernelMigrations, ...areas.map((a) => a.migrations ?? {}));

/**
 * One Fjord process: the kernel, every area, the API app, and whichever roles it is asked to run.
 * Built once; tests build as many as they like, each on its own store.
 */
export class Fjord {
  readonly routes: AnyRoute[];
  private readonly startedRoles = new Set<Role>();
  /** Roles for which some area's server started: a role without one opens nothing. */
  readonly serversStarted = new Set<Role>();
  private wantedRoles: Role[] = [];
  devCredentialsPath: string | null = null;

  private constructor(
    readonly kernel: Kernel & {
      redis: { quit(): Promise<unknown> } | null;
      setBoundApiPort(p: number): void;
    },
    readonly areas: Map<string, AreaInstance>,
    readonly http: FastifyInstance,
    routes: AnyRoute[],
  ) {
    this.routes = routes;
  }

  static async create(opts: FjordOptions): Promise<Fjord> {
    const { config } = opts;
    const log = opts.log ?? createLogger(config.logLevel);
    // Owner-only files and folders from here on; older entries of the data dir are fixed.
    securePermissions();
    fixDataDirModes(config.dataDir, (path, from, to) =>
      log.warn(
        { path, from: from.toString(8), to: to.toString(8) },
        'data dir entry was readable by others; fixed',
      ),
    );
    const store = opts.store ?? (await openStore(config));
    // Ordered first: a missing or circular need stops the start before anything is written.
    const areaModules = orderAreas(opts.areas ?? AREAS);
    await store.migrate(ALL_MIGRATIONS(areaModules));
    const kernel = buildKernel({ config, store, log, fetchImpl: opts.fetchImpl });
    await kernel.clockStore.load();
    if (kernel.clock.offsetMilliseconds !== 0 && !config.emulator) {
      // An emulator run advanced the clock on this data dir; every time Fjord hands out (token
      // and presigned-URL expiry included) is shifted by it until an emulator reset.
      log.warn(
        { clock_offset_seconds: kernel.clock.offsetSeconds },
        'the stored emulator clock offset applies outside emulator mode; start with FJORD_EMULATOR=true and POST /admin/v1/reset to clear it',
      );
    }

    const areas = new Map<string, AreaInstance>();
    const services = new Map<string, unknown>();
    const plugs = new PlugBoard();
    for (const mod of areaModules) {
      const deps: Record<string, unknown> = {};
      for (const name of [...mod.needs, ...mod.optional])
        if (services.has(name)) deps[name] = services.get(name);
      kernel.registry.beginAreaSetup(mod.name);
      const instance = await mod.setup(kernel, deps, plugs);
      kernel.registry.beginAreaSetup(null);
      areas.set(mod.name, instance);
      if (instance.service) services.set(mod.name, instance.service);
    }
    for (const instance of areas.values())
      for (const [point, impl] of Object.entries(instance.plugs ?? {})) plugs.plug(point, impl);
    plugs.seal();
    for (const absent of absentOptionalNeeds(areaModules)) kernel.registry.addAbsentNeed(absent);

    const idempotency = new IdempotencyStore(store, kernel.clock, kernel.secrets);
    kernel.jobs.register('kernel.idempotency.purge', {
      run: async () => void (await idempotency.purgeExpired()),
    });
    await kernel.jobs.schedule('kernel.idempotency.purge', 'kernel.idempotency.purge', 3600);

    const metrics = new HttpMetrics();
    let fjord: Fjord;
    const routes: AnyRoute[] = [
      ...[...areas.values()].flatMap((a) => a.routes),
      ...adminRoutes(kernel, { reset: () => fjord.reset() }),
      ...adminLimitRoutes(kernel),
    ];
    routes.push(
      ...systemRoutes(
        kernel,
        metrics,
        { rolesUp: () => fjord.rolesUp(), roles: () => [...fjord.startedRoles] },
        () => fjord.openapi(),
      ),
      ...referenceRoutes(() => kernel.baseUrl()),
      ...swaggerUiRoutes(() => fjord.openapi()),
      ...consoleSessionRoutes(kernel),
      ...consoleOidcRoutes(kernel),
      consoleUploadRoute(() => serviceOf(areas, 'storage')?.endpoint() ?? null),
      consoleTerminalRoute(),
      ...consoleStaticRoutes(),
    );
    const http = await buildHttpApp(kernel, routes, metrics, idempotency);
    attachConsoleTerminal(http.server, kernel, () => serviceOf(areas, 'vps'));
    fjord = new Fjord(kernel, areas, http, routes);
    await http.ready();
    if (config.devCredentials) fjord.devCredentialsPath = await ensureDevCredentials(kernel);
    await fjord.seed();
    return fjord;
  }

  /** The document for the bound address: the routes never change once built, so it is made once. */
  private openapiCache: { baseUrl: string; doc: Record<string, unknown> } | null = null;

  /** The OpenAPI 3.1 document, with each operation's accepted credentials spelled out. */
  openapi(): Record<string, unknown> {
    const baseUrl = this.kernel.baseUrl();
    if (this.openapiCache?.baseUrl !== baseUrl)
      this.openapiCache = { baseUrl, doc: deepFreeze(this.buildOpenapi()) };
    return this.openapiCache.doc;
  }

  private buildOpenapi(): Record<string, unknown> {
    // biome-ignore lint/suspicious/noExplicitAny: the generated document is plain JSON
    const doc = structuredClone(this.http.swagger()) as any;
    doc.servers = [{ url: this.kernel.baseUrl() }]; // the bound address (FJORD_API_PORT=0)
    const byOperation = new Map(this.routes.map((r) => [r.operationId, r]));
    for (const [url, path] of Object.entries(doc.paths ?? {}) as [
      string,
      Record<string, Record<string, unknown>>,
    ][]) {
      for (const [method, op] of Object.entries(path)) {
        const route = byOperation.get(op['operationId'] as string);
        if (!route) continue;
        op['x-fjord-access'] = describeAccess(route.access);
        op['x-codeSamples'] = [
          sdkSample(method, url, op as Parameters<typeof sdkSample>[2], route.access.kind),
        ];
      }
    }
    return doc;
  }

  async start(roles: Role[]): Promise<void> {
    this.wantedRoles = roles;
    const { config } = this.kernel;
    for (const role of roles) {
      if (role === 'api') {
        await this.http.listen({ host: config.host, port: config.ports.api });
        const address = this.http.server.address();
        const port = typeof address === 'object' && address ? address.port : config.ports.api;
        this.kernel.setBoundApiPort(port);
        // With FJORD_API_PORT=0 the address is known only now: rewrite the file's api_url.
        if (this.devCredentialsPath) await ensureDevCredentials(this.kernel);
        this.kernel.registry.addListener({
          role: 'api',
          protocol: config.tls ? 'https' : 'http',
          address: listenerUrl(config, port),
        });
      } else if (role === 'worker') {
        this.kernel.jobs.start();
      }
      for (const area of this.areas.values()) {
        for (const server of area.servers ?? []) {
          if (server.role !== role) continue;
          await server.start();
          this.serversStarted.add(role);
          for (const l of server.listeners?.() ?? []) this.kernel.registry.addListener({ role, ...l });
        }
      }
      this.startedRoles.add(role);
    }
    for (const area of this.areas.values()) {
      for (const server of area.servers ?? []) if (roles.includes(server.role)) server.afterStart?.();
    }
  }

  rolesUp(): boolean {
    return this.wantedRoles.every((r) => this.startedRoles.has(r));
  }

  /** Emulator reset: every table emptied, caches dropped, development credentials restored. */
  async reset(): Promise<void> {
    // Read the seed before erasing anything: a seed edited into an invalid one refuses the reset
    // and leaves the state as it was.
    const seed = this.readSeed();
    await truncateAll(this.kernel.store);
    this.kernel.identity.forgetCachedCredentials();
    // Nothing dated by the emulator clock is left: back to real time, so a later run without
    // emulator mode on this data dir does not inherit an offset.
    await this.kernel.clockStore.resetToZero();
    for (const area of this.areas.values()) await area.onReset?.();
    await this.kernel.jobs.schedule('kernel.idempotency.purge', 'kernel.idempotency.purge', 3600);
    if (this.kernel.config.devCredentials) await ensureDevCredentials(this.kernel);
    await this.seed(seed);
  }

  /** FJORD_SEED_FILE, read afresh each time so a reset picks up an edited seed; checked whole. */
  private readSeed(): Seed | null {
    const path = this.kernel.config.seedFile;
    if (!path) return null;
    try {
      return readSeedFile(path);
    } catch (err) {
      throw new AppError('conflict', 'invalid_seed', (err as Error).message);
    }
  }

  /** Applies the seed (see seed.ts): at every start and after every reset. */
  private async seed(seed: Seed | null = this.readSeed()): Promise<void> {
    if (!seed) return;
    const path = this.kernel.config.seedFile;
    const account = serviceOf(this.areas, 'account');
    if (!account) throw new Error('FJORD_SEED_FILE needs the account area');
    try {
      await applySeed(this.kernel, account, seed);
    } catch (err) {
      if (err instanceof AppError) throw new Error(`FJORD_SEED_FILE ${path}: ${err.message}`, { cause: err });
      throw err;
    }
  }

  async stop(): Promise<void> {
    await this.kernel.jobs.stop();
    this.kernel.clockStore.close();
    for (const area of this.areas.values()) {
      for (const server of area.servers ?? []) await server.stop().catch(() => {});
    }
    await this.http.close();
    await this.kernel.redis?.quit().catch(() => {});
    await this.kernel.store.close();
  }
}
