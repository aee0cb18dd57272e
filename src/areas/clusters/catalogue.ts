/**
 * The clusters catalogue: plans, regions and Kubernetes versions, and the price arithmetic.
 * Money is kept in integer minor units (øre, cents) so that sums never drift; each estimate line
 * is rounded half up to a whole minor unit once, after the region multiplier.
 */
export const CURRENCIES = ['NOK', 'SEK', 'DKK', 'EUR', 'USD'] as const;
export type Currency = (typeof CURRENCIES)[number];

/** Fixed list-price conversion from NOK in basis points (price lists are set, not floating). */
const FROM_NOK_BP: Record<Currency, number> = { NOK: 10_000, SEK: 10_000, DKK: 6_500, EUR: 870, USD: 940 };
/** `amount × bp / 10000` rounded half up, in integers only: no float drift. */
export const applyBp = (amount: number, bp: number) => Math.floor((amount * bp + 5_000) / 10_000);
/** A region multiplier such as 1.05 as basis points (10500). */
export const bpOf = (multiplier: number) => Math.round(multiplier * 10_000);
/** A month of hourly billing: 730 hours, as the large clouds count it. */
export const HOURS_PER_MONTH = 730;

export type PlanKind = 'controlplane' | 'node' | 'ip' | 'lb' | 'storage' | 'backup';
interface PlanRow {
  plan_code: string;
  kind: PlanKind;
  name: string;
  cpu_cores: number;
  ram_mb: number;
  disk_gb: number;
  /** Monthly list price in NOK øre. */
  monthlyNokMinor: number;
}

const PLANS: PlanRow[] = [
  {
    plan_code: 'k8s-cluster-dev',
    kind: 'controlplane',
    name: 'Development control plane',
    cpu_cores: 0,
    ram_mb: 0,
    disk_gb: 0,
    monthlyNokMinor: 0,
  },
  {
    plan_code: 'k8s-cluster-prod',
    kind: 'controlplane',
    name: 'Production control plane (HA)',
    cpu_cores: 0,
    ram_mb: 0,
    disk_gb: 0,
    monthlyNokMinor: 99_900,
  },
  {
    plan_code: 'k8s-node-s',
    kind: 'node',
    name: 'Node S',
    cpu_cores: 2,
    ram_mb: 4096,
    disk_gb: 80,
    monthlyNokMinor: 36_500,
  },
  {
    plan_code: 'k8s-node-m',
    kind: 'node',
    name: 'Node M',
    cpu_cores: 4,
    ram_mb: 8192,
    disk_gb: 160,
    monthlyNokMinor: 73_000,
  },
  {
    plan_code: 'k8s-node-l',
    kind: 'node',
    name: 'Node L',
    cpu_cores: 8,
    ram_mb: 16384,
    disk_gb: 320,
    monthlyNokMinor: 146_000,
  },
  {
    plan_code: 'k8s-ip-floating',
    kind: 'ip',
    name: 'Floating IPv4 address',
    cpu_cores: 0,
    ram_mb: 0,
    disk_gb: 0,
    monthlyNokMinor: 3_000,
  },
  {
    plan_code: 'k8s-lb',
    kind: 'lb',
    name: 'Load balancer',
    cpu_cores: 0,
    ram_mb: 0,
    disk_gb: 0,
    monthlyNokMinor: 14_900,
  },
  {
    plan_code: 'k8s-storage-100',
    kind: 'storage',
    name: 'Volume storage, 100 GB',
    cpu_cores: 0,
    ram_mb: 0,
    disk_gb: 100,
    monthlyNokMinor: 9_900,
  },
  {
    plan_code: 'k8s-backup-100',
    kind: 'backup',
    name: 'Backup storage, 100 GB',
    cpu_cores: 0,
    ram_mb: 0,
    disk_gb: 100,
    monthlyNokMinor: 4_900,
  },
];
export const DEFAULT_CONTROL_PLANE = 'k8s-cluster-dev';
/** The control planes that run on a trial: free for the trial, then the cluster is suspended. */
export const TRIAL_PLANS = new Set(['k8s-cluster-dev']);
export const TRIAL_DAYS = 14;

