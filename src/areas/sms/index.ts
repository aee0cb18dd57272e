import type { Kernel, RoleServer } from '../../kernel/kernel.js';
import { unitsOf } from '../../kernel/store/unit-of-work.js';
import { defineArea } from '../wiring.js';
import { smsAdminRoutes } from './admin-routes.js';
import type { SmsDriver } from './drivers/driver.js';
import { SandboxDriver } from './drivers/sandbox.js';
import { SmppDriver } from './drivers/smpp.js';
import { KeywordRepo } from './keyword-repo.js';
import { keywordRoutes } from './keyword-routes.js';
import { SmsKeywords } from './keywords.js';
import { type SmsTables, smsMigrations } from './migrations.js';
import { SmsPipeline } from './pipeline.js';
import { SmsRepo } from './repo.js';
import { SmsReporting } from './reporting.js';
import { smsRoutes } from './routes.js';
import { SenderProfileRepo } from './sender-profile-repo.js';
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
export const smsArea = defineArea({
  name: 'sms',
  optional: ['contacts'],
  migrations: smsMigrations,
  setup(kernel, deps) {
    const { config, clock } = kernel;
    const currency = config.sms.currency;
    const messages = unitsOf(kernel.store, SmsRepo.over);
    const repo = messages.read;
    const profileData = unitsOf(kernel.store, SenderProfileRepo.over);
    const profileRepo = profileData.read;
    const keywordRepo = new KeywordRepo(kernel.store.typed<SmsTables>());
    const pipeline = new SmsPipeline<SmsKeywords>(
      messages,
      profileRepo,
      kernel.jobs,
      kernel.webhooks,
      clock,
      kernel.log.child({ area: 'sms' }),
      config.sms.sharedNumber,
      {
        driver: (sink) => buildDriver(kernel, sink),
        keywords: (p) => new SmsKeywords(keywordRepo, repo, p, kernel.webhooks, clock),
      },
    );
    const { driver, keywords } = pipeline;
    kernel.registry.addBackend({
      area: 'sms',
      name: 'SMSC',
      driver: driver.name,
      simulated: driver.simulated,
      detail: driver.detail,
    });
    const profiles = new SenderProfiles(profileData, clock, currency);
    const contacts: ContactsPort | null = deps.contacts ?? null;
    const service = new SmsService(repo, pipeline, profiles, clock, currency, contacts, kernel.webhooks);
    const reporting = new SmsReporting(repo, profileRepo, clock, currency, async (customerId) =>
      (await kernel.identity.listKeys(customerId)).some(
        (k) => k.key_type === 'service' && k.service === 'sms',
      ),
    );
    // The account's services list shows SMS once the customer has a sender profile or a keyword,
    // with the SMSC driver and whether it is simulated.
    kernel.registry.addServiceProvider(async (customerId) => {
      const [senders, words] = await Promise.all([
        profileRepo.listProfiles(customerId),
        keywordRepo.listKeywords(customerId),
      ]);
      const first = Math.min(...senders.map((p) => p.created_at), ...words.map((k) => k.created_at));
      if (!Number.isFinite(first)) return [];
      const base = kernel.baseUrl();
      return [
        {
          id: `sms-${customerId}`,
          service_type: 'sms',
          name: 'SMS',
          status: senders.some((p) => p.approval_status === 'approved') ? 'active' : 'pending',
          region: null,
          created_at: new Date(first).toISOString(),
          metadata: {
            driver: driver.name,
            simulated: driver.simulated,
            sender_profiles: senders.length,
            keywords: words.length,
            shared_number: config.sms.sharedNumber,
          },
          api: { kind: 'rest', openapi: `${base}/openapi.json`, docs: `${base}/docs`, base_url: base },
        },
      ];
    });
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
});
