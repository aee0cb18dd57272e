import { isoOf } from '../../kernel/clock.js';
import type { DomainVerificationsTable } from './migrations.js';
import type { DomainVerificationSettings } from './service.js';

/** The TTL the instructions suggest for the record: short, so a mistake is corrected quickly. */
export const TTL_RECOMMENDATION = 300;

/**
 * The records a domain verification asks for (TXT or CNAME, from the configured label and
 * target) and the API's view of a record, in the current and the older instruction forms.
 */
export class DomainVerificationViews {
  constructor(private readonly settings: DomainVerificationSettings) {}

  expectedRecord(row: DomainVerificationsTable) {
    const token = row.token ?? '';
    return row.method === 'DNS_CNAME'
      ? { type: 'CNAME', name: this.cnameName(row.domain, token), value: this.cnameValue(token) }
      : { type: 'TXT', name: this.txtName(row.domain), value: `fjord-domain-verification=${token}` };
  }

  private txtName = (domain: string) => `${this.settings.label}.${domain}`;
  private cnameName = (domain: string, token: string) =>
    `${this.settings.label}-${token.slice(0, 12)}.${domain}`;
  private cnameValue = (token: string) => `${token}.${this.settings.cnameTarget}`;

  private instructions(row: DomainVerificationsTable) {
    if (row.method === 'INTERNAL_DNS_AUTHORITY') {
      return {
        method: row.method,
        record_type: null,
        record_name: null,
        record_value: null,
        ttl_recommendation: null,
        example_bind: null,
        auto_verified: true,
        message: `${row.domain} is hosted in your Fjord DNS zone, so it is verified without a record.`,
        cname_record_name: null,
        cname_record_value: null,
        cname_example_bind: null,
      };
    }
    const token = row.token ?? '';
    const txtName = this.txtName(row.domain);
    const txtValue = `fjord-domain-verification=${token}`;
    const cname = { name: this.cnameName(row.domain, token), value: this.cnameValue(token) };
    const cnameBind = `${cname.name}. ${TTL_RECOMMENDATION} IN CNAME ${cname.value}.`;
    const isCname = row.method === 'DNS_CNAME';
    return {
      method: row.method,
      record_type: isCname ? 'CNAME' : 'TXT',
      record_name: isCname ? cname.name : txtName,
      record_value: isCname ? cname.value : txtValue,
      ttl_recommendation: TTL_RECOMMENDATION,
      example_bind: isCname ? cnameBind : `${txtName}. ${TTL_RECOMMENDATION} IN TXT "${txtValue}"`,
      auto_verified: false,
      message: isCname
        ? `Create a CNAME record at ${cname.name} pointing to ${cname.value}, then call verify.`
        : `Create a TXT record at ${txtName} with the value ${txtValue}, then call verify.`,
      cname_record_name: isCname ? cname.name : null,
      cname_record_value: isCname ? cname.value : null,
      cname_example_bind: isCname ? cnameBind : null,
    };
  }

  view(row: DomainVerificationsTable) {
    const instructions = this.instructions(row);
    return {
      id: row.id,
      domain: row.domain,
      purpose: row.purpose,
      status: row.status,
      verification_method: row.method,
      verification_token: row.token,
      instructions,
      dns_instructions: instructions.record_type
        ? {
            record_type: instructions.record_type,
            host: instructions.record_name,
            value: instructions.record_value,
          }
        : null,
      internal_dns_zone_id: row.internal_zone_id,
      dns_challenge: row.token,
      dns_record_name: instructions.record_name,
      verification_attempts: row.attempts,
      verified_at: isoOf(row.verified_at),
      last_checked_at: isoOf(row.last_checked_at),
      failed_reason: row.failed_reason,
      created_at: isoOf(row.created_at) as string,
      updated_at: isoOf(row.updated_at) as string,
      metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    };
  }
}
