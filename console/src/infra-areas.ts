import { must } from './api.js';
import { type AreaDef, col, date, rows, values } from './area-def.js';
import type { Row } from './ui/table.js';

/**
 * The infrastructure areas, first in the navigation: each has pages to create, inspect and
 * delete its resources.
 */
/** Pool states that end on their own (clusters' PoolView). */
const CHANGING_POOL = new Set(['scaling', 'draining']);

export const INFRA_AREAS: AreaDef[] = [
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
      labels: { plan_code: 'Plan', node_pools: 'Node pools' },
      rows: {
        node_pools: {
          noun: 'node pool',
          parts: ['name', 'plan_code', 'count'],
          labels: { plan_code: 'Plan', count: 'Nodes' },
          initial: { name: 'pool-{n}', count: '1' },
        },
      },
      options: async (api) => {
        const plans = (await must(api.GET('/v1/kubernetes/plans'))).plans;
        return {
          region: values((await must(api.GET('/v1/kubernetes/regions'))).regions, 'code'),
          plan_code: values(
            plans.filter((p) => p.kind !== 'node'),
            'plan_code',
          ),
          'node_pools.plan_code': values(
            plans.filter((p) => p.kind === 'node'),
            'plan_code',
          ),
        };
      },
      submit: (api, body) => must(api.POST('/v1/kubernetes/clusters', { body: body as never })),
    },
    detail: {
      load: async (api, id) =>
        (await must(api.GET('/v1/kubernetes/clusters/{id}', { params: { path: { id } } }))) as Row,
      name: (r) => String(r['name']),
      // A pool scaling or draining ends on Fjord's clock, not on a step of the timeline: read the
      // cluster again every two seconds until every pool is ready (as a server's page reads its state).
      poll: (r) => (rows(r['node_pools']).some((p) => CHANGING_POOL.has(String(p['status']))) ? 2000 : false),
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
];
