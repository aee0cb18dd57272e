/**
 * Response rate limiting in the manner of BIND's RRL: a token bucket per client netblock (/24
 * for IPv4, /56 for IPv6) and response class — the same name and type for answers, the zone
 * for negative answers (so random names do not escape the limit), one bucket for errors. Over
 * the limit, every `slip`-th response goes out truncated (TC, no records: a real client retries
 * over TCP, which is not rate limited) and the others are dropped, so a spoofed source cannot
 * turn the server into an amplifier.
 */
export type RrlDecision = 'send' | 'slip' | 'drop';

interface Bucket {
  tokens: number;
  at: number;
  limited: number;
}

const SWEEP_SIZE = 100_000;

export class ResponseRateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    /** Responses per second per bucket; the burst allowance is one second's worth. */
    private readonly rate: number,
    private readonly slip = 2,
    private readonly now: () => number = Date.now,
  ) {}

  get enabled(): boolean {
    return this.rate > 0;
  }

  check(address: string, responseClass: string): RrlDecision {
    if (this.rate <= 0) return 'send';
    const key = `${netblock(address)}|${responseClass}`;
    const now = this.now();
    let bucket = this.buckets.get(key);
    if (!bucket) {
      if (this.buckets.size >= SWEEP_SIZE) this.sweep(now);
      bucket = { tokens: this.rate, at: now, limited: 0 };
      this.buckets.set(key, bucket);
    } else {
      bucket.tokens = Math.min(this.rate, bucket.tokens + ((now - bucket.at) / 1000) * this.rate);
      bucket.at = now;
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 'send';
    }
    bucket.limited++;
    return this.slip > 0 && bucket.limited % this.slip === 0 ? 'slip' : 'drop';
  }

  /** Forgets buckets that have refilled: they hold no information. */
  private sweep(now: number): void {
    for (const [key, b] of this.buckets) {
      if (b.tokens + ((now - b.at) / 1000) * this.rate >= this.rate) this.buckets.delete(key);
    }
    if (this.buckets.size >= SWEEP_SIZE) this.buckets.clear();
  }
}

export function netblock(address: string): string {
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  if (v4.includes('.')) return v4.slice(0, v4.lastIndexOf('.'));
  // /56: the first three groups and the high byte of the fourth, after expanding '::'.
  const [head, tail] = address.includes('::') ? address.split('::') : [address, ''];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = [...h, ...new Array(Math.max(0, 8 - h.length - t.length)).fill('0'), ...t];
  return `${groups.slice(0, 3).join(':')}:${(Number.parseInt(groups[3] ?? '0', 16) >> 8).toString(16)}`;
}

/** A TC response carrying only the header and question (the "slip"). */
export function slipResponse(response: Buffer, questionEnd: number): Buffer {
  const out = Buffer.from(response.subarray(0, Math.min(questionEnd, response.length)));
  out[2]! |= 0x02;
  out.fill(0, 6, 12);
  return out;
}
