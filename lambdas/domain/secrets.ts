/**
 * Signing secrets and their rotation (docs/behaviour.md#secret-rotation).
 */
import { randomBytes } from 'node:crypto';
import { SECRET_GRACE_HOURS } from '../contract/limits';

/** Grace window of a replaced secret. */
export const SECRET_GRACE_MS = SECRET_GRACE_HOURS * 3600_000;

/** A secret as stored on the endpoint; `expiresAt` set only on a replaced one. */
export interface StoredSecret {
  readonly secret: string;
  readonly createdAt: string;
  readonly expiresAt: string | null;
}

/** Mints a signing secret: `whsec_` + base64 of 32 random bytes. */
export function mintSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * Rotation: the new secret becomes current; the replaced current one stays for
 * the grace window; anything older (the original, when rotating inside a window)
 * is dropped, so at most two secrets are ever active.
 */
export function rotateSecrets(
  secrets: readonly StoredSecret[],
  newSecret: string,
  now: Date,
): { secrets: StoredSecret[]; previousSecretExpiresAt: string | null } {
  const current = secrets[0];
  const next: StoredSecret = { secret: newSecret, createdAt: now.toISOString(), expiresAt: null };
  if (!current) return { secrets: [next], previousSecretExpiresAt: null };
  const expiresAt = new Date(now.getTime() + SECRET_GRACE_MS).toISOString();
  return { secrets: [next, { ...current, expiresAt }], previousSecretExpiresAt: expiresAt };
}

/** Secrets that sign at `now`, newest first; an expired one is never used, even before the expiry schedule drops it. */
export function activeSecrets(secrets: readonly StoredSecret[], now: Date): string[] {
  return secrets.filter((s) => s.expiresAt === null || Date.parse(s.expiresAt) > now.getTime()).map((s) => s.secret);
}
