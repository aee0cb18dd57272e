import { createFjordClient, type FjordClient } from '../../sdk/index.js';

/** Who is signed in, as `GET /console/session` says. */
export interface Session {
  kind: 'customer' | 'operator';
  customer_id: string | null;
  expires_at: string;
  csrf_token: string;
}

/**
 * The API through the generated SDK. The session cookie goes with every request on its own
 * (same origin, HttpOnly: this script never sees it); the CSRF token, which the cookie alone
 * does not carry, is sent in its header.
 */
export function apiClient(session: Session): FjordClient {
  return createFjordClient({
    baseUrl: location.origin,
    credentials: 'same-origin',
    headers: { 'x-fjord-csrf': session.csrf_token },
  });
}

/** An anonymous client: sign-in and the session check. */
export const publicApi = createFjordClient({ baseUrl: location.origin, credentials: 'same-origin' });

export async function currentSession(): Promise<Session | null> {
  const { data } = await publicApi.GET('/console/session');
  return data ?? null;
}

/** `{detail: {code, message, errors}}` as the API answers, or a network failure. */
export interface ApiProblem {
  status: number;
  message: string;
  /** Field problems of a 422, by JSON pointer into the body (`/body/name`). */
  fields: Record<string, string>;
}

export function problemOf(error: unknown, status: number): ApiProblem {
  const detail = (error as { detail?: { message?: string; errors?: { path: string; message: string }[] } })
    ?.detail;
  const fields: Record<string, string> = {};
  for (const e of detail?.errors ?? []) fields[e.path.replace(/^\/body\/?/, '')] = e.message;
  const message =
    detail?.message ??
    (error as { message?: string })?.message ??
    (typeof error === 'string' ? error : `The request failed (${status}).`);
  return { status, message, fields };
}

/**
 * The SDK's `{data, error, response}` as a value or a thrown ApiProblem, for TanStack Query
 * (which wants a throw on failure).
 */
export async function must<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw problemOf(error, response.status);
  return data as T;
}
