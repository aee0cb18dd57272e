import type { Kysely, Migration } from 'kysely';

export const dnsMigrations: Record<string, Migration> = {
  '2026-11-22-0400-dns-zones-records-keys-stats': {
    // biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('dns_zones')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull().unique())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('serial', 'bigint', (c) => c.notNull())
        .addColumn('dnssec_enabled', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('delegation_checked_at', 'bigint')
        .execute();
      await db.schema.createIndex('dns_zones_customer').on('dns_zones').column('customer_id').execute();
      await db.schema
        .createTable('dns_records')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('zone_id', 'text', (c) => c.notNull().references('dns_zones.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('content', 'text', (c) => c.notNull())
        .addColumn('ttl', 'integer', (c) => c.notNull())
        .addColumn('priority', 'integer')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('dns_records_zone')
        .on('dns_records')
        .columns(['zone_id', 'name'])
        .execute();
      await db.schema
        .createTable('dns_keys')
        .addColumn('zone_id', 'text', (c) => c.primaryKey().references('dns_zones.id').onDelete('cascade'))
        .addColumn('algorithm', 'integer', (c) => c.notNull())
        .addColumn('flags', 'integer', (c) => c.notNull())
        .addColumn('key_tag', 'integer', (c) => c.notNull())
        .addColumn('public_key', 'text', (c) => c.notNull())
        .addColumn('private_key_sealed', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      // No foreign key: counts arrive after the fact and may name a zone deleted meanwhile.
      await db.schema
        .createTable('dns_query_stats')
        .addColumn('zone_id', 'text', (c) => c.notNull())
        .addColumn('day', 'text', (c) => c.notNull())
        .addColumn('qtype', 'text', (c) => c.notNull())
        .addColumn('count', 'bigint', (c) => c.notNull())
        .addColumn('total_micros', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('dns_query_stats_pk', ['zone_id', 'day', 'qtype'])
        .execute();
    },
  },
  '2026-11-25-0100-dns-query-pauses': {
    // biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
    async up(db: Kysely<any>) {
      // A customer whose zones stopped being served for the rest of a month: its queries reached
      // the plan's monthly quota (docs/dns.md, "Monthly query quota").
      await db.schema
        .createTable('dns_query_pauses')
        .addColumn('customer_id', 'text', (c) =>
          c.primaryKey().references('customers.id').onDelete('cascade'),
        )
        .addColumn('month', 'text', (c) => c.notNull())
        .addColumn('paused_at', 'bigint', (c) => c.notNull())
        .addColumn('queries', 'bigint', (c) => c.notNull())
        .addColumn('query_limit', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
  '2026-11-29-0700-dns-tsig-keys': {
    // biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
    async up(db: Kysely<any>) {
      // The operator's TSIG keys (docs/dns-server.md, "TSIG"): secrets sealed with the data key,
      // because signing needs them back.
      await db.schema
        .createTable('dns_tsig_keys')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('algorithm', 'text', (c) => c.notNull())
        .addColumn('secret_sealed', 'text', (c) => c.notNull())
        .addColumn('zones', 'text')
        .addColumn('notify', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
};

/** A TSIG key (RFC 8945) the DNS server verifies and signs with. */
export interface DnsTsigKeysTable {
  /** Lowercase, no trailing dot. */
  name: string;
  algorithm: string;
  /** Base64 of the secret, sealed with the data key. */
  secret_sealed: string;
  /** JSON array of apexes the key may transfer; null for every zone. */
  zones: string | null;
  /** JSON array of `host:port` secondaries that get NOTIFY signed with the key. */
  notify: string;
  created_at: number;
}

export interface DnsZonesTable {
  id: string;
  customer_id: string;
  /** Apex, lowercase ASCII (punycode), no trailing dot. */
  name: string;
  status: 'pending' | 'active' | 'disabled';
  serial: number;
  dnssec_enabled: number;
  created_at: number;
  updated_at: number;
  delegation_checked_at: number | null;
}

export interface DnsRecordsTable {
  id: string;
  zone_id: string;
  /** Relative owner: `@`, `www`, `*.dev`, `_sip._tcp` (lowercase). */
  name: string;
  type: string;
  /** Canonical presentation of the value without priority (see record-content.ts). */
  content: string;
  ttl: number;
  priority: number | null;
  created_at: number;
}

export interface DnsKeysTable {
  zone_id: string;
  algorithm: number;
  flags: number;
  key_tag: number;
  /** Base64 of the 64-byte X‖Y public key. */
  public_key: string;
  /** PKCS#8 DER (base64) sealed with the data key. */
  private_key_sealed: string;
  created_at: number;
}

export interface DnsQueryStatsTable {
  zone_id: string;
  /** UTC day, `YYYY-MM-DD`. */
  day: string;
  qtype: string;
  count: number;
  total_micros: number;
}

/** A customer's zones are not served for the rest of `month`: the monthly query quota is used up. */
export interface DnsQueryPausesTable {
  customer_id: string;
  /** UTC month, `YYYY-MM`. */
  month: string;
  paused_at: number;
  /** Queries counted this month when the pause began, and the plan's limit then. */
  queries: number;
  query_limit: number;
}

export interface DnsTables {
  dns_query_pauses: DnsQueryPausesTable;
  dns_zones: DnsZonesTable;
  dns_records: DnsRecordsTable;
  dns_keys: DnsKeysTable;
  dns_query_stats: DnsQueryStatsTable;
  dns_tsig_keys: DnsTsigKeysTable;
}
