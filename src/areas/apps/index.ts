import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { createResolver } from '../../kernel/net/resolver.js';
import { defineArea } from '../wiring.js';
import { AcmeIssuer, acmeChallenges } from './acme.js';
import { AppDomains } from './domains.js';
import type { AppsDriver } from './drivers/driver.js';
import { PodmanAppsDriver } from './drivers/podman.js';
import { SimulatedAppsDriver } from './drivers/simulated.js';
import { ImagePolicy } from './image-policy.js';
import { AppImages } from './images.js';
import { appsIngress } from './ingress.js';
import { appsMigrations } from './migrations.js';
import { appsRoutes } from './routes.js';
import { AppsService } from './service.js';
import { AppVolumes } from './volumes.js';

export { AppsService } from './service.js';

/** Renews custom domains' certificates before they expire (hourly, on the clock). */
export const RENEW_JOB = 'apps.certificates.renew';

/** Container apps: apps, immutable revisions and instances on the kernel clock, over a driver. */
export const appsArea = defineArea({
  name: 'apps',
  // Uploaded images and volume snapshots live in Fjord's own object storage.
  needs: ['regions', 'storage', 'domain-verification'],
  migrations: appsMigrations,
  async setup(kernel, { regions, storage, 'domain-verification': verification }) {
    const settings = kernel.config.apps;
    // Containers carry this tag, so a start adopts or removes only this install's own.
    const owner = createHash('sha256').update(kernel.config.dataDir).digest('hex').slice(0, 16);
    const driver: AppsDriver =
      settings.driver === 'podman'
        ? new PodmanAppsDriver(owner, kernel.log, join(kernel.config.dataDir, 'apps', 'volumes'), {
            allowPrivateRegistries: settings.imageAllowPrivate,
          })
        : new SimulatedAppsDriver();
    const apps = new AppsService(
      kernel.store,
      kernel.clock,
      kernel.identity,
      kernel.limits,
      kernel.secrets,
      regions,
      driver,
      settings.domain,
      new AppImages(
        kernel.store,
        kernel.clock,
        kernel.identity,
        kernel.limits,
        storage.internalBucket('app-images'),
      ),
      new ImagePolicy({ registries: settings.imageRegistries, allowPrivate: settings.imageAllowPrivate }),
    );
    const volumes = new AppVolumes(
      kernel.store,
      kernel.clock,
      kernel.identity,
      kernel.limits,
      apps,
      driver,
      storage.internalBucket('app-volume-snapshots'),
    );
    const domains = new AppDomains(
      kernel.store,
      kernel.clock,
      kernel.identity,
      kernel.limits,
      kernel.secrets,
      apps,
      verification,
      createResolver(kernel.config.resolver),
      settings.acmeDirectory
        ? new AcmeIssuer(settings.acmeDirectory, settings.acmeCaFile, acmeChallenges(kernel))
        : null,
    );
    kernel.jobs.register(RENEW_JOB, { run: async () => void (await domains.renewDue()) });
    await kernel.jobs.schedule(RENEW_JOB, RENEW_JOB, 3600);
    kernel.registry.addBackend({
      area: 'apps',
      name: 'containers',
      driver: driver.name,
      simulated: driver.simulated,
      detail: driver.simulated
        ? 'no container runs: deploys, health checks and scale to zero follow the clock'
        : `podman with runc; ingress on port ${settings.ingressPort} for *.${settings.domain}`,
    });
    kernel.registry.addServiceProvider(async (customerId) =>
      (await apps.serviceEntries(customerId)).map((a) => ({
        id: a.id,
        service_type: 'container-apps',
        name: a.name,
        status: a.status,
        region: a.region,
        created_at: a.created_at,
        metadata: { url: a.url, driver: driver.name, simulated: driver.simulated },
        api: {
          kind: 'container-apps',
          openapi: `${kernel.baseUrl()}/openapi.json`,
          docs: `${kernel.baseUrl()}/docs`,
          base_url: `${kernel.baseUrl()}/v1/apps/${a.id}`,
        },
      })),
    );
    return {
      service: apps,
      routes: appsRoutes(apps, volumes, domains),
      servers: driver.ensureRunning
        ? [appsIngress(kernel, apps, domains, settings.ingressPort, settings.ingressTlsPort)]
        : [],
    };
  },
});
