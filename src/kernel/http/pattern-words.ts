/**
 * A validation pattern said in words, for error messages a person can act on: `^[a-z0-9_]+$`
 * becomes "may contain only lower-case letters, digits and underscores". Handles the forms
 * Fjord's schemas use — a run of character classes with quantifiers between `^` and `$`, and a
 * few whole patterns — and returns null for anything else (the caller shows the pattern).
 */
const WHOLE: Record<string, string> = {
  '\\S': 'must not be blank',
  '^https?://': 'must be an http:// or https:// URL',
  '^https://': 'must be an https:// URL',
  '^[^@\\s]+@[^@\\s]+$': 'must be an e-mail address',
};

/** Ranges and characters of a class, in the plural ("digits") and as one of them ("a digit"). */
const NAMED: [RegExp, string, string][] = [
  [/A-Za-z|a-zA-Z/, 'letters', 'a letter'],
  [/a-z/, 'lower-case letters', 'a lower-case letter'],
  [/A-Z/, 'upper-case letters', 'an upper-case letter'],
  [/0-9/, 'digits', 'a digit'],
];
const CHAR_NAMES: Record<string, [string, string]> = {
  _: ['underscores', 'an underscore'],
  '-': ['hyphens', 'a hyphen'],
  '.': ['dots', 'a dot'],
};

/** "lower-case letters, digits and hyphens" for `[a-z0-9-]`; null for a negated or odd class. */
function classWords(body: string): { many: string; one: string } | null {
  if (body.startsWith('^')) return null;
  const many: string[] = [];
  const one: string[] = [];
  let rest = body;
  for (const [re, plural, single] of NAMED) {
    if (re.test(rest)) {
      many.push(plural);
      one.push(single);
      rest = rest.replace(re, '');
    }
  }
  for (const ch of rest.replace(/\\(.)/g, '$1')) {
    if (/[a-zA-Z0-9]/.test(ch) || ch === '\\') return null;
    const [plural, single] = CHAR_NAMES[ch] ?? [`"${ch}"`, `"${ch}"`];
    many.push(plural);
    one.push(single);
  }
  return many.length === 0 ? null : { many: list(many, 'and'), one: list(one, 'or') };
}

const list = (words: string[], last: string) =>
  words.length === 1 ? words[0]! : `${words.slice(0, -1).join(', ')} ${last} ${words[words.length - 1]}`;

interface Token {
  words: { many: string; one: string };
  min: number;
  max: number;
}

/** Tokens of `^…$` made of `[class]` with an optional `+`, `*`, `?` or `{m}`/`{m,n}`. */
function tokens(pattern: string): Token[] | null {
  const m = /^\^(.*)\$$/.exec(pattern);
  if (!m) return null;
  const out: Token[] = [];
  const re = /\[((?:\\.|[^\]\\])+)\](\+|\*|\?|\{(\d+)(?:,(\d*))?\})?/y;
  let at = 0;
  const body = m[1]!;
  while (at < body.length) {
    re.lastIndex = at;
    const t = re.exec(body);
    if (!t) return null;
    const words = classWords(t[1]!);
    if (!words) return null;
    const q = t[2];
    const [min, max] =
      q === undefined
        ? [1, 1]
        : q === '+'
          ? [1, Number.POSITIVE_INFINITY]
          : q === '*'
            ? [0, Number.POSITIVE_INFINITY]
            : q === '?'
              ? [0, 1]
              : [
                  Number(t[3]),
                  t[4] === undefined ? Number(t[3]) : t[4] === '' ? Number.POSITIVE_INFINITY : Number(t[4]),
                ];
    out.push({ words, min, max });
    at = re.lastIndex;
  }
  return out.length > 0 ? out : null;
}

export function patternInWords(pattern: string): string | null {
  const whole = WHOLE[pattern];
  if (whole) return whole;
  const ts = tokens(pattern);
  if (!ts) return null;
  const min = ts.reduce((n, t) => n + t.min, 0);
  const max = ts.reduce((n, t) => n + t.max, 0);
  const length =
    max === Number.POSITIVE_INFINITY
      ? min > 1
        ? `at least ${min} characters: `
        : ''
      : min === max
        ? `exactly ${min} characters: `
        : `${min}-${max} characters: `;
  if (ts.length === 1) return `must be ${length}${ts[0]!.words.many} only`;
  // A body with its own first and last characters, as host-like names have.
  if (ts.length === 3 && ts[0]!.max === 1 && ts[2]!.max === 1 && ts[0]!.words.one === ts[2]!.words.one)
    return `must be ${length}${ts[1]!.words.many}, starting and ending with ${ts[0]!.words.one}`;
  if (ts.length === 2 && ts[0]!.max === 1)
    return `must be ${length}${ts[1]!.words.many}, starting with ${ts[0]!.words.one}`;
  return null;
}
