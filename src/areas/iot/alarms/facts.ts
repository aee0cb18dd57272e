import type { Kysely } from 'kysely';
import type { Store } from '../../../kernel/store/store.js';
import type { AlarmFacts, Severity } from '../insights.js';
import type { IotTables } from '../migrations.js';
import type { Alarms } from './alarms.js';

/** What device health, usage and statistics need to know of alarms, rules and notifications. */
export function alarmFacts(store: Store, alarms: Alarms): AlarmFacts {
  const db = store.typed<IotTables>() as Kysely<IotTables>;
  return {
    openSeverities: async (devicePk) => (await alarms.repo.openSeverities(devicePk)) as Severity[],
    async counts(customerId, monthStart) {
      const summary = await alarms.summary(customerId);
      const rules = await alarms.repo.rules(customerId);
      const sent = await db
        .selectFrom('iot_deliveries')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('customer_id', '=', customerId)
        .where('status', '!=', 'suppressed')
        .where('created_at', '>=', monthStart)
        .executeTakeFirst();
      return {
        active: summary.by_status.active,
        acknowledged: summary.by_status.acknowledged,
        rules: rules.length,
        rules_enabled: rules.filter((r) => r.enabled === 1).length,
        notifications_this_month: Number(sent?.n ?? 0),
      };
    },
  };
}
