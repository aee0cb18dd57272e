import type { AreaModule, Kernel, RoleServer } from '../../kernel/kernel.js';
import { smsAdminRoutes } from './admin-routes.js';
import type { SmsDriver } from './drivers/driver.js';
import { SandboxDriver } from './drivers/sandbox.js';
import { SmppDriver } from './drivers/smpp.js';
import { keywordRoutes } from './keyword-routes.js';
import { SmsKeywords } from './keywords.js';
import { smsMigrations } from './migrations.js';
import { SmsPipeline } from './pipeline.js';
import { SmsRepo } from './repo.js';
import { SmsReporting } from './reporting.js';
import { smsRoutes } from './routes.js';
import { SenderProfiles } from './sender-profiles.js';
import { type ContactsPort, SmsService } from './service.js';

export type { ContactsPort } from './service.js';
export { SmsService } from './service.js';

function buildDriver(kernel: Kernel, pipeline: SmsPipeline): SmsDriver {
  const c = kernel.config.sms;
  if (c.driver === 'smpp') {
    if (!c.smppUrl) throw new Error('FJORD_SMS_DRIVER=smpp needs FJORD_SMPP_URL');
    return new SmppDriver(pipeline, kernel.log.child({ area: 'sms', driver: 'smpp' }), {
      url: c.smppUrl,
      systemType: c.smppSystemType,
      window: c.smppWindow,
      enquireLinkSeconds: c.smppEnquireLinkSeconds,
    });
  }
  return new SandboxDriver(kernel.jobs, pipeline, {
    deliverySeconds: c.sandboxDeliverySeconds,
    failNumbers: new Set(c.sandboxFailNumbers),
  });
}

/**
 * SMS and SMS keywords (doc 3). Set up after contacts (recipients from contacts and groups,
 * number masking on erasure) and before verify (which sends its codes through `SmsService`).
 */
export const smsArea: AreaModule = {
  name: 'sms',
  migrations: smsMigrations,
  setup(kernel, services) {
    const { config, clock } = kernel;
    const currency = config.sms.currency;
    const repo = new SmsRepo(kernel.store);
    const pipeline = new SmsPipeline(
      repo,
      kernel.jobs,
      kernel.webhooks,
      clock,
      kernel.log.child({ area: 'sms' }),
      config.sms.sharedNumber,
    );
    const driver = buildDriver(kernel, pipeline);
    pipeline.useDriver(driver);
    kernel.registry.addBackend({
      area: 'sms',
      name: 'SMSC',
      driver: driver.name,
      simulated: driver.simulated,
      detail: driver.detail,
    });
    const keywords = new SmsKeywords(repo, pipeline, kernel.webhooks, clock);
    pipeline.useKeywords(keywords);
    const profiles = new SenderProfiles(repo, clock, currency);
    const contacts = (services['contacts'] as ContactsPort | undefined) ?? null;
    const service = new SmsService(repo, pipeline, profiles, clock, currency, contacts);
    const reporting = new SmsReporting(repo, clock, currency, async (customerId) =>
      (await kernel.identity.listKeys(customerId)).some(
        (k) => k.key_type === 'service' && k.service === 'sms',
      ),
    );
    const link: RoleServer = {
      role: 'worker',
      name: `sms ${driver.name} link`,
      start: () => driver.start(),
      stop: () => driver.stop(),
    };
    return {
      service,
      servers: [link],
      routes: [
        ...smsRoutes(service, reporting),
        ...keywordRoutes(keywords),
        ...smsAdminRoutes(profiles, pipeline, () => clock.nowMs()),
      ],
    };
  },
};
