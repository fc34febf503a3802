/** API tokens, portal and staff session tokens: minted once, stored as SHA-256 hashes (docs/architecture.md#api-tokens). */
import { createHash, randomBytes } from 'node:crypto';

/** Prefix of raw API tokens, so leaked ones are recognisable by secret scanners. */
export const TOKEN_PREFIX = 'whk_';

/** Prefix of raw portal session tokens (docs/behaviour.md#portal-sessions), recognisable as {@link TOKEN_PREFIX}. */
export const SESSION_TOKEN_PREFIX = 'whs_';

/** Prefix of raw staff session tokens (docs/behaviour.md#staff-sign-in), recognisable as {@link TOKEN_PREFIX}. */
export const STAFF_TOKEN_PREFIX = 'wss_';

/** Random bytes of every minted token and portal code: 256 bits, 43 characters of unpadded base64url. */
const TOKEN_BYTES = 32;

/** A new raw token (shown once). */
export function mintApiToken(): string {
  return `${TOKEN_PREFIX}${randomBytes(TOKEN_BYTES).toString('base64url')}`;
}

/** A new raw portal session token (answered once, by the exchange of its link's code). */
export function mintSessionToken(): string {
  return `${SESSION_TOKEN_PREFIX}${randomBytes(TOKEN_BYTES).toString('base64url')}`;
}

/** A new raw staff session token (answered once, by the sign-in). */
export function mintStaffToken(): string {
  return `${STAFF_TOKEN_PREFIX}${randomBytes(TOKEN_BYTES).toString('base64url')}`;
}

/** A new staff sign-in nonce: 256 random bits, stored only as its hash. */
export function mintConsoleNonce(): string {
  return randomBytes(TOKEN_BYTES).toString('base64url');
}

/** A new portal link code: 256 random bits, carried in the link's fragment only. */
export function mintPortalCode(): string {
  return randomBytes(TOKEN_BYTES).toString('base64url');
}

/** The stored form of a raw token (or a portal code). */
export function hashApiToken(raw: string): string {
  return createHash('sha256').update(raw, 'utf8').digest('hex');
}

/** The token of an `Authorization` header value (`Bearer <token>`), or null. Cookies are never consulted. */
export function bearerToken(header: string | undefined | null): string | null {
  if (!header) return null;
  const m = /^\s*Bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1] ?? null;
}
