/**
 * Light or dark: the system's choice unless the person picked one, which is remembered (a
 * preference, not a secret, so localStorage is fine for it).
 */
export type Theme = 'light' | 'dark';
const KEY = 'fjord-console-theme';

export function initialTheme(): Theme {
  const saved = localStorage.getItem(KEY);
  if (saved === 'light' || saved === 'dark') return saved;
  return matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

export function applyTheme(theme: Theme, remember = false) {
  document.documentElement.dataset['theme'] = theme;
  if (remember) localStorage.setItem(KEY, theme);
}
