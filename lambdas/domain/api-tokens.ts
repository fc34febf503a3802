/** API tokens: minted once, stored as SHA-256 hashes (docs/architecture.md#api-tokens). */
import { createHash, randomBytes } from 'node:crypto';

/** Prefix of raw tokens, so leaked ones are recognisable by secret scanners. */
export const TOKEN_PREFIX = 'whk_';

/** A new raw token (shown once). */
export function mintApiToken(): string {
  return `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/** The stored form of a raw token. */
export function hashApiToken(raw: string): string {
  return createHash('sha256').update(raw, 'utf8').digest('hex');
}

/** The token of an `Authorization` header value (`Bearer <token>`), or null. Cookies are never consulted. */
export function bearerToken(header: string | undefined | null): string | null {
  if (!header) return null;
  const m = /^\s*Bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1] ?? null;
}
