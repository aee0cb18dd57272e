import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/**
 * A small router over the History API: the console's pages live under /console/, and a list's
 * search, sort and page are in the address's query, so a link or a reload shows the same view.
 */
export const BASE = '/console';

const listeners = new Set<() => void>();
const notify = () => {
  for (const l of listeners) l();
};
addEventListener('popstate', notify);

export function navigate(to: string, replace = false) {
  const url = to.startsWith(BASE) ? to : `${BASE}${to}`;
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  notify();
  if (!replace) scrollTo(0, 0);
}

/**
 * For an action that outlives a page visit (an upload, a create): a navigate that goes only if
 * the reader is still on the page the action started from, so a finished upload does not pull
 * someone who has moved on back to its result.
 */
export function navigateIfStillHere(): (to: string) => void {
  const from = location.pathname;
  return (to) => {
    if (location.pathname === from) navigate(to);
  };
}

/** The path under /console (`/storage/buckets/x`) and the query, re-rendered on navigation. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const [, setTick] = useState(0);
  useEffect(() => {
    const l = () => setTick((t) => t + 1);
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
  const path = location.pathname.slice(BASE.length).replace(/\/+$/, '') || '/';
  return { path, query: new URLSearchParams(location.search) };
}

/** Sets (or clears) query parameters of the current address, without a new history entry. */
export function setQuery(changes: Record<string, string | null>) {
  const q = new URLSearchParams(location.search);
  for (const [k, v] of Object.entries(changes)) {
    if (v === null || v === '') q.delete(k);
    else q.set(k, v);
  }
  const s = q.toString();
  navigate(`${location.pathname}${s ? `?${s}` : ''}`, true);
}

/** Matches `/dns/zones/:zone` against a path: the parameters, or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const p = pattern.split('/');
  const a = path.split('/');
  if (p.length !== a.length) return null;
  const out: Record<string, string> = {};
  for (let i = 0; i < p.length; i++) {
    const want = p[i]!;
    if (want.startsWith(':')) out[want.slice(1)] = decodeURIComponent(a[i]!);
    else if (want !== a[i]) return null;
  }
  return out;
}

export function Link({
  href,
  children,
  ...rest
}: { href: string; children: ComponentChildren } & Omit<JSX.HTMLAttributes<HTMLAnchorElement>, 'href'>) {
  const url = `${BASE}${href}`;
  return (
    <a
      {...rest}
      href={url}
      onClick={(e) => {
        if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        navigate(url);
      }}
    >
      {children}
    </a>
  );
}
