import { must } from './api.js';
import { type AreaDef, col, date, rows } from './area-def.js';
import { INFRA_AREAS } from './infra-areas.js';
import type { Row } from './ui/table.js';

export type { AreaDef } from './area-def.js';

/**
 * The console's areas, in the navigation's order. Infrastructure areas (infra-areas.ts) have pages
 * to create, inspect and delete; the platform areas list what exists until their own pages come.
 */
export const AREAS: AreaDef[] = [
  ...INFRA_AREAS,
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
