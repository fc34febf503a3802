/**
 * Signing secrets and their rotation (docs/behaviour.md#secret-rotation), and
 * the port that seals them at rest (docs/architecture.md#secrets).
 */
import { randomBytes } from 'node:crypto';
import { SECRET_GRACE_HOURS } from '../contract/limits';

/** Grace window of a replaced secret. */
export const SECRET_GRACE_MS = SECRET_GRACE_HOURS * 3600_000;

/**
 * A secret sealed by envelope encryption: AES-256-GCM under a data key, stored
 * with the data key as the key service encrypted it (docs/architecture.md#secrets).
 * All fields base64.
 */
export interface SealedSecret {
  readonly ciphertext: string;
  readonly iv: string;
  readonly tag: string;
  /** The data key, encrypted by the key service (KMS `CiphertextBlob`). */
  readonly dataKey: string;
}

/** A secret as stored on the endpoint: always sealed; `expiresAt` set only on a replaced one. */
export interface StoredSecret {
  readonly sealed: SealedSecret;
  readonly createdAt: string;
  readonly expiresAt: string | null;
}

/** Seals and opens secrets; the only way a secret reaches or leaves the table. */
export interface SecretSealer {
  seal(secret: string): Promise<SealedSecret>;
  open(sealed: SealedSecret): Promise<string>;
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
  newSecret: SealedSecret,
  now: Date,
): { secrets: StoredSecret[]; previousSecretExpiresAt: string | null } {
  const current = secrets[0];
  const next: StoredSecret = { sealed: newSecret, createdAt: now.toISOString(), expiresAt: null };
  if (!current) return { secrets: [next], previousSecretExpiresAt: null };
  const expiresAt = new Date(now.getTime() + SECRET_GRACE_MS).toISOString();
  return { secrets: [next, { ...current, expiresAt }], previousSecretExpiresAt: expiresAt };
}

/** Secrets that sign at `now`, newest first; an expired one is never used, even before the expiry schedule drops it. */
export function activeSecrets(secrets: readonly StoredSecret[], now: Date): StoredSecret[] {
  return secrets.filter((s) => s.expiresAt === null || Date.parse(s.expiresAt) > now.getTime());
}

/** The plaintext of stored secrets, in order, opened by `sealer`. */
export async function openSecrets(secrets: readonly StoredSecret[], sealer: SecretSealer): Promise<string[]> {
  return Promise.all(secrets.map((s) => sealer.open(s.sealed)));
}
