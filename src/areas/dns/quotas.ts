/**
 * Doc 1's plan quotas for DNS: zones per customer and records per zone. Enterprise quotas are
 * "custom": unlimited here unless an operator sets otherwise in a later version. Queries per
 * month are counted (statistics) but not enforced: refusing to answer would break the
 * customer's domain, and the documents do not say what should happen.
 */
export interface DnsQuota {
  zones: number | null;
  recordsPerZone: number | null;
}

export const DNS_QUOTAS: Record<string, DnsQuota> = {
  free: { zones: 3, recordsPerZone: 100 },
  basic: { zones: 10, recordsPerZone: 500 },
  pro: { zones: 50, recordsPerZone: 2000 },
  enterprise: { zones: null, recordsPerZone: null },
};

export const quotaOf = (plan: string | undefined): DnsQuota =>
  DNS_QUOTAS[plan ?? 'free'] ?? DNS_QUOTAS['free']!;
