import { useQuery } from '@tanstack/preact-query';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { must, publicApi, type Session } from '../api.js';
import { QueryView } from '../ui/widgets.js';

/** Why a sign-in through the issuer came back without a session (`?sign_in_error=`, set by Fjord). */
const OIDC_PROBLEMS: Record<string, string> = {
  issuer: 'The sign-in service could not be reached. Try again, or sign in with a token.',
  denied: 'The sign-in service did not sign you in.',
  expired: 'That sign-in took too long or was not started here. Try again.',
  exchange: 'The sign-in service refused to complete the sign-in. Try again.',
  token: 'The sign-in service’s answer could not be verified.',
  no_customer:
    'You signed in, but no Fjord account is linked to that identity (or it is suspended). Ask the operator.',
};

/**
 * The sign-in form: a PAT (or the operator token) exchanged for a session cookie. The token is
 * sent once and kept nowhere in the browser; the field is a password field, so it is not shown
 * or remembered by the browser's autofill as text.
 */
export function SignIn({ onSignedIn }: { onSignedIn(s: Session): void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState('');
  const oidc = useQuery({
    queryKey: ['oidc-sign-in'],
    queryFn: () => must(publicApi.GET('/console/oidc')),
    staleTime: Number.POSITIVE_INFINITY,
  });
  // Read once, then dropped from the address: a reload should not show it again. A layout
  // effect runs in the same task as the commit that draws the alert, so nobody (a user
  // copying the address, a test) sees the alert beside the stale address.
  const [oidcProblem] = useState(() => new URLSearchParams(location.search).get('sign_in_error'));
  useLayoutEffect(() => {
    if (oidcProblem) history.replaceState(history.state, '', location.pathname);
  }, [oidcProblem]);
  const [busy, setBusy] = useState(false);
  const field = useRef<HTMLInputElement>(null);
  useEffect(() => {
    document.title = 'Sign in — Fjord console';
    field.current?.focus();
  }, []);
  return (
    <main class="sign-in">
      <h1>Fjord console</h1>
      {oidcProblem && (
        <p class="error" role="alert">
          {OIDC_PROBLEMS[oidcProblem] ?? 'Signing in failed. Try again.'}
        </p>
      )}
      <QueryView query={oidc} what="sign-in options">
        {(o) =>
          o.available && o.start_url ? (
            <p class="oidc">
              {/* A link, not a form: the page's form-action CSP would refuse the redirect to the issuer. */}
              <a class="button primary" href={o.start_url}>
                Sign in with {o.name}
              </a>
              <span class="help"> or with a token:</span>
            </p>
          ) : null
        }
      </QueryView>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          setError('');
          const { data, error: failed } = await publicApi.POST('/console/session', { body: { token } });
          setBusy(false);
          setToken('');
          if (data) return onSignedIn(data);
          setError(
            (failed as { detail?: { message?: string } })?.detail?.message ?? 'Signing in failed. Try again.',
          );
          field.current?.focus();
        }}
      >
        <label for="token">Personal access token (or operator token)</label>
        <input
          id="token"
          ref={field}
          type="password"
          autoComplete="off"
          spellcheck={false}
          required
          value={token}
          aria-invalid={error ? 'true' : undefined}
          aria-describedby={error ? 'token-error' : 'token-help'}
          onInput={(e) => setToken(e.currentTarget.value)}
        />
        <small id="token-help" class="help">
          Create one with <code>fjord</code> or the API (<code>POST /v1/account/api-keys/pat</code>); the
          emulator's development PAT is in its <code>dev-credentials.json</code>.
        </small>
        {error && (
          <p id="token-error" class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" class="primary" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}
