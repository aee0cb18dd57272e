import { type Category, categoryOf } from './categories.js';

/** How much an unverified reporter's report counts against a verified one's (docs/ip-intelligence.md). */
export const UNVERIFIED_TRUST = 0.25;
/** A report's weight halves every this many days. */
export const HALF_LIFE_DAYS = 30;
/** Scale of the saturation: the weighted sum that gives a score of 63. */
const SCALE = 2;
const DAY_MS = 86_400_000;

export const LEVELS = ['clean', 'low', 'medium', 'high', 'critical'] as const;
export type Level = (typeof LEVELS)[number];

/** The stated bands: clean 0, low 1-29, medium 30-59, high 60-84, critical 85-100. */
export function levelOf(score: number): Level {
  if (score <= 0) return 'clean';
  if (score < 30) return 'low';
  if (score < 60) return 'medium';
  if (score < 85) return 'high';
  return 'critical';
}

export interface ReportForScore {
  categories: number[];
  verified: boolean;
  reportedAt: number;
}

/**
 * score = round(100 × (1 − e^(−S / 2))), where S sums over the address's reports:
 * (heaviest category weight) × (1 for a verified reporter, 0.25 otherwise) × 2^(−age / 30 days).
 * One verified report of a heavy category (weight 1) today gives 39; three give 78; a year-old
 * report counts for almost nothing. A score above 0 means at least one report; 100 is never
 * reached exactly but rounds to it under heavy reporting.
 */
export function scoreOf(reports: ReportForScore[], now: number): number {
  let sum = 0;
  for (const r of reports) {
    const weight = Math.max(0, ...r.categories.map((c) => categoryOf(c)?.weight ?? 0));
    const trust = r.verified ? 1 : UNVERIFIED_TRUST;
    const age = Math.max(0, now - r.reportedAt) / DAY_MS;
    sum += weight * trust * 2 ** (-age / HALF_LIFE_DAYS);
  }
  if (sum === 0) return 0;
  // A reported address never scores 0 (that is `clean`, "no reports").
  return Math.max(1, Math.min(100, Math.round(100 * (1 - Math.exp(-sum / SCALE)))));
}

/** The flags the reports' categories raise. */
export function reportFlags(categories: Iterable<number>) {
  const flags = { vpn: false, proxy: false, botnet: false };
  for (const id of categories) {
    const flag = (categoryOf(id) as Category | undefined)?.flag;
    if (flag) flags[flag] = true;
  }
  return flags;
}
