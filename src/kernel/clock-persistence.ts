import type { AdjustableClock } from './clock.js';
import type { KernelTables } from './store/kernel-tables.js';
import type { Store } from './store/store.js';

const KEY = 'clock_offset_ms';
const CHANNEL = 'fjord_clock';

/**
 * Keeps the emulator clock's offset in the store, so a restart does not move the clock back and
 * every process of a scaled-out emulator reads the same time.
 */
export class ClockPersistence {
  private unsubscribe: (() => void) | null = null;
  constructor(
    private readonly store: Store,
    private readonly clock: AdjustableClock,
  ) {}

  async load(): Promise<void> {
    const row = await this.store
      .typed<KernelTables>()
      .selectFrom('kernel_settings')
      .select('value')
      .where('key', '=', KEY)
      .executeTakeFirst();
    if (row) this.clock.adoptOffsetMs(Number(row.value));
    this.unsubscribe ??= this.store.subscribe(CHANNEL, (payload) =>
      this.clock.adoptOffsetMs(Number(payload)),
    );
  }

  async save(): Promise<void> {
    const value = String(this.clock.offsetMilliseconds);
    await this.store
      .typed<KernelTables>()
      .insertInto('kernel_settings')
      .values({ key: KEY, value })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
      .execute();
    await this.store.publish(CHANNEL, value);
  }

  close(): void {
    this.unsubscribe?.();
  }
}
