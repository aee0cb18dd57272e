import type { Logger } from 'pino';
import type { SecretBox } from '../../kernel/secrets.js';
import { RESYNC, type Store } from '../../kernel/store/store.js';
import { ALGORITHM, assertP256, KEY_FLAGS } from './dnssec.js';
import type { DnsKeysTable, DnsRecordsTable, DnsZonesTable } from './migrations.js';
import { absoluteName } from './names.js';
import { monthOf } from './query-quota.js';
import { recordData } from './record-content.js';
import type { DnsRepo } from './repo.js';
import type {
  ServedRecord,
  ServedTsigKey,
  ZoneSigningKey,
  ZoneSnapshot,
  ZoneSource,
} from './server-contract.js';
import { soaFor } from './soa.js';

/** Channel of zone change notices: the payload is the apex (or '*': reload everything). */
export const ZONE_CHANNEL = 'fjord_dns_zones';

/**
 * The server's view of the store. Changes are announced on a store channel after they commit —
 * LISTEN/NOTIFY on PostgreSQL, so every DNS process hears it — and a notice lost with a dropped
 * connection turns into '*' (reload all).
 */
export class StoreZoneSource implements ZoneSource {
  constructor(
    private readonly repo: DnsRepo,
    private readonly store: Store,
    private readonly secrets: SecretBox,
    private readonly nameservers: string[],
    private readonly log: Logger,
    /** The store's clock: a zone paused for its month's query quota is not served in that month. */
    private readonly now: () => number,
    /** The TSIG keys with their secrets (tsig-keys.ts). */
    private readonly tsigKeys: () => Promise<ServedTsigKey[]> = async () => [],
  ) {}

  loadTsigKeys(): Promise<ServedTsigKey[]> {
    return this.tsigKeys();
  }

  async loadAll(): Promise<ZoneSnapshot[]> {
    const zones = await this.repo.servedZones(monthOf(this.now()));
    return this.snapshots(zones);
  }

  async loadZone(apex: string): Promise<ZoneSnapshot | null> {
    const zone = await this.repo.zoneByName(apex.toLowerCase().replace(/\.$/, ''));
    if (!zone || zone.status === 'disabled') return null;
    const pause = await this.repo.queryPause(zone.customer_id);
    if (pause?.month === monthOf(this.now())) return null;
    return (await this.snapshots([zone]))[0] ?? null;
  }

  onZoneChanged(listener: (apex: string) => void): () => void {
    return this.store.subscribe(ZONE_CHANNEL, (payload) => listener(payload === RESYNC ? '*' : payload));
  }

  /** Announces a committed change of a zone to every process. */
  async announce(apex: string): Promise<void> {
    await this.store
      .publish(ZONE_CHANNEL, apex)
      .catch((err) => this.log.warn({ err, apex }, 'zone change notice failed'));
  }

  private async snapshots(zones: DnsZonesTable[]): Promise<ZoneSnapshot[]> {
    const ids = zones.map((z) => z.id);
    const records = new Map<string, DnsRecordsTable[]>();
    for (const r of await this.repo.recordsOfZones(ids)) {
      const list = records.get(r.zone_id);
      if (list) list.push(r);
      else records.set(r.zone_id, [r]);
    }
    const keys = new Map((await this.repo.keysOf(ids)).map((k) => [k.zone_id, k]));
    const out: ZoneSnapshot[] = [];
    for (const z of zones) {
      const key = keys.get(z.id);
      out.push({
        zoneId: z.id,
        customerId: z.customer_id,
        apex: z.name,
        status: z.status,
        nameservers: [...this.nameservers],
        soa: soaFor(z.name, this.nameservers, z.serial),
        // The apex NS set comes from `nameservers`; the server adds it.
        records: (records.get(z.id) ?? []).map(
          (r): ServedRecord => ({
            name: absoluteName(r.name, z.name),
            ttl: r.ttl,
            data: recordData(r.type, r.content, r.priority),
          }),
        ),
        signingKey: z.dnssec_enabled && key ? this.signingKey(key) : null,
      });
    }
    return out;
  }

  private signingKey(k: DnsKeysTable): ZoneSigningKey {
    const privateKeyPkcs8 = Buffer.from(this.secrets.open(k.private_key_sealed), 'base64');
    assertP256(privateKeyPkcs8);
    return {
      algorithm: ALGORITHM,
      flags: KEY_FLAGS,
      keyTag: k.key_tag,
      publicKey: Buffer.from(k.public_key, 'base64'),
      privateKeyPkcs8,
    };
  }
}
