import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useMemo } from 'preact/hooks';
import { apiClient, currentSession, publicApi } from './api.js';
import { Ctx } from './context.js';
import { SignIn } from './pages/sign-in.js';
import { Shell } from './shell.js';
import { applyTheme, initialTheme } from './theme.js';

applyTheme(initialTheme());

/** Signed in (the shell) or not (the sign-in form), as `GET /console/session` says. */
export function App() {
  const queries = useQueryClient();
  const session = useQuery({
    queryKey: ['session'],
    queryFn: currentSession,
    staleTime: Number.POSITIVE_INFINITY,
  });
  const ctx = useMemo(() => {
    const s = session.data;
    if (!s) return null;
    return {
      session: s,
      api: apiClient(s),
      signOut: async () => {
        await publicApi.DELETE('/console/session', { headers: { 'x-fjord-csrf': s.csrf_token } });
        // The session's answer first (the sign-in form shows), then everything fetched with it.
        queries.setQueryData(['session'], null);
        queries.removeQueries({ predicate: (q) => q.queryKey[0] !== 'session' });
      },
    };
  }, [session.data, queries]);
  if (session.isLoading) return <p role="status">Loading…</p>;
  if (!ctx) return <SignIn onSignedIn={(s) => queries.setQueryData(['session'], s)} />;
  return (
    <Ctx.Provider value={ctx}>
      <Shell />
    </Ctx.Provider>
  );
}
