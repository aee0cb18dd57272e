import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../../kernel/http/route.js';
import type { DbType } from '../drivers/driver.js';
import type { DatabaseReports } from '../reports.js';
import { dbErrors, TIERS } from '../rules.js';
import {
  CreateBody,
  Created,
  Credentials,
  DatabaseList,
  DbParams,
  DbTypeParams,
  DeleteBody,
  Deleted,
  Detail,
  Engine,
  Info,
  NamesOfType,
  PatchBody,
  Rotated,
  TierRecord,
  TypeListQuery,
  UsernameQuery,
} from '../schemas.js';
import type { DatabasesService } from '../service.js';
import { API_BUCKET, CREATE, DELETE, READ, SERVICE_KEY_ONLY, TAG, WRITE } from './access.js';

const SuccessMessage = Type.Object({ success: Type.Boolean(), message: Type.String() });

export function coreRoutes(dbs: DatabasesService, reports: DatabaseReports) {
  const iso = (ms: number) => new Date(ms).toISOString();
  return [
    defineRoute({
      method: 'GET',
      url: '/v1/databases',
      operationId: 'listDatabases',
      tag: TAG,
      summary: 'List the databases of the account (both engines)',
      access: READ,
      rateLimit: [API_BUCKET],
      response: { 200: DatabaseList },
      handler: async ({ principal }) => {
        const rows = await dbs.list(principal.customerId);
        const hosts = new Map<string, string>();
        for (const t of new Set(rows.map((r) => r.db_type))) {
          hosts.set(t, (await dbs.endpointOf(t as DbType).catch(() => ({ host: '' }))).host);
        }
        return {
          databases: rows.map((r) => ({
            name: r.friendly_name,
            technical_name: r.technical_name,
            type: r.db_type as DbType,
            description: r.description,
            tier: r.tier as 'standard',
            host: hosts.get(r.db_type) ?? '',
            created_at: iso(r.created_at),
          })),
          total: rows.length,
        };
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/databases',
      operationId: 'createDatabase',
      tag: TAG,
      summary: 'Create a database and its own user',
      description:
        'Form A: `db_name` (+ `tier`) → `{ok, created, friendly_name, technical_name, …}`; 409 when it exists. Form B: `requested_name` (or neither name) → `{success, db_name, …, idempotent}`; an existing database answers 200 with `idempotent: true` and no password. The password is shown once.',
      access: CREATE,
      rateLimit: [API_BUCKET, 'database.create'],
      body: CreateBody,
      response: { 200: Created, 201: Created },
      errors: [403, 404, 409, 502, 503],
      handler: async ({ principal, body, reply }) => {
        if (body.db_name !== undefined && body.requested_name !== undefined) throw dbErrors.bothNames();
        const form = body.db_name !== undefined ? 'A' : 'B';
        const r = await dbs.create(principal, {
          form,
          dbType: body.db_type,
          name: form === 'A' ? body.db_name! : (body.requested_name?.toLowerCase() ?? null),
          description: body.description ?? null,
          tier: body.tier ?? 'standard',
          customerId: form === 'B' ? (body.customer_id ?? null) : null,
        });
        if (form === 'A') {
          return reply.code(201).send({
            ok: true,
            created: true,
            friendly_name: r.row.friendly_name,
            technical_name: r.row.technical_name,
            db_type: body.db_type,
            host: r.host,
            port: r.port,
            username: r.row.username,
            password: r.password!,
            connection_string: r.connection_string,
          });
        }
        const answer = {
          success: true,
          db_type: body.db_type,
          db_name: r.row.technical_name,
          username: r.row.username,
          password: r.password,
          host: r.host,
          port: r.port,
          connection_string: r.connection_string,
          message: r.created
            ? `Database ${r.row.technical_name} created.`
            : `Database ${r.row.technical_name} already exists; its password is not shown again (rotate the credentials to get a new one).`,
          password_generated: r.created,
          idempotent: !r.created,
        };
        return reply.code(r.created ? 201 : 200).send(answer);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/databases/tiers',
      operationId: 'listDatabaseTiers',
      tag: TAG,
      summary: 'List the database tiers',
      access: READ,
      rateLimit: [API_BUCKET],
      response: { 200: Type.Array(TierRecord) },
      handler: async () => TIERS.map((t) => ({ ...t })),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/databases/engines',
      operationId: 'listDatabaseEngines',
      tag: TAG,
      summary: 'List the engines and the versions their servers report',
      description:
        'Needs the database service key. `driver` says whether the engine is embedded, external or simulated.',
      access: SERVICE_KEY_ONLY,
      rateLimit: [API_BUCKET],
      response: { 200: Type.Object({ engines: Type.Array(Engine) }) },
      handler: async () => ({ engines: await reports.engineList() }),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/databases/:db_type',
      operationId: 'listDatabasesOfType',
      tag: TAG,
      summary: 'List the technical names of one engine’s databases',
      description: '`customer_id` is honoured for internal service keys only.',
      access: READ,
      rateLimit: [API_BUCKET],
      params: DbTypeParams,
      query: TypeListQuery,
      response: { 200: NamesOfType },
      handler: async ({ principal, params, query }) => {
        const customerId = dbs.actingCustomer(principal, query.customer_id);
        const rows = await dbs.list(customerId, params.db_type);
        return { db_type: params.db_type, databases: rows.map((r) => r.technical_name) };
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/databases/:db_type/:db_name',
      operationId: 'getDatabase',
      tag: TAG,
      summary: 'Get a database, with its status and size as the server reports them',
      access: READ,
      rateLimit: [API_BUCKET],
      params: DbParams,
      response: { 200: Detail },
      errors: [404, 503],
      handler: async ({ principal, params }) =>
        dbs.detail(principal.customerId, params.db_type, params.db_name),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/databases',
      operationId: 'deleteDatabaseByBody',
      tag: TAG,
      summary: 'Delete a database and its user (form B); irreversible',
      access: DELETE,
      rateLimit: [API_BUCKET],
      body: DeleteBody,
      response: { 200: SuccessMessage },
      errors: [400, 404, 502, 503],
      handler: async ({ principal, body }) => {
        const row = await dbs.delete(principal, body.db_type, body.db_name, body.username);
        return { success: true, message: `Database ${row.technical_name} and user ${row.username} deleted.` };
      },
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/databases/:db_type/:db_name',
      operationId: 'deleteDatabase',
      tag: TAG,
      summary: 'Delete a database and its user; all data is gone, irreversibly',
      description: 'Answers with both forms’ fields: `success`, `message` and `ok`, `deleted`, `db_name`.',
      access: DELETE,
      rateLimit: [API_BUCKET],
      params: DbParams,
      query: UsernameQuery,
      response: { 200: Deleted },
      errors: [400, 404, 502, 503],
      handler: async ({ principal, params, query }) => {
        const row = await dbs.delete(principal, params.db_type, params.db_name, query.username);
        const message = `Database ${row.technical_name} and user ${row.username} deleted.`;
        return { ok: true, deleted: true, db_name: row.technical_name, success: true, message };
      },
    }),
    defineRoute({
      method: 'PATCH',
      url: '/v1/databases/:db_type/:db_name',
      operationId: 'updateDatabase',
      tag: TAG,
      summary: 'Change the connection limit (10-1000, enforced by the server) or the description',
      access: WRITE,
      rateLimit: [API_BUCKET],
      params: DbParams,
      body: PatchBody,
      response: { 200: SuccessMessage },
      errors: [404, 502, 503],
      handler: async ({ principal, params, body }) => {
        const row = await dbs.update(principal, params.db_type, params.db_name, body);
        const parts = [
          body.connection_limit !== undefined ? `connection limit ${body.connection_limit}` : null,
          body.description !== undefined ? 'description' : null,
        ].filter(Boolean);
        return {
          success: true,
          message: parts.length
            ? `Updated ${parts.join(' and ')} of ${row.technical_name}.`
            : 'Nothing to change.',
        };
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/databases/:db_type/:db_name/restart',
      operationId: 'restartDatabase',
      tag: TAG,
      summary: 'End every session of this database (not the server)',
      access: WRITE,
      rateLimit: [API_BUCKET],
      params: DbParams,
      response: { 200: SuccessMessage },
      errors: [404, 502, 503],
      handler: async ({ principal, params }) => {
        const { row, ended } = await dbs.restart(principal, params.db_type, params.db_name);
        return { success: true, message: `Terminated ${ended} connection(s) to ${row.technical_name}.` };
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/databases/:db_type/:db_name/credentials',
      operationId: 'getDatabaseCredentials',
      tag: TAG,
      summary: 'Connection details without the password',
      access: READ,
      rateLimit: [API_BUCKET],
      params: DbParams,
      response: { 200: Credentials },
      errors: [404, 503],
      handler: async ({ principal, params }) =>
        dbs.credentials(principal.customerId, params.db_type, params.db_name),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/databases/:db_type/:db_name/credentials/rotate',
      operationId: 'rotateDatabaseCredentials',
      tag: TAG,
      summary: 'Set a new password; the old one stops working at once',
      access: WRITE,
      rateLimit: [API_BUCKET],
      params: DbParams,
      response: { 200: Rotated },
      errors: [404, 502, 503],
      handler: async ({ principal, params }) => dbs.rotate(principal, params.db_type, params.db_name),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/databases/:db_type/:db_name/info',
      operationId: 'getDatabaseInfo',
      tag: TAG,
      summary: 'Size, connections, limit and owner as the server reports them',
      access: READ,
      rateLimit: [API_BUCKET],
      params: DbParams,
      response: { 200: Info },
      errors: [404],
      handler: async ({ principal, params }) =>
        dbs.info(principal.customerId, params.db_type, params.db_name),
    }),
  ];
}
