/**
 * Staff sign-in with the stage's OpenID Connect provider (docs/behaviour.md#staff-sign-in): the
 * console is a public client, Authorization Code with PKCE (S256) in the browser. It asks the API
 * for a nonce, sends the person to the provider with that nonce, a random `state` and the PKCE
 * challenge (all three kept in this tab's sessionStorage for the round trip), and on the way back
 * checks the state, trades the code at the provider's token endpoint and sends the ID token to
 * `POST /console-sessions`, which verifies it and answers a `wss_` staff session. WebCrypto does
 * the hashing and the randomness: no dependency.
 */
import { CONSOLE_OIDC_META_NAME } from '../../../lambdas/contract/console-oidc';
import { ApiProblem, apiBase, sendJson, toProblem } from './client';
import { ROUTES, type ResponseOf } from './contract';
import {
  authorizationUrl,
  parseOidcTag,
  parseStaffCallback,
  pkceChallenge,
  randomString,
  type ConsoleOidcTag,
  type StaffCallback,
} from './staff-protocol';
import type { StaffRole } from '../../../lambdas/contract/console-oidc';

/** What `POST /console-sessions` answers: the session token, its id, the person, the role and its end. */
export type StaffSignIn = ResponseOf<'createConsoleSession'>;

/** What the console keeps of a staff session besides its token. */
export interface StaffSession {
  readonly sessionId: string;
  readonly email: string;
  readonly role: StaffRole;
  readonly expiresAt: string;
}

/** The provider of this console page, or null when the stage offers token sign-in only. */
export function readOidcTag(): ConsoleOidcTag | null {
  return parseOidcTag(document.querySelector(`meta[name="${CONSOLE_OIDC_META_NAME}"]`)?.getAttribute('content'));
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
