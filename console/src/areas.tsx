import type { ComponentChildren } from 'preact';
import type { FjordClient } from '../../sdk/index.js';
import { must } from './api.js';
import type { Column, Row } from './ui/table.js';

/** What a list page shows and how a resource is created, shown and deleted, through the SDK. */
export interface AreaDef {
  slug: string;
  name: string;
  /** What the area's resources are called ("bucket"). */
  noun: string;
  intro: string;
  list?: {
    load(api: FjordClient): Promise<Row[]>;
    columns: Column[];
    /** The row's id in the address of its page, or none when rows have no page. */
    id?(row: Row): string;
    empty: string;
  };
  create?: {
    operationId: string;
    fields?: string[];
    labels?: Record<string, string>;
    initial?: Record<string, unknown>;
    options?(api: FjordClient): Promise<Record<string, string[]>>;
    submit(api: FjordClient, body: Record<string, unknown>): Promise<unknown>;
    /** A secret in the answer, shown once. */
    secret?(created: unknown): { label: string; value: string } | null;
  };
  detail?: {
    load(api: FjordClient, id: string): Promise<Row>;
    name(row: Row): string;
    /** Sections of the page besides the facts (record editors, keys, actions). */
    sections?(props: { id: string; row: Row; api: FjordClient }): ComponentChildren;
  };
  remove?(api: FjordClient, id: string, row: Row): Promise<unknown>;
}

const rows = (v: unknown): Row[] => (Array.isArray(v) ? (v as Row[]) : []);
const date = (key: string): Column => ({
  key,
  label: key === 'created_at' ? 'Created' : key.replace(/_/g, ' '),
  render: (r) => (typeof r[key] === 'string' ? new Date(r[key] as string).toLocaleString() : '—'),
});
const col = (key: string, label = key.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase())): Column => ({
  key,
  label,
});
/** Values of a list field, for a select. */
const values = (list: unknown, key: string): string[] =>
  rows(list)
    .map((r) => r[key])
    .filter((v): v is string => typeof v === 'string');

/**
 * The console's areas, in the navigation's order. Infrastructure areas have pages to create,
 * inspect and delete; the platform areas list what exists until their own pages come.
 */
