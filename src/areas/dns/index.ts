import { createResolver } from '../../kernel/net/resolver.js';
import { unitsOf } from '../../kernel/store/unit-of-work.js';
import { defineArea } from '../wiring.js';
import { dnsMigrations } from './migrations.js';
import { DnsRepo, TsigKeyRepo } from './repo.js';
import { dnsRoutes } from './routes.js';
import { tsigKeyRoutes } from './routes-tsig-keys.js';
import { createDnsServer } from './server/index.js';
import type { ServedTsigKey } from './server-contract.js';
import { DnsService } from './service.js';
import { TsigKeyService } from './tsig-keys.js';
import { StoreZoneSource } from './zone-source.js';

const CHECK_JOB = 'dns.delegation.check';
const PURGE_JOB = 'dns.stats.purge';
const QUOTA_REVIEW_JOB = 'dns.quota.review';
/** How often paused customers are looked at again (a new month, a larger plan: docs/dns.md). */
export const QUOTA_REVIEW_SECONDS = 300;
/** How often pending zones are checked for their delegation (docs/dns.md). */
export const DELEGATION_CHECK_SECONDS = 300;

export const dnsArea = defineArea({
  name: 'dns',
  migrations: dnsMigrations,
  async setup(kernel) {
    const data = unitsOf(kernel.store, DnsRepo.over);
    const repo = data.read;
    const nameservers = kernel.config.dns.nameservers;
    const tsigKeys: TsigKeyService = new TsigKeyService(
      unitsOf(kernel.store, (db) => new TsigKeyRepo(db)),
      {
        secrets: kernel.secrets,
        clock: kernel.clock,
        limits: kernel.limits,
        log: kernel.log,
        // A key change reloads everything in every DNS process: keys change rarely.
        announce: (): Promise<void> => source.announce('*'),
      },
    );
    const source = new StoreZoneSource(
      repo,
      kernel.store,
      kernel.secrets,
      nameservers,
      kernel.log,
      () => kernel.clock.nowMs(),
      (): Promise<ServedTsigKey[]> => tsigKeys.served(),
    );
    const service = new DnsService(data, source, {
      clock: kernel.clock,
      identity: kernel.identity,
      audit: kernel.audit,
      secrets: kernel.secrets,
      resolver: createResolver(kernel.config.resolver),
      nameservers,
      platformZones: [kernel.config.dyn.zone],
      log: kernel.log,
      limits: kernel.limits,
      enqueueCheck: async (zoneId) => {
        await kernel.jobs.enqueue(CHECK_JOB, { zoneId }, { uniqueKey: `${CHECK_JOB}:${zoneId}` });
      },
    });
    // A zone's own check runs at once after creation; the schedule sweeps every pending zone.
    kernel.jobs.register<{ zoneId?: string }>(CHECK_JOB, {
      run: async (p) => {
        if (p?.zoneId) await service.checkDelegation(p.zoneId);
        else await service.checkPendingZones();
      },
    });
    kernel.jobs.register(PURGE_JOB, { run: async () => void (await service.purgeOldStatistics()) });
    kernel.jobs.register(QUOTA_REVIEW_JOB, { run: async () => void (await service.reviewQueryPauses()) });
    const schedule = async () => {
      await kernel.jobs.schedule(CHECK_JOB, CHECK_JOB, DELEGATION_CHECK_SECONDS);
      await kernel.jobs.schedule(PURGE_JOB, PURGE_JOB, 86400);
      await kernel.jobs.schedule(QUOTA_REVIEW_JOB, QUOTA_REVIEW_JOB, QUOTA_REVIEW_SECONDS);
    };
    await schedule();
    kernel.registry.addServiceProvider(async (customerId) =>
      (await service.listZones(customerId)).zones.map((z) => ({
        id: z.id,
        service_type: 'dns',
        name: z.name,
        status: z.status,
        region: null,
        created_at: z.created_at,
        metadata: {
          record_count: z.record_count,
          dnssec_enabled: z.dnssec_enabled,
          nameservers: nameservers,
        },
        api: {
          kind: 'rest',
          openapi: `${kernel.baseUrl()}/openapi.json`,
          docs: `${kernel.baseUrl()}/docs`,
          base_url: `${kernel.baseUrl()}/v1/dns`,
        },
      })),
    );
    return {
      service,
      routes: [...dnsRoutes(service), ...tsigKeyRoutes(tsigKeys)],
      servers: createDnsServer(kernel, source, service),
      async onReset() {
        await schedule();
        await source.announce('*');
      },
    };
  },
});