export const REGIONS = [
  {
    code: 'no',
    name: 'Norway',
    city: 'Oslo',
    country_code: 'NO',
    kubernetes_available: true,
    price_multiplier: 1,
  },
  {
    code: 'se',
    name: 'Sweden',
    city: 'Stockholm',
    country_code: 'SE',
    kubernetes_available: true,
    price_multiplier: 1,
  },
  {
    code: 'dk',
    name: 'Denmark',
    city: 'Copenhagen',
    country_code: 'DK',
    kubernetes_available: true,
    price_multiplier: 1.05,
  },
  {
    code: 'fi',
    name: 'Finland',
    city: 'Helsinki',
    country_code: 'FI',
    kubernetes_available: false,
    price_multiplier: 1.1,
  },
];
export const DEFAULT_REGION = 'no';

/** Offered versions, oldest first; an upgrade moves one minor version at a time. */
export const VERSIONS = [
  { version: '1.32', default: false, end_of_support: '2026-02-28' },
  { version: '1.33', default: false, end_of_support: '2026-06-28' },
  { version: '1.34', default: true, end_of_support: '2026-10-27' },
  { version: '1.35', default: false, end_of_support: '2027-02-28' },
];
export const DEFAULT_VERSION = VERSIONS.find((v) => v.default)!.version;

export const planOf = (code: string) => PLANS.find((p) => p.plan_code === code);
export const regionOf = (code: string) => REGIONS.find((r) => r.code === code);

/** Monthly price of a plan in minor units of a currency, before any region multiplier. */
export function monthlyMinor(plan: { monthlyNokMinor: number }, currency: Currency): number {
  return applyBp(plan.monthlyNokMinor, FROM_NOK_BP[currency]);
}
const major = (minor: number) => minor / 100;

export function planViews(kind?: string, multiplier = 1) {
  return PLANS.filter((p) => !kind || p.kind === kind).map((p) => {
    const prices: Record<string, number> = {};
    const hourly: Record<string, number> = {};
    for (const c of CURRENCIES) {
      const m = applyBp(monthlyMinor(p, c), bpOf(multiplier));
      prices[c] = major(m);
      hourly[c] = Math.round((m / HOURS_PER_MONTH) * 100) / 10_000;
    }
    return {
      plan_code: p.plan_code,
      kind: p.kind,
      name: p.name,
      cpu_cores: p.cpu_cores,
      ram_mb: p.ram_mb,
      disk_gb: p.disk_gb,
      prices,
      hourly,
    };
  });
}

export interface EstimateLine {
  item: string;
  quantity: number;
  monthly: number;
}

/** The monthly estimate: control plane, each pool's nodes × node plan, the included gateway IP. */
export function estimate(
  controlPlane: string,
  pools: { name: string; plan_code: string; count: number }[],
  currency: Currency,
  multiplier: number,
) {
  const line = (item: string, quantity: number, unitMinor: number) => ({
    item,
    quantity,
    minor: applyBp(unitMinor * quantity, bpOf(multiplier)),
  });
  const cp = planOf(controlPlane)!;
  const rows = [line(`controlplane:${cp.plan_code}`, 1, monthlyMinor(cp, currency))];
  for (const p of pools)
    rows.push(
      line(`node_pool:${p.name}:${p.plan_code}`, p.count, monthlyMinor(planOf(p.plan_code)!, currency)),
    );
  rows.push(line('ip:gateway (included)', 1, 0));
  const total = rows.reduce((s, r) => s + r.minor, 0);
  return {
    currency,
    region_multiplier: multiplier,
    lines: rows.map((r) => ({ item: r.item, quantity: r.quantity, monthly: major(r.minor) })),
    monthly_total: major(total),
  };
}

/** Days in the year that turn a monthly price into a daily one (12 months over 365 days). */
const DAYS_PER_YEAR = 365;

/**
 * The price of one day of a plan billed per day (floating addresses), per currency: the monthly
 * price after the region multiplier, × 12 / 365, rounded half up to a whole minor unit.
 */
export function dailyPrices(planCode: string, multiplier: number): Record<string, number> {
  const plan = planOf(planCode)!;
  const out: Record<string, number> = {};
  for (const c of CURRENCIES) {
    const monthly = applyBp(monthlyMinor(plan, c), bpOf(multiplier));
    out[c] = major(Math.floor((monthly * 12 * 2 + DAYS_PER_YEAR) / (DAYS_PER_YEAR * 2)));
  }
  return out;
}
