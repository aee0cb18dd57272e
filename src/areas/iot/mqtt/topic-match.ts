/** MQTT topic filters: `+` one level, `#` this level and all below (so `a/#` matches `a`). */
export function topicMatches(filter: string, topic: string): boolean {
  if (filter === topic) return true;
  const f = filter.split('/');
  const t = topic.split('/');
  for (let i = 0; i < f.length; i++) {
    const level = f[i];
    if (level === '#') return true;
    if (i >= t.length) return false;
    if (level !== '+' && level !== t[i]) return false;
  }
  return f.length === t.length;
}

/**
 * The first two levels of a filter when both are literal (`devices/<username>`), else null. Every
 * device subscribes below its own root, so indexing filters by it makes finding a publish's
 * subscribers a lookup of a handful of filters, not a walk over all of them.
 */
export function literalStem(filter: string): string | null {
  const a = filter.indexOf('/');
  const b = a < 0 ? -1 : filter.indexOf('/', a + 1);
  const stem = b < 0 ? filter : filter.slice(0, b);
  return /[+#]/.test(stem) ? null : stem;
}

/** The same two levels of a concrete topic. */
export function topicStem(topic: string): string {
  const a = topic.indexOf('/');
  const b = a < 0 ? -1 : topic.indexOf('/', a + 1);
  return b < 0 ? topic : topic.slice(0, b);
}
