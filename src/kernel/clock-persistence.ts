import type { Kysely } from 'kysely';
import type { AdjustableClock } from './clock.js';
import type { KernelTables } from './store/kernel-tables.js';
import { RESYNC, type Store } from './store/store.js';

const KEY = 'clock_offset_ms';
const CHANNEL = 'fjord_clock';
/** The notice that tells every process the offset went back to zero (an emulator reset). */
const ZERO = 'zero';

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
    this.unsubscribe ??= this.store.subscribe(CHANNEL, (payload) => {
      // An empty notice means notices may have been missed (the connection dropped): reload.
      if (payload === RESYNC) this.load().catch(() => {});
      else if (payload === ZERO) this.clock.rewindToZero();
      else this.clock.adoptOffsetMs(Number(payload));
    });
  }

  /**
   * Moves the clock forward for every process: the stored offset is read under a row lock and
   * raised from whichever is further ahead, the store's or ours, so two processes advancing at
   * once (or one that missed a notice) never move the shared clock back.
   */
  async advance(seconds: number): Promise<void> {
    const ms = Math.round(seconds * 1000);
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError('the clock only moves forward');
    const next = await this.store.unitOfWork({ locks: [KEY] }, async (unit) => {
      const trx: Kysely<KernelTables> = unit.tx;
      await trx
        .insertInto('kernel_settings')
        .values({ key: KEY, value: '0' })
        .onConflict((oc) => oc.column('key').doNothing())
        .execute();
      let read = trx.selectFrom('kernel_settings').select('value').where('key', '=', KEY);
      if (this.store.kind === 'postgres') read = read.forUpdate();
      const stored = Number((await read.executeTakeFirst())?.value ?? 0);
      const value = Math.max(stored, this.clock.offsetMilliseconds) + ms;
      await trx
        .updateTable('kernel_settings')
        .set({ value: String(value) })
        .where('key', '=', KEY)
        .execute();
      return value;
    });
    this.clock.adoptOffsetMs(next);
    await this.store.publish(CHANNEL, String(next));
  }

  /** Writes this process's offset unless the store's is further ahead (after a reset emptied it). */
  async save(): Promise<void> {
    await this.advance(0);
  }

  /**
   * Puts the clock back to real time in every process. Only an emulator reset calls it, once the
   * store is empty: nothing is left that was dated by the old offset.
   */
  async resetToZero(): Promise<void> {
    await this.store.unitOfWork({ locks: [KEY] }, async (unit) => {
      await unit.tx.deleteFrom('kernel_settings').where('key', '=', KEY).execute();
    });
    this.clock.rewindToZero();
    await this.store.publish(CHANNEL, ZERO);
  }

  close(): void {
    this.unsubscribe?.();
  }
}
