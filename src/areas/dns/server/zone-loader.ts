/**
 * Keeps the engine's zones in step with the control plane: loads every zone at start, then
 * reloads one zone (or all, and the TSIG keys, on '*') whenever `onZoneChanged` fires. Reloads run one at a time,
 * in order, so an older snapshot never overwrites a newer one.
 */
import type { Logger } from 'pino';
import type { ZoneSnapshot, ZoneSource } from '../server-contract.js';
import type { DnsEngine } from './engine.js';
import { nameKey, splitName } from './names.js';
import { Zone } from './zone-view.js';

const RETRY_MS = 5000;

export class ZoneLoader {
  private chain: Promise<void> = Promise.resolve();
  private unsubscribe: (() => void) | null = null;
  private loadedOnce = false;
  private readonly retries = new Set<NodeJS.Timeout>();

  constructor(
    private readonly source: ZoneSource,
    private readonly engine: DnsEngine,
    private readonly log: Logger,
    private readonly now: () => number,
    /** Called when a zone's serial changed (or it appeared) after the first load. */
    private readonly onSerialChange: (zone: Zone) => void,
  ) {}

  async start(): Promise<void> {
    this.unsubscribe = this.source.onZoneChanged((apex) => void this.enqueue(apex));
    await this.enqueue('*');
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    for (const t of this.retries) clearTimeout(t);
    this.retries.clear();
  }

  settled(): Promise<void> {
    return this.chain;
  }

  /** Resolves once this change (and every one before it) is applied. */
  enqueue(apex: string): Promise<void> {
    this.chain = this.chain
      .then(() => this.apply(apex))
      .catch((err) => {
        // The store may be briefly away: keep serving what we have and try again.
        this.log.error({ err, apex }, 'dns: could not load zone; serving the previous view, retrying in 5 s');
        if (!this.unsubscribe) return;
        const timer = setTimeout(() => {
          this.retries.delete(timer);
          void this.enqueue(apex);
        }, RETRY_MS);
        timer.unref();
        this.retries.add(timer);
      });
    return this.chain;
  }

  private async apply(apex: string): Promise<void> {
    const zones = new Map(this.engine.zones);
    const first = !this.loadedOnce;
    if (apex === '*') {
      const keys = await this.source.loadTsigKeys();
      const snapshots = await this.source.loadAll();
      this.engine.setKeys(new Map(keys.map((k) => [k.name, k])));
      const fresh = new Map<string, Zone>();
      for (const s of snapshots) {
        const zone = this.build(s);
        if (zone) fresh.set(zone.apexKey, zone);
      }
      for (const [key, zone] of fresh) {
        if (!first && zones.get(key)?.snapshot.soa.serial !== zone.snapshot.soa.serial)
          this.onSerialChange(zone);
      }
      this.engine.setZones(fresh);
      this.loadedOnce = true;
      return;
    }
    const key = nameKey(splitName(apex.toLowerCase()));
    const snapshot = await this.source.loadZone(apex);
    const zone = snapshot ? this.build(snapshot) : null;
    const before = zones.get(key);
    if (zone) {
      if (zone.apexKey !== key) zones.delete(key);
      zones.set(zone.apexKey, zone);
      if (before?.snapshot.soa.serial !== zone.snapshot.soa.serial) this.onSerialChange(zone);
    } else zones.delete(key);
    this.engine.setZones(zones);
  }

  private build(snapshot: ZoneSnapshot): Zone | null {
    if (snapshot.status === 'disabled') return null;
    try {
      const zone = new Zone(snapshot, this.now);
      if (zone.skipped.length > 0) {
        this.log.warn(
          { zone: snapshot.apex, skipped: zone.skipped },
          'dns: records left out of the served zone',
        );
      }
      return zone;
    } catch (err) {
      this.log.error({ err, zone: snapshot.apex }, 'dns: zone cannot be served');
      return null;
    }
  }
}
