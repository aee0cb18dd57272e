import type { AuditTrail } from '../../kernel/audit/audit.js';
import type { Credential } from '../../kernel/auth/principal.js';

/**
 * The storage area's audit entries for one kind of resource (buckets, keys, KMS keys). `byDefault`
 * names who acted when no credential did (an S3 request, a job), where the entry needs one.
 */
export function storageAuditor(
  audit: AuditTrail,
  resourceType: string,
  byDefault?: { kind: 'system'; id: null },
) {
  return (
    customerId: string,
    actor: Credential | null,
    action: string,
    resourceId: string,
    details?: Record<string, unknown>,
  ) =>
    audit.record({
      customerId,
      area: 'storage',
      action,
      resourceType,
      resourceId,
      actor: actor ?? byDefault,
      details,
    });
}
