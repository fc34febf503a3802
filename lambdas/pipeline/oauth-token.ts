/**
 * OAuth 2.0 client credentials for the dispatcher (docs/behaviour.md#oauth-20-client-credentials):
 * an access token from the endpoint's token endpoint, cached in the container's memory per endpoint
 * and auth settings until shortly before it expires (docs/architecture.md#oauth-token-cache).
 *
 * The token request goes out as a delivery does: the token URL passes the delivery URL rules, every
 * address its host resolves to is checked and the connection pinned to one (lambdas/domain/webhook-url.ts),
 * redirects are not followed, the response is read as a bounded prefix, and the whole request, name
 * resolution included, runs under its own deadline inside the attempt's. Its body holds the token:
 * nothing of it is kept but the token itself, in memory.
 */
import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import { OAUTH_TOKEN_LIMITS } from '../contract/limits';
import { isServiceFault } from '../domain/delivery-lifecycle';
import type { OAuthClientCredentials } from '../domain/endpoint-options';
import type { SecretSealer } from '../domain/secrets';
import { checkWebhookUrl, isPublicAddress, type UrlCheckOptions } from '../domain/webhook-url';
import { createHttpSender, type PinnedAddress, type Sender } from './http-sender';

/** What a token request needs of the dispatcher: its resolver, URL rules and sealer (to open the client secret). */
interface TokenRequestDeps {
  readonly resolve: (hostname: string) => Promise<PinnedAddress[]>;
  readonly urlPolicy: UrlCheckOptions;
  readonly secrets: SecretSealer;
}

/**
 * A token, or why there is none: `reason` is a service fault (retried, streak unchanged) when the
 * container itself failed, else the token endpoint's failure; `status` its HTTP status when it answered.
 */
type TokenOutcome =
  | { readonly ok: true; readonly token: string; readonly durationMs: number }
  | {
      readonly ok: false;
      readonly serviceFault: string | null;
      readonly status: number | null;
      readonly why: string;
      readonly durationMs: number;
    };

/** Tokens of the endpoints this container delivers to. */
export interface TokenCache {
  /** A token for `auth` of endpoint `endpointId`: the cached one while it is fresh, else a new one, within `budgetMs`. */
  token(endpointId: string, auth: OAuthClientCredentials, deps: TokenRequestDeps, budgetMs: number): Promise<TokenOutcome>;
  /** Forgets the token of `auth` of `endpointId` (the receiver answered 401): the next attempt fetches another. */
  drop(endpointId: string, auth: OAuthClientCredentials): void;
}

/** Options of {@link createTokenCache}; production uses the defaults. */
export interface TokenCacheOptions {
  /** @default OAUTH_TOKEN_LIMITS.deadlineMs */
  readonly deadlineMs?: number;
  /** @default OAUTH_TOKEN_LIMITS.bodyCapBytes */
  readonly bodyCapBytes?: number;
  /** Tokens kept (the oldest dropped first). @default 1000 */
  readonly maxEntries?: number;
  /** The clock. @default Date.now */
  readonly nowMs?: () => number;
}

/** A token request's outcome: a token with its lifetime in seconds (`expires_in`), or the failure. */
type Fetched = (Extract<TokenOutcome, { ok: true }> & { readonly lifetime: number }) | Extract<TokenOutcome, { ok: false }>;

/** How long a token without `expires_in` is used. */
const DEFAULT_LIFETIME_SECONDS = 60;

/** Sockets of the token requests, all token endpoints together: a bound beside the delivery sender's. */
const TOKEN_SOCKETS = 32;

/** What an access token may hold to be sent in a header (RFC 6750 `b64token` is narrower): visible ASCII. */
const TOKEN_TEXT = /^[\x21-\x7e]+$/;

/** The cache key of an endpoint's auth settings: a change of any of them (a new secret included) is another key. */
function cacheKey(endpointId: string, auth: OAuthClientCredentials): string {
  const settings = JSON.stringify([auth.tokenUrl, auth.clientId, auth.clientSecret.ciphertext, auth.scope ?? null, auth.audience ?? null]);
  return `${endpointId}\u0000${createHash('sha256').update(settings).digest('base64url')}`;
}

/** RFC 6749 §2.3.1: client id and secret form-encoded, then `client_secret_basic`. */
function basicAuthorization(clientId: string, secret: string): string {
  const form = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${form(clientId)}:${form(secret)}`).toString('base64')}`;
}

