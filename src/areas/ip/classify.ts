/**
 * `connection_type` from the autonomous system, as ipinfo's `type` is: a shipped list of hosting
 * and cloud networks by number first, then words in the registered name. The rules are data,
 * documented in docs/ip-intelligence.md; `unknown` when nothing matches, never a guess.
 */
export const CONNECTION_TYPES = [
  'residential',
  'mobile',
  'business',
  'datacenter',
  'hosting',
  'education',
  'government',
  'unknown',
] as const;
export type ConnectionType = (typeof CONNECTION_TYPES)[number];

/** Cloud providers' own networks (datacenter) and hosting companies (hosting), by ASN. */
const BY_ASN: Record<number, ConnectionType> = {
  // Cloud platforms
  16509: 'datacenter', // Amazon
  14618: 'datacenter', // Amazon
  15169: 'datacenter', // Google
  396982: 'datacenter', // Google Cloud
  8075: 'datacenter', // Microsoft
  13335: 'datacenter', // Cloudflare
  31898: 'datacenter', // Oracle Cloud
  45102: 'datacenter', // Alibaba Cloud
  132203: 'datacenter', // Tencent Cloud
  20940: 'datacenter', // Akamai
  54113: 'datacenter', // Fastly
  // Hosting companies
  14061: 'hosting', // DigitalOcean
  24940: 'hosting', // Hetzner
  16276: 'hosting', // OVH
  63949: 'hosting', // Linode / Akamai Connected Cloud
  20473: 'hosting', // Vultr (Choopa)
  12876: 'hosting', // Scaleway
  51167: 'hosting', // Contabo
  60781: 'hosting', // Leaseweb
  8560: 'hosting', // IONOS
  197540: 'hosting', // netcup
  // Research and education networks
  224: 'education', // Sikt (UNINETT), Norway
  1653: 'education', // SUNET, Sweden
  1835: 'education', // DeiC (Forskningsnettet), Denmark
  1741: 'education', // Funet, Finland
  2603: 'education', // NORDUnet
};

const BY_NAME: [RegExp, ConnectionType][] = [
  [/\b(universit|college|school|education|academic|research and education|forskning)/i, 'education'],
  [
    /\b(government|ministry|municipality|kommune|federal|national police|armed forces|defen[cs]e)\b/i,
    'government',
  ],
  [/\b(mobile|wireless|cellular|lte|5g)\b/i, 'mobile'],
  [/\b(hosting|host|cloud|data ?cent(er|re)|datacenter|colocation|server|vps)\b/i, 'hosting'],
  [
    /\b(broadband|cable|fiber|fibre|dsl|telecom|telekom|telenor|telia|internet service|isp)\b/i,
    'residential',
  ],
  [/\b(bank|insurance|group|corporation|holding|industries|gmbh|ab|asa)\b/i, 'business'],
];

export function connectionTypeOf(asn: number | null, name: string | null): ConnectionType {
  if (asn !== null && BY_ASN[asn]) return BY_ASN[asn];
  if (name) for (const [re, type] of BY_NAME) if (re.test(name)) return type;
  return 'unknown';
}

/** The `datacenter` flag: addresses of cloud or hosting networks. */
export const isDatacenter = (t: ConnectionType) => t === 'datacenter' || t === 'hosting';
