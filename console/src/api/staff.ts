/**
 * Staff sign-in with the stage's OpenID Connect provider (docs/behaviour.md#staff-sign-in): the
 * console is a public client, Authorization Code with PKCE (S256) in the browser. It asks the API
 * for a nonce, sends the person to the provider with that nonce, a random `state` and the PKCE
 * challenge (all three kept in this tab's sessionStorage for the round trip), and on the way back
 * checks the state, trades the code at the provider's token endpoint and sends the ID token to
 * `POST /console-sessions`, which verifies it and answers a `wss_` staff session. WebCrypto does
 * the hashing and the randomness: no dependency.
 */
import { ApiProblem, apiBase, sendJson, toProblem } from './client';
import { ROUTES, type ResponseOf } from './contract';
import type { StaffRole } from '../../../lambdas/contract/console-oidc';

/**
 * The stage's provider as the console page's `<meta name="console-oidc">` gives it (present only
 * when the stage has `consoleOidc` and the provider's discovery answered).
 */
export interface ConsoleOidcTag {
  /** The provider's name on the button ("Sign in with <name>"). */
  readonly name: string;
  readonly issuer: string;
  readonly clientId: string;
  readonly scopes: readonly string[];
  readonly authorizationEndpoint: string;
  readonly tokenEndpoint: string;
  /** The console's own address, registered at the provider: it comes back here with `?code&state`. */
  readonly redirectUri: string;
}

/** What `POST /console-sessions` answers: the session token, its id, the person, the role and its end. */
export type StaffSignIn = ResponseOf<'createConsoleSession'>;

/** What the console keeps of a staff session besides its token. */
export interface StaffSession {
  readonly sessionId: string;
  readonly email: string;
  readonly role: StaffRole;
  readonly expiresAt: string;
}

const isWebUrl = (value: unknown): value is string => {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
};

/** The tag's JSON as a {@link ConsoleOidcTag}, or null when it is absent or does not read as one (token sign-in only). */
export function parseOidcTag(content: string | null | undefined): ConsoleOidcTag | null {
  if (!content) return null;
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch {
    return null;
  }
  if (!value || typeof value !== 'object') return null;
  const v = value as Record<string, unknown>;
  const { name, issuer, clientId, scopes, authorizationEndpoint, tokenEndpoint, redirectUri } = v;
  if (typeof name !== 'string' || !name.trim() || typeof clientId !== 'string' || !clientId) return null;
  if (!Array.isArray(scopes) || !scopes.every((s) => typeof s === 'string')) return null;
  if (![issuer, authorizationEndpoint, tokenEndpoint, redirectUri].every(isWebUrl)) return null;
  return {
    name: name.trim(),
    issuer: issuer as string,
    clientId,
    scopes,
    authorizationEndpoint: authorizationEndpoint as string,
    tokenEndpoint: tokenEndpoint as string,
    redirectUri: redirectUri as string,
  };
}

/** The provider of this console page, or null when the stage offers token sign-in only. */
export function readOidcTag(): ConsoleOidcTag | null {
  return parseOidcTag(document.querySelector('meta[name="console-oidc"]')?.getAttribute('content'));
}

