/**
 * Report categories, AbuseIPDB's list (same numbers, so tools written for it map directly), each
 * with the weight it gives a report in the threat score and the flag it raises.
 */
export interface Category {
  id: number;
  slug: string;
  weight: number;
  flag?: 'proxy' | 'vpn' | 'botnet';
}

export const CATEGORIES: Category[] = [
  { id: 1, slug: 'dns_compromise', weight: 0.8 },
  { id: 2, slug: 'dns_poisoning', weight: 0.8 },
  { id: 3, slug: 'fraud_orders', weight: 0.7 },
  { id: 4, slug: 'ddos_attack', weight: 1.0 },
  { id: 5, slug: 'ftp_brute_force', weight: 0.8 },
  { id: 6, slug: 'ping_of_death', weight: 0.6 },
  { id: 7, slug: 'phishing', weight: 1.0 },
  { id: 8, slug: 'fraud_voip', weight: 0.7 },
  { id: 9, slug: 'open_proxy', weight: 0.5, flag: 'proxy' },
  { id: 10, slug: 'web_spam', weight: 0.4 },
  { id: 11, slug: 'email_spam', weight: 0.5 },
  { id: 12, slug: 'blog_spam', weight: 0.3 },
  { id: 13, slug: 'vpn_ip', weight: 0.2, flag: 'vpn' },
  { id: 14, slug: 'port_scan', weight: 0.5 },
  { id: 15, slug: 'hacking', weight: 1.0 },
  { id: 16, slug: 'sql_injection', weight: 0.9 },
  { id: 17, slug: 'spoofing', weight: 0.7 },
  { id: 18, slug: 'brute_force', weight: 0.8 },
  { id: 19, slug: 'bad_web_bot', weight: 0.4 },
  { id: 20, slug: 'exploited_host', weight: 0.9, flag: 'botnet' },
  { id: 21, slug: 'web_app_attack', weight: 0.9 },
  { id: 22, slug: 'ssh', weight: 0.8 },
  { id: 23, slug: 'iot_targeted', weight: 0.8 },
];

const BY_ID = new Map(CATEGORIES.map((c) => [c.id, c]));
const BY_SLUG = new Map(CATEGORIES.map((c) => [c.slug, c]));

/** A category given by number (AbuseIPDB's) or by slug; undefined when unknown. */
export function categoryOf(value: number | string): Category | undefined {
  if (typeof value === 'number') return BY_ID.get(value);
  const n = Number(value);
  return Number.isInteger(n) && String(n) === value ? BY_ID.get(n) : BY_SLUG.get(value.toLowerCase());
}