export const AREAS: AreaDef[] = [
  {
    slug: 'storage',
    name: 'Storage',
    noun: 'bucket',
    intro: 'S3-compatible buckets. Use the S3 endpoint with a bucket key, or browse objects here.',
    list: {
      load: async (api) => rows(await must(api.GET('/v1/storage/buckets', {}))),
      columns: [
        col('bucket_name', 'Name'),
        col('region'),
        col('is_public', 'Public'),
        col('object_count', 'Objects'),
        col('size_bytes', 'Bytes'),
        date('created_at'),
      ],
      id: (r) => String(r['bucket_name']),
      empty: 'No buckets yet. Create one above, then upload objects to it.',
    },
    create: {
      operationId: 'createStorageBucket',
      fields: ['bucket_name', 'tier', 'region', 'is_public', 'object_lock_enabled'],
      labels: { bucket_name: 'Name', is_public: 'Public (anyone may read objects)' },
      submit: (api, body) => must(api.POST('/v1/storage/buckets', { body: body as never })),
    },
    detail: {
      load: async (api, id) =>
        (await must(
          api.GET('/v1/storage/buckets/{bucket_name}', { params: { path: { bucket_name: id } } }),
        )) as Row,
      name: (r) => String(r['bucket_name']),
    },
    remove: (api, id) =>
      must(api.DELETE('/v1/storage/buckets/{bucket_name}', { params: { path: { bucket_name: id } } })),
  },
  {
    slug: 'dns',
    name: 'DNS',
    noun: 'zone',
    intro: 'Authoritative DNS zones served by Fjord, with their records.',
    list: {
      load: async (api) => rows((await must(api.GET('/v1/dns/zones'))).zones),
      columns: [
        col('name'),
        col('status'),
        col('record_count', 'Records'),
        col('dnssec_enabled', 'DNSSEC'),
        date('created_at'),
      ],
      id: (r) => String(r['name']),
      empty: 'No zones yet. Add your domain below, then point its NS records at Fjord.',
    },
    create: {
      operationId: 'createDnsZone',
      labels: { domain: 'Domain' },
      submit: (api, body) => must(api.POST('/v1/dns/zones', { body: body as never })),
    },
    detail: {
      load: async (api, id) =>
        (await must(api.GET('/v1/dns/zones/{zone_name}', { params: { path: { zone_name: id } } }))) as Row,
      name: (r) => String(r['name']),
    },
    remove: (api, id) =>
      must(api.DELETE('/v1/dns/zones/{zone_name}', { params: { path: { zone_name: id } } })),
  },
  {
    slug: 'databases',
    name: 'Databases',
    noun: 'database',
    intro: 'Managed PostgreSQL and MariaDB databases.',
    list: {
      load: async (api) => rows((await must(api.GET('/v1/databases'))).databases),
      columns: [col('name'), col('type', 'Engine'), col('tier'), col('host'), date('created_at')],
      id: (r) => `${r['type']}/${r['name']}`,
      empty: 'No databases yet. Create one above; its credentials are shown once.',
    },
    create: {
      operationId: 'createDatabase',
      fields: ['db_type', 'db_name', 'description', 'tier'],
      labels: { db_type: 'Engine', db_name: 'Name' },
      submit: (api, body) => must(api.POST('/v1/databases', { body: body as never })),
      secret: (c) => {
        const p = (c as { password?: string })?.password;
        return p ? { label: 'Database password', value: p } : null;
      },
    },
    detail: {
      load: async (api, id) => {
        const [db_type, db_name] = id.split('/') as [string, string];
        return (await must(
          api.GET('/v1/databases/{db_type}/{db_name}', {
            params: { path: { db_type: db_type as never, db_name } },
          }),
        )) as Row;
      },
      name: (r) => String(r['friendly_name'] ?? r['db_name']),
    },
    remove: (api, id) => {
      const [db_type, db_name] = id.split('/') as [string, string];
      return must(
        api.DELETE('/v1/databases/{db_type}/{db_name}', {
          params: { path: { db_type: db_type as never, db_name } },
        }),
      );
    },
  },
  {
    slug: 'servers',
    name: 'Virtual servers',
    noun: 'server',
    intro: 'Debian servers you reach with SSH.',
    list: {
      load: async (api) => rows((await must(api.GET('/v1/vps'))).instances),
      columns: [
        col('hostname'),
        col('display_name', 'Display name'),
        col('status'),
        col('ipv4_address', 'IPv4'),
      ],
      id: (r) => String(r['id']),
      empty: 'No servers yet. Add an SSH key under API keys, then create a server above.',
    },
    create: {
      operationId: 'vpsCreate',
      fields: ['hostname', 'display_name', 'plan_code', 'region', 'os_template', 'ssh_keys'],
      labels: { plan_code: 'Plan', os_template: 'Operating system', ssh_keys: 'SSH keys (names or ids)' },
      options: async (api) => ({
        plan_code: values(await must(api.GET('/v1/vps/plans/')), 'plan_code'),
        region: values(await must(api.GET('/v1/vps/regions')), 'id'),
        os_template: values(await must(api.GET('/v1/vps/os-templates')), 'id'),
      }),
      submit: (api, body) => must(api.POST('/v1/vps', { body: body as never })),
    },
    detail: {
      load: async (api, id) =>
        (await must(api.GET('/v1/vps/{vps_id}', { params: { path: { vps_id: id } } }))) as Row,
      name: (r) => String(r['hostname']),
    },
    remove: (api, id) => must(api.DELETE('/v1/vps/{vps_id}', { params: { path: { vps_id: id } } })),
  },
  {
    slug: 'clusters',
    name: 'Clusters',
    noun: 'cluster',
    intro: 'Managed Kubernetes clusters with node pools.',
    list: {
      load: async (api) => rows((await must(api.GET('/v1/kubernetes/clusters'))).clusters),
      columns: [col('name'), col('region'), col('plan_code', 'Plan'), col('version'), col('status')],
      id: (r) => String(r['id']),
      empty: 'No clusters yet. Create one above with at least one node pool.',
    },
    create: {
      operationId: 'k8sCreateCluster',
      fields: ['name', 'region', 'plan_code', 'version', 'node_pools'],
      labels: { plan_code: 'Plan', node_pools: 'Node pools (JSON)' },
      options: async (api) => ({
        region: values((await must(api.GET('/v1/kubernetes/regions'))).regions, 'code'),
        plan_code: values((await must(api.GET('/v1/kubernetes/plans'))).plans, 'plan_code'),
      }),
      submit: (api, body) => must(api.POST('/v1/kubernetes/clusters', { body: body as never })),
    },
    detail: {
      load: async (api, id) =>
        (await must(api.GET('/v1/kubernetes/clusters/{id}', { params: { path: { id } } }))) as Row,
      name: (r) => String(r['name']),
    },
    remove: (api, id, row) =>
      must(
        api.DELETE('/v1/kubernetes/clusters/{id}', {
          params: { path: { id } },
          body: { confirm_name: String(row['name']) },
        }),
      ),
  },
  {
    slug: 'apps',
    name: 'Container apps',
    noun: 'app',
    intro: 'Containers run from your images behind Fjord’s ingress.',
    list: {
      load: async (api) => rows((await must(api.GET('/v1/apps', {}))).apps),
      columns: [
        col('name'),
        col('status'),
        col('region'),
        col('url', 'Address'),
        col('current_revision', 'Revision'),
      ],
      id: (r) => String(r['id']),
      empty: 'No apps yet. Deploy one from an image above.',
    },
    create: {
      operationId: 'appsCreate',
      fields: ['name', 'image', 'port', 'region', 'plan_code'],
      labels: { plan_code: 'Plan' },
      submit: (api, body) => must(api.POST('/v1/apps', { body: body as never })),
    },
    detail: {
      load: async (api, id) =>
        (await must(api.GET('/v1/apps/{app_id}', { params: { path: { app_id: id } } }))) as Row,
      name: (r) => String(r['name']),
    },
    remove: (api, id) => must(api.DELETE('/v1/apps/{app_id}', { params: { path: { app_id: id } } })),
  },
  {
    slug: 'iot',
    name: 'IoT',
    noun: 'device',
    intro: 'Devices connected over MQTT.',
    list: {
      load: async (api) => rows((await must(api.GET('/v1/iot/devices', {}))).devices),
      columns: [col('name'), col('device_type', 'Type'), col('is_online', 'Online'), date('last_seen')],
      empty: 'No devices yet. Register devices through the API; their pages come to the console soon.',
    },
  },
  {
    slug: 'live',
    name: 'Live events',
    noun: 'event',
    intro: 'Live streams with RTMP ingest and HLS playback.',
    list: {
      load: async (api) => rows((await must(api.GET('/v1/live-events/events', {}))).events),
      columns: [col('name'), col('status'), date('scheduled_start_at')],
      empty: 'No live events yet. Create one through the API.',
    },
  },
  {
    slug: 'speech',
    name: 'Speech',
    noun: 'transcription',
    intro: 'Transcription jobs with word timings.',
    list: {
      load: async (api) => rows((await must(api.GET('/v1/transcript/jobs', {}))).jobs),
      columns: [col('original_filename', 'File'), col('status'), col('language'), date('created_at')],
      empty: 'No transcription jobs yet.',
    },
  },
  {
    slug: 'llm',
    name: 'Language models',
    noun: 'model',
    intro: 'The models behind Fjord’s OpenAI-compatible gateway.',
    list: {
      load: async (api) => rows((await must(api.GET('/v1/llm/models'))).data),
      columns: [col('id', 'Model'), col('owned_by', 'Owner')],
      empty: 'No models are configured on this install.',
    },
  },
  {
    slug: 'chatbots',
    name: 'Chatbots',
    noun: 'bot',
    intro: 'Chatbots answering from your knowledge sources.',
    list: {
      load: async (api) => rows((await must(api.GET('/v1/chatbot/bots'))).bots),
      columns: [col('name'), col('status'), col('language')],
      empty: 'No chatbots yet.',
    },
  },
  {
    slug: 'gpu',
    name: 'GPU jobs',
    noun: 'job',
    intro: 'Image and video jobs run by GPU workers.',
    list: {
      load: async (api) => rows(await must(api.GET('/v1/gpu/jobs', {}))),
      columns: [col('id'), col('type'), col('status'), col('progress'), date('created_at')],
      empty: 'No GPU jobs yet.',
    },
  },
  {
    slug: 'ip',
    name: 'IP intelligence',
    noun: 'category',
    intro: 'Threat categories Fjord reports IP addresses under.',
    list: {
      load: async (api) => rows(await must(api.GET('/v1/ip/categories'))),
      columns: [col('id'), col('name'), col('description')],
      empty: 'No categories.',
    },
  },
  {
    slug: 'sms',
    name: 'SMS',
    noun: 'message',
    intro: 'Text messages sent and received.',
    list: {
      load: async (api) => rows((await must(api.GET('/v1/sms/messages', {}))).messages),
      columns: [col('to_number', 'To'), col('from_number', 'From'), col('status'), col('direction')],
      empty: 'No messages yet.',
    },
  },
  {
    slug: 'verification',
    name: 'Verification',
    noun: 'session',
    intro:
      'One-time codes by SMS or e-mail. Sessions are started and checked by your application through the API (POST /v1/verify/start, /v1/verify/check); their list comes to the console soon.',
  },
  {
    slug: 'contacts',
    name: 'Contacts',
    noun: 'contact',
    intro: 'People and companies, for SMS and e-mail.',
    list: {
      load: async (api) => rows((await must(api.GET('/v1/contacts', {}))).contacts),
      columns: [col('name'), col('type'), col('email'), col('phone_number', 'Phone')],
      empty: 'No contacts yet.',
    },
  },
  {
    slug: 'dyn',
    name: 'Dynamic DNS',
    noun: 'hostname',
    intro: 'Hostnames your routers keep pointed at your address (DynDNS2).',
    list: {
      load: async (api) => rows(await must(api.GET('/v1/dyn/hostnames'))),
      columns: [
        col('hostname'),
        col('ipv4', 'IPv4'),
        col('ipv6', 'IPv6'),
        col('offline'),
        date('last_update_at'),
      ],
      id: (r) => String(r['id']),
      empty: 'No hostnames yet. Add one above, then give your router a token.',
    },
    create: {
      operationId: 'createDynHostname',
      submit: (api, body) => must(api.POST('/v1/dyn/hostnames', { body: body as never })),
    },
    detail: {
      load: async (api, id) =>
        (await must(
          api.GET('/v1/dyn/hostnames/{hostname_id}', { params: { path: { hostname_id: id } } }),
        )) as Row,
      name: (r) => String(r['hostname']),
    },
    remove: (api, id) =>
      must(api.DELETE('/v1/dyn/hostnames/{hostname_id}', { params: { path: { hostname_id: id } } })),
  },
  {
    slug: 'api-keys',
    name: 'API keys',
    noun: 'key',
    intro: 'Personal access tokens, service keys and SSH keys.',
  },
  {
    slug: 'usage',
    name: 'Usage and costs',
    noun: 'area',
    intro: 'This month’s usage and cost of each area, in the account’s currency.',
  },
];

/** Domain verification lives beside DNS (its records are DNS records): a page of its own, linked from DNS. */
export const DOMAIN_VERIFICATION: AreaDef = {
  slug: 'domain-verification',
  name: 'Domain verification',
  noun: 'domain',
  intro: 'Prove you own a domain: create the record shown, then re-check.',
  list: {
    load: async (api) => rows((await must(api.GET('/v1/domain-verification/domains', {}))).domains),
    columns: [col('domain'), col('purpose'), col('status'), col('verification_method', 'Method')],
    id: (r) => String(r['id']),
    empty: 'No domains yet. Add one above to get the record that proves you own it.',
  },
  create: {
    operationId: 'createDomainVerification',
    fields: ['domain', 'purpose', 'verification_method'],
    submit: (api, body) => must(api.POST('/v1/domain-verification/domains', { body: body as never })),
  },
  detail: {
    load: async (api, id) =>
      (await must(
        api.GET('/v1/domain-verification/domains/{domain_id}', { params: { path: { domain_id: id } } }),
      )) as Row,
    name: (r) => String(r['domain']),
  },
  remove: (api, id) =>
    must(api.DELETE('/v1/domain-verification/domains/{domain_id}', { params: { path: { domain_id: id } } })),
};
