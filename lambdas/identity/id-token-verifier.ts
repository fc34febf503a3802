/**
 * Verifies the ID tokens staff sign in with (docs/behaviour.md#staff-sign-in), with `jose`: the
 * signature against the provider's published keys (found through discovery, cached in the function,
 * refetched for a key the cache does not know at most every {@link JWKS_COOLDOWN_MS}, which picks up
 * a key rotation), asymmetric algorithms only, and the claims `iss`, `aud`, `azp`, `exp`, `iat`.
 * The nonce's single use and the person's email and groups are the sign-in operation's.
 */
import { createRemoteJWKSet, errors, jwtVerify, type JWTHeaderParameters, type JWTPayload, type FlattenedJWSInput } from 'jose';
import type { ConsoleOidcSettings } from '../contract/console-oidc';
import { AppError } from '../contract/errors';
import type { ProviderDiscovery } from './oidc-discovery';

/** The only algorithms an ID token may be signed with: asymmetric ones (never `none`, never HS*). */
const ID_TOKEN_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

/** Oldest an ID token's `iat` may be. */
const MAX_TOKEN_AGE_SECONDS = 600;

/** Clock skew allowed between the provider and the service. */
const CLOCK_TOLERANCE_SECONDS = 60;

/** Least time between two fetches of the key set for a key it lacks, in milliseconds. */
const JWKS_COOLDOWN_MS = 30_000;

/** How long a fetched key set is trusted without refetching, in milliseconds. */
const JWKS_MAX_AGE_MS = 600_000;

/** How long one key set request may take, in milliseconds. */
const JWKS_TIMEOUT_MS = 5000;

/** The verified claims of an ID token. */
type VerifiedIdToken = JWTPayload & { readonly sub: string; readonly nonce: string };

/** Verifies an ID token: its claims, or an `AppError` (`InvalidIdToken` 401; `BadGateway` 502 when the provider cannot be reached). */
export type IdTokenVerifier = (idToken: string) => Promise<VerifiedIdToken>;

const invalid = (check: string): AppError => new AppError('InvalidIdToken', `The ID token was refused: ${check}.`);

/** The provider's metadata or keys could not be had: a 502 naming the provider, never a 500. */
class ProviderUnreachable extends Error {}

const unreachable = (issuer: string): AppError =>
  new AppError('BadGateway', `The identity provider ${issuer} could not be reached for its signing keys; try signing in again.`);

/** The one check a `jose` failure names, in words that never echo the token. */
function checkOf(e: unknown): string {
  if (e instanceof errors.JOSEAlgNotAllowed) return 'its signing algorithm is not allowed (asymmetric algorithms only)';
  if (e instanceof errors.JWKSNoMatchingKey || e instanceof errors.JWKSMultipleMatchingKeys)
    return 'it is not signed by a key the issuer publishes';
  if (e instanceof errors.JWSSignatureVerificationFailed) return 'its signature does not verify with the issuer’s keys';
  // jose tells an `iat` older than the allowed age as expiry too, naming the claim.
  if (e instanceof errors.JWTExpired && e.claim !== 'iat') return 'it has expired (exp)';
  if (e instanceof errors.JWTClaimValidationFailed || e instanceof errors.JWTExpired) {
    switch (e.claim) {
      case 'iss':
        return 'its issuer (iss) is not the configured issuer';
      case 'aud':
        return 'its audience (aud) does not contain the console client id';
      case 'iat':
        return `its issue time (iat) is missing, in the future or more than ${MAX_TOKEN_AGE_SECONDS / 60} minutes old`;
      case 'nbf':
        return 'it is not valid yet (nbf)';
      case 'exp':
        return 'its expiry (exp) is missing or not a time';
      default:
        return `its claim ${e.claim} is invalid`;
    }
  }
  return 'it is not a well-formed signed JWT';
}

/**
 * The verifier for the stage's provider. `discovery` gives the key set's address; the key set is
 * fetched on first use and kept (per `jwksUri`) for the function's life.
 */
export function idTokenVerifier(settings: Pick<ConsoleOidcSettings, 'issuer' | 'clientId'>, discovery: ProviderDiscovery): IdTokenVerifier {
  let jwks: { uri: string; get: ReturnType<typeof createRemoteJWKSet> } | null = null;
  const key = async (header: JWTHeaderParameters, token: FlattenedJWSInput) => {
    let uri: string;
    try {
      uri = (await discovery()).jwksUri;
    } catch {
      throw new ProviderUnreachable();
    }
    if (jwks?.uri !== uri)
      jwks = {
        uri,
        get: createRemoteJWKSet(new URL(uri), {
          cooldownDuration: JWKS_COOLDOWN_MS,
          cacheMaxAge: JWKS_MAX_AGE_MS,
          timeoutDuration: JWKS_TIMEOUT_MS,
        }),
      };
    try {
      return await jwks.get(header, token);
    } catch (e) {
      if (e instanceof errors.JWKSNoMatchingKey || e instanceof errors.JWKSMultipleMatchingKeys) throw e;
      // A timeout, a refused connection, a non-200 answer or a malformed set: the provider's fault, not the token's.
      throw new ProviderUnreachable();
    }
  };
  return async (idToken) => {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(idToken, key, {
        algorithms: ID_TOKEN_ALGORITHMS,
        issuer: settings.issuer,
        audience: settings.clientId,
        maxTokenAge: MAX_TOKEN_AGE_SECONDS,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ['iss', 'aud', 'exp', 'iat', 'sub'],
      }));
    } catch (e) {
      if (e instanceof ProviderUnreachable) throw unreachable(settings.issuer);
      throw invalid(checkOf(e));
    }
    if (payload.azp !== undefined && payload.azp !== settings.clientId)
      throw invalid('its authorized party (azp) is not the console client id');
    if (typeof payload.sub !== 'string' || payload.sub === '') throw invalid('it names no subject (sub)');
    if (typeof payload.nonce !== 'string' || payload.nonce === '') throw invalid('it carries no nonce');
    return payload as VerifiedIdToken;
  };
}