/** A token cache with its own sender (production: one per container). */
export function createTokenCache(options: TokenCacheOptions = {}): TokenCache {
  const deadlineMs = options.deadlineMs ?? OAUTH_TOKEN_LIMITS.deadlineMs;
  const maxEntries = options.maxEntries ?? 1000;
  const nowMs = options.nowMs ?? Date.now;
  const sender: Sender = createHttpSender(
    { deadlineMs, bodyReadMs: deadlineMs, bodyCapBytes: options.bodyCapBytes ?? OAUTH_TOKEN_LIMITS.bodyCapBytes },
    { maxSockets: TOKEN_SOCKETS },
  );
  const fresh = new Map<string, { token: string; until: number }>();
  // Promises, so the records of one batch to one endpoint share one token request.
  const pending = new Map<string, Promise<TokenOutcome>>();

  async function fetchToken(auth: OAuthClientCredentials, deps: TokenRequestDeps, budgetMs: number): Promise<Fetched> {
    const started = performance.now();
    const spent = () => Math.round(performance.now() - started);
    const limitMs = Math.max(1, Math.min(deadlineMs, budgetMs));
    const failed = (why: string, status: number | null = null, serviceFault: string | null = null): Fetched => ({
      ok: false,
      serviceFault,
      status,
      why,
      durationMs: spent(),
    });
    const check = checkWebhookUrl(auth.tokenUrl, deps.urlPolicy);
    if (!check.ok) return failed(`token URL refused: ${check.rule}`);
    const host = check.url.hostname.replace(/^\[|\]$/g, '');
    let addresses: PinnedAddress[];
    try {
      addresses = isIP(host) ? [{ address: host, family: isIP(host) === 6 ? 6 : 4 }] : await deps.resolve(host);
    } catch {
      return failed('token URL did not resolve');
    }
    if (addresses.length === 0) return failed('token URL did not resolve');
    if (addresses.some((a) => !isPublicAddress(a.address, deps.urlPolicy)))
      return failed('token URL resolves to an address that is not public');
    const secret = await deps.secrets.open(auth.clientSecret);
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (auth.scope) form.set('scope', auth.scope);
    if (auth.audience) form.set('audience', auth.audience);
    const result = await sender({
      url: check.url,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
        authorization: basicAuthorization(auth.clientId, secret),
      },
      body: form.toString(),
      pinned: addresses[0]!,
      // What resolution took, and what the attempt's budget leaves below this deadline.
      spentMs: spent() + (deadlineMs - limitMs),
    });
    if (result.kind === 'error')
      return isServiceFault(result.reason) ? failed(result.reason, null, result.reason) : failed(`token request failed: ${result.reason}`);
    if (result.status < 200 || result.status >= 300) return failed(`token endpoint answered ${result.status}`, result.status);
    let body: unknown;
    try {
      body = JSON.parse(result.body ?? '');
    } catch {
      return failed('token response is not JSON (or over the size read)', result.status);
    }
    const { access_token: token, token_type: type, expires_in: expiresIn } = (body ?? {}) as Record<string, unknown>;
    if (typeof token !== 'string' || !TOKEN_TEXT.test(token)) return failed('token response has no usable access_token', result.status);
    if (type !== undefined && (typeof type !== 'string' || type.toLowerCase() !== 'bearer'))
      return failed('token response is not a bearer token', result.status);
    const lifetime =
      typeof expiresIn === 'number' ? expiresIn : typeof expiresIn === 'string' ? Number(expiresIn) : DEFAULT_LIFETIME_SECONDS;
    return { ok: true, token, durationMs: spent(), lifetime: Number.isFinite(lifetime) ? lifetime : DEFAULT_LIFETIME_SECONDS };
  }

  return {
    async token(endpointId, auth, deps, budgetMs) {
      const key = cacheKey(endpointId, auth);
      const cached = fresh.get(key);
      if (cached && cached.until > nowMs()) return { ok: true, token: cached.token, durationMs: 0 };
      let request = pending.get(key);
      if (!request) {
        request = fetchToken(auth, deps, budgetMs).then((outcome) => {
          if (outcome.ok) {
            const until = nowMs() + (outcome.lifetime - OAUTH_TOKEN_LIMITS.refreshBeforeExpirySeconds) * 1000;
            // A token that expires within the margin is used for this attempt, not kept.
            if (until > nowMs()) {
              fresh.delete(key);
              fresh.set(key, { token: outcome.token, until });
              if (fresh.size > maxEntries) fresh.delete(fresh.keys().next().value!);
            }
          }
          return outcome.ok ? { ok: true, token: outcome.token, durationMs: outcome.durationMs } : outcome;
        });
        pending.set(key, request);
        void request.finally(() => pending.delete(key)).catch(() => undefined);
      }
      return request;
    },
    drop(endpointId, auth) {
      fresh.delete(cacheKey(endpointId, auth));
    },
  };
}

/** The container's token cache (the dispatcher's default). */
export const containerTokenCache: TokenCache = createTokenCache();
