/**
 * The protocol of staff sign-in (docs/behaviour.md#staff-sign-in) as pure functions, with no page
 * around them (./staff.ts runs them in the page): the provider tag the console page carries, the
 * PKCE S256 challenge and random strings (WebCrypto), the authorization request, and the
 * provider's answer in the console's address.
 */
import type { ConsoleOidcTag } from '../../../lambdas/contract/console-oidc';

export type { ConsoleOidcTag };

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
