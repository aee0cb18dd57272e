import { unitsOf } from '../../kernel/store/unit-of-work.js';
import { defineArea } from '../wiring.js';
import { Delivery } from './delivery.js';
import { type MailDriver, SimulatedMailDriver, SmtpMailDriver } from './drivers/mail.js';
import { SimulatedVoiceDriver } from './drivers/voice.js';
import { inboxRoutes } from './inbox.js';
import { IntelligenceIpReputation } from './ip-intelligence.js';
import { BuiltinIpReputation } from './ip-risk.js';
import { verifyMigrations } from './migrations.js';
import { VerifyRepo } from './repo.js';
import { verifyRoutes } from './routes.js';
import { VerifyService } from './service.js';
import type { VerifySmsPort } from './sms-port.js';

export const verifyArea = defineArea({
  name: 'verify',
  optional: ['sms', 'domain-verification', 'ip'],
  migrations: verifyMigrations,
  setup(kernel, deps) {
    const { config, registry } = kernel;
    const smsService: VerifySmsPort | null = deps.sms ?? null;
    const sms = () => smsService;
    const voice = new SimulatedVoiceDriver(
      kernel.jobs,
      { noAnswer: config.voice.simulatedNoAnswer, busy: config.voice.simulatedBusy },
      () => kernel.clock.nowMs(),
    );
    registry.addBackend({
      area: 'verify',
      name: 'voice calls',
      driver: voice.name,
      simulated: true,
      detail: `no call is placed; the code is read twice into an in-memory log (caller id ${config.voice.callerId})`,
    });
    const mail: MailDriver = config.smtpUrl
      ? new SmtpMailDriver(config.smtpUrl)
      : new SimulatedMailDriver(() => kernel.clock.nowMs());
    registry.addBackend({
      area: 'verify',
      name: 'e-mail',
      driver: mail.name,
      simulated: mail.simulated,
      detail: mail.simulated
        ? 'FJORD_SMTP_URL is unset: e-mail is kept in memory'
        : `SMTP ${new URL(config.smtpUrl!).host}`,
    });
    const units = unitsOf(kernel.store, VerifyRepo.over);
    const repo = units.read;
    const delivery = new Delivery({
      repo,
      units,
      clock: kernel.clock,
      log: kernel.log,
      sms,
      voice,
      mail,
      mailFrom: config.mailFrom,
      callerId: config.voice.callerId,
    });
    // E-mail codes come from a domain the customer has verified for `email`, when there is one.
    const domains = deps['domain-verification'];
    if (domains)
      delivery.senderDomains = {
        emailDomainsOf: (customerId) => domains.verifiedDomains(customerId, 'email'),
      };
    const service = new VerifyService(
      units,
      kernel.clock,
      kernel.limiter,
      delivery,
      sms,
      kernel.log,
      deps.ip ? new IntelligenceIpReputation(deps.ip) : new BuiltinIpReputation(),
      // Typed loosely: the SMS area's configuration block lands with that area.
      (config as { sms?: { currency?: string } }).sms?.currency,
    );
    // The account's services list shows verification once a customer has used it, with the
    // back ends that carry its codes (simulated ones say so).
    registry.addServiceProvider(async (customerId) => {
      const usage = await repo.usage(customerId);
      if (!usage?.first) return [];
      const base = kernel.baseUrl();
      return [
        {
          id: `verify-${customerId}`,
          service_type: 'verify',
          name: 'Code verification',
          status: 'active',
          region: null,
          created_at: new Date(Number(usage.first)).toISOString(),
          metadata: {
            sessions: Number(usage.sessions),
            channels: {
              sms: { via: 'the SMS pipeline (its SMSC driver)' },
              voice: { driver: voice.name, simulated: voice.simulated },
              email: { driver: mail.name, simulated: mail.simulated },
            },
          },
          api: { kind: 'rest', openapi: `${base}/openapi.json`, docs: `${base}/docs`, base_url: base },
        },
      ];
    });
    return {
      service,
      routes: [
        ...verifyRoutes(service),
        ...inboxRoutes(mail instanceof SimulatedMailDriver ? mail : null, voice),
      ],
      // The simulated call log and outbox belong to the state a reset wipes.
      async onReset() {
        voice.clear();
        if (mail instanceof SimulatedMailDriver) mail.outbox.length = 0;
      },
    };
  },
});
