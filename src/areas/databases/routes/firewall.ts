import { defineRoute } from '../../../kernel/http/route.js';
import type { DbType } from '../drivers/driver.js';
import type { FirewallService } from '../firewall-service.js';
import type { FirewallRulesTable } from '../migrations.js';
import { DbParams, FirewallBody, FirewallList, FirewallRule, RuleDeleted, RuleParams } from '../schemas.js';
import { API_BUCKET, FIREWALL, TAG } from './access.js';

const view = (dbName: string, dbType: DbType, port: number, r: FirewallRulesTable) => ({
  rule_id: r.id,
  db_name: dbName,
  db_type: dbType,
  ip_address: r.ip_address,
  port,
  description: r.description,
  created_at: new Date(r.created_at).toISOString(),
});

export function firewallRoutes(firewall: FirewallService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/v1/databases/:db_type/:db_name/firewall',
      operationId: 'listDatabaseFirewallRules',
      tag: TAG,
      summary: 'List the firewall rules (none: any source may connect)',
      access: FIREWALL,
      rateLimit: [API_BUCKET],
      params: DbParams,
      response: { 200: FirewallList },
      errors: [404, 503],
      handler: async ({ principal, params }) => {
        const { row, port, rules } = await firewall.rules(
          principal.customerId,
          params.db_type,
          params.db_name,
        );
        return {
          rules: rules.map((r) => view(row.technical_name, params.db_type, port, r)),
          total: rules.length,
        };
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/databases/:db_type/:db_name/firewall',
      operationId: 'addDatabaseFirewallRule',
      tag: TAG,
      summary: 'Admit connections from an IPv4 address or CIDR block; applied by the server at once',
      description:
        'With at least one rule, the server admits this database’s user only from the rules’ addresses; sessions from other addresses end. At most 50 rules per database.',
      access: FIREWALL,
      rateLimit: [API_BUCKET],
      params: DbParams,
      body: FirewallBody,
      response: { 201: FirewallRule },
      errors: [404, 409, 502, 503],
      handler: async ({ principal, params, body }) => {
        const { row, rule, port } = await firewall.addRule(
          principal,
          params.db_type,
          params.db_name,
          body.ip_address,
          body.description ?? null,
        );
        return view(row.technical_name, params.db_type, port, rule);
      },
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/databases/:db_type/:db_name/firewall/:rule_id',
      operationId: 'deleteDatabaseFirewallRule',
      tag: TAG,
      summary: 'Remove a firewall rule; applied by the server at once',
      access: FIREWALL,
      rateLimit: [API_BUCKET],
      params: RuleParams,
      response: { 200: RuleDeleted },
      errors: [404, 409, 502, 503],
      handler: async ({ principal, params }) => {
        await firewall.deleteRule(principal, params.db_type, params.db_name, params.rule_id);
        return { ok: true, message: `Firewall rule ${params.rule_id} removed.`, rule_id: params.rule_id };
      },
    }),
  ];
}