function base64url(bytes: Uint8Array): string {
  let text = '';
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** `bytes` random bytes as base64url: a PKCE verifier (43 characters for 32 bytes) or a `state`. */
export function randomString(bytes = 32): string {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

/** The PKCE S256 challenge of a verifier: base64url(SHA-256(verifier)) (RFC 7636 §4.2). */
export async function pkceChallenge(verifier: string): Promise<string> {
  return base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
}

/** The authorization request the person is sent to. */
export function authorizationUrl(tag: ConsoleOidcTag, request: { state: string; nonce: string; codeChallenge: string }): string {
  const url = new URL(tag.authorizationEndpoint);
  const params: Record<string, string> = {
    client_id: tag.clientId,
    redirect_uri: tag.redirectUri,
    response_type: 'code',
    scope: tag.scopes.join(' '),
    state: request.state,
    nonce: request.nonce,
    code_challenge: request.codeChallenge,
    code_challenge_method: 'S256',
  };
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  return url.href;
}

/** What this tab keeps between leaving for the provider and coming back. */
interface PendingSignIn {
  readonly state: string;
  readonly codeVerifier: string;
}

const PENDING_KEY = 'webhooks-console-staff-sign-in';

/**
 * Starts a staff sign-in: a nonce from the API, a fresh `state` and PKCE verifier kept in this
 * tab, and the address of the provider's authorization request to send the person to. Rejects
 * with an {@link ApiProblem} when the API gives no nonce.
 */
export async function startStaffSignIn(tag: ConsoleOidcTag): Promise<string> {
  const { response, json } = await sendJson(`${apiBase()}${ROUTES.createConsoleNonce.path}`, {
    method: 'POST',
    headers: { accept: 'application/json, application/problem+json' },
  });
  if (!response.ok) throw toProblem(response, json);
  const { nonce } = json as ResponseOf<'createConsoleNonce'>;
  const pending: PendingSignIn = { state: randomString(), codeVerifier: randomString() };
  sessionStorage.setItem(PENDING_KEY, JSON.stringify(pending));
  return authorizationUrl(tag, { state: pending.state, nonce, codeChallenge: await pkceChallenge(pending.codeVerifier) });
}

/** The provider's answer in the console's address: a code, or an error (`access_denied` when the person declined). */
export type StaffCallback =
  | { readonly code: string; readonly state: string | null }
  | { readonly error: string; readonly description: string | null; readonly state: string | null };

/** The callback in a query string (`?code&state` or `?error&error_description&state`), or null when it carries none. */
export function parseStaffCallback(search: string): StaffCallback | null {
  const query = new URLSearchParams(search);
  const state = query.get('state');
  const error = query.get('error');
  if (error) return { error, description: query.get('error_description'), state };
  const code = query.get('code');
  return code ? { code, state } : null;
}

/**
 * The provider's answer in the current address, removed from the address bar and the history
 * entry at once (a reload, a copied URL or the Back button never carries the code). Null when
 * the address has none.
 */
export function takeStaffCallback(): StaffCallback | null {
  const callback = parseStaffCallback(location.search);
  if (callback) history.replaceState(null, '', `${location.pathname}${location.hash}`);
  return callback;
}

/** Why a staff sign-in did not end in a session, for the sign-in page to say in words. */
export type StaffRefusal =
  /** The answer came back with another `state` than this tab sent, or to a tab that started no sign-in. */
  | { readonly kind: 'state-mismatch' }
  /** The provider answered `?error=…` (`access_denied`: the person declined, or the provider refused them). */
  | { readonly kind: 'provider'; readonly error: string; readonly description: string | null }
  /** The provider's token endpoint did not give an ID token for the code. */
  | { readonly kind: 'token-endpoint'; readonly detail: string }
  /** The API refused the ID token (`InvalidIdToken`, `NoConsoleAccess`…) or could not be reached. */
  | { readonly kind: 'api'; readonly problem: ApiProblem };

/** A staff sign-in that failed, with the reason. */
export class StaffSignInError extends Error {
  constructor(readonly refusal: StaffRefusal) {
    super(refusal.kind);
    this.name = 'StaffSignInError';
  }
}

function takePending(): PendingSignIn | null {
  try {
    const raw = sessionStorage.getItem(PENDING_KEY);
    sessionStorage.removeItem(PENDING_KEY);
    const value = raw ? (JSON.parse(raw) as Partial<PendingSignIn>) : null;
    return value && typeof value.state === 'string' && typeof value.codeVerifier === 'string'
      ? { state: value.state, codeVerifier: value.codeVerifier }
      : null;
  } catch {
    return null;
  }
}

/** The ID token the token endpoint gives for `code`. */
async function tradeCode(tag: ConsoleOidcTag, code: string, codeVerifier: string): Promise<string> {
  const body = new URLSearchParams({
    grant_type: 'authorization_code',
    code,
    redirect_uri: tag.redirectUri,
    client_id: tag.clientId,
    code_verifier: codeVerifier,
  });
  let response: Response;
  try {
    response = await fetch(tag.tokenEndpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: body.toString(),
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch (e) {
    throw new StaffSignInError({
      kind: 'token-endpoint',
      detail: `${tag.name} could not be reached (${e instanceof Error ? e.message : String(e)}).`,
    });
  }
  const json = (await response.json().catch(() => null)) as Record<string, unknown> | null;
  if (response.ok && typeof json?.id_token === 'string') return json.id_token;
  const error = typeof json?.error === 'string' ? json.error : `HTTP ${response.status}`;
  const description = typeof json?.error_description === 'string' ? `: ${json.error_description}` : '';
  throw new StaffSignInError({ kind: 'token-endpoint', detail: `${tag.name} did not give an ID token (${error}${description}).` });
}

/**
 * Completes a staff sign-in from the provider's answer: the state must be the one this tab
 * sent (it is forgotten either way, so an answer is used once), the code is traded with the PKCE
 * verifier, and the API turns the ID token into a staff session. Rejects with a
 * {@link StaffSignInError} saying why not.
 */
export async function completeStaffSignIn(tag: ConsoleOidcTag, callback: StaffCallback): Promise<StaffSignIn> {
  const pending = takePending();
  if ('error' in callback) throw new StaffSignInError({ kind: 'provider', error: callback.error, description: callback.description });
  if (!pending || callback.state !== pending.state) throw new StaffSignInError({ kind: 'state-mismatch' });
  const idToken = await tradeCode(tag, callback.code, pending.codeVerifier);
  try {
    const { response, json } = await sendJson(`${apiBase()}${ROUTES.createConsoleSession.path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, application/problem+json' },
      body: JSON.stringify({ idToken }),
    });
    if (!response.ok) throw toProblem(response, json);
    return json as StaffSignIn;
  } catch (e) {
    if (e instanceof ApiProblem) throw new StaffSignInError({ kind: 'api', problem: e });
    throw e;
  }
}
