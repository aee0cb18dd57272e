import { useEffect, useRef, useState } from 'preact/hooks';
import { publicApi, type Session } from '../api.js';

/**
 * The sign-in form: a PAT (or the operator token) exchanged for a session cookie. The token is
 * sent once and kept nowhere in the browser; the field is a password field, so it is not shown
 * or remembered by the browser's autofill as text.
 */
export function SignIn({ onSignedIn }: { onSignedIn(s: Session): void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const field = useRef<HTMLInputElement>(null);
  useEffect(() => {
    document.title = 'Sign in — Fjord console';
    field.current?.focus();
  }, []);
  return (
    <main class="sign-in">
      <h1>Fjord console</h1>
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
