/**
 * Adapters of the {@link SecretSealer} port (docs/architecture.md#secrets):
 * envelope encryption, AES-256-GCM under a data key that a key service
 * (KMS, or a local stand-in) generates and encrypts. Opened data keys are
 * cached per container, keyed by their encrypted form, so a delivery pays no
 * key-service call after the first for that data key; a sealing container
 * reuses one data key for a while, so many secrets share one.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { KMSClient } from '@aws-sdk/client-kms';
import { KMS_ENCRYPTION_CONTEXT } from '../contract/deployment';
import type { SealedSecret, SecretSealer } from '../domain/secrets';

/** What envelope encryption needs from a key service. */
export interface DataKeyService {
  /** A fresh 256-bit data key: its plaintext and its encrypted form. */
  generate(): Promise<{ plaintext: Buffer; encrypted: Buffer }>;
  /** The plaintext of an encrypted data key. */
  decrypt(encrypted: Buffer): Promise<Buffer>;
}

/** Options of {@link envelopeSealer}. */
export interface EnvelopeOptions {
  /** How long a sealing container reuses one data key. @default 15 minutes */
  readonly dataKeyReuseMs?: number;
  /** Opened data keys kept per container (oldest dropped first). @default 1000 */
  readonly openCacheSize?: number;
  /** The clock. @default Date.now */
  readonly nowMs?: () => number;
}

/** Binds every ciphertext to its purpose: a sealed value of another kind never opens as a signing secret. */
const AAD = Buffer.from('webhooks/endpoint-signing-secret/v1');

/** A sealer over any data-key service, with the per-container caches. */
export function envelopeSealer(keys: DataKeyService, options: EnvelopeOptions = {}): SecretSealer {
  const reuseMs = options.dataKeyReuseMs ?? 15 * 60_000;
  const cacheSize = options.openCacheSize ?? 1000;
  const nowMs = options.nowMs ?? Date.now;
  let sealing: { key: Promise<{ plaintext: Buffer; encrypted: Buffer }>; until: number } | undefined;
  // Promises, so concurrent records of one batch share one Decrypt.
  const opened = new Map<string, Promise<Buffer>>();

  function openDataKey(encrypted: string): Promise<Buffer> {
    let key = opened.get(encrypted);
    if (!key) {
      key = keys.decrypt(Buffer.from(encrypted, 'base64'));
      // A failed Decrypt is not cached: the next delivery asks again.
      key.catch(() => opened.delete(encrypted));
      opened.set(encrypted, key);
      if (opened.size > cacheSize) opened.delete(opened.keys().next().value!);
    }
    return key;
  }

  return {
    async seal(secret) {
      if (!sealing || sealing.until <= nowMs()) {
        const key = keys.generate();
        sealing = { key, until: nowMs() + reuseMs };
        key.catch(() => (sealing = undefined));
      }
      const { plaintext, encrypted } = await sealing.key;
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', plaintext, iv);
      cipher.setAAD(AAD);
      const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      const dataKey = encrypted.toString('base64');
      // The sealer can open what it sealed without asking the key service.
      if (!opened.has(dataKey)) opened.set(dataKey, Promise.resolve(plaintext));
      return { ciphertext: ciphertext.toString('base64'), iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), dataKey };
    },
    async open(sealed: SealedSecret) {
      const key = await openDataKey(sealed.dataKey);
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
      decipher.setAAD(AAD);
      decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, 'base64')), decipher.final()]).toString('utf8');
    },
  };
}

/** KMS: GenerateDataKey (AES-256) to seal, Decrypt to open; the key policy decides which functions may do which. */
function kmsDataKeys(kms: KMSClient, keyId: string): DataKeyService {
  return {
    async generate() {
      // Loaded on first use, not at cold start (docs/architecture.md#lambda-bundles).
      const { GenerateDataKeyCommand } = await import('@aws-sdk/client-kms');
      const out = await kms.send(
        new GenerateDataKeyCommand({ KeyId: keyId, KeySpec: 'AES_256', EncryptionContext: { ...KMS_ENCRYPTION_CONTEXT } }),
      );
      if (!out.Plaintext || !out.CiphertextBlob) throw new Error('KMS GenerateDataKey returned no key');
      return { plaintext: Buffer.from(out.Plaintext), encrypted: Buffer.from(out.CiphertextBlob) };
    },
    async decrypt(encrypted) {
      const { DecryptCommand } = await import('@aws-sdk/client-kms');
      const out = await kms.send(
        new DecryptCommand({ KeyId: keyId, CiphertextBlob: encrypted, EncryptionContext: { ...KMS_ENCRYPTION_CONTEXT } }),
      );
      if (!out.Plaintext) throw new Error('KMS Decrypt returned no plaintext');
      return Buffer.from(out.Plaintext);
    },
  };
}

/** The deployed sealer: envelope encryption under the stack's KMS key `keyId`. */
export function kmsSecretSealer(kms: KMSClient, keyId: string, options?: EnvelopeOptions): SecretSealer {
  return envelopeSealer(kmsDataKeys(kms, keyId), options);
}

/**
 * LOCAL ONLY (the local stack and tests): a stand-in for KMS whose master key
 * is a fixed constant in this file, so it protects nothing. Data keys are still
 * real and wrapped with AES-256-GCM, so sealed items look and behave as deployed
 * ones do (no plaintext secret in the table). Never wired into a deployed function.
 */
export function localDataKeys(): DataKeyService {
  const master = Buffer.alloc(32, 'local-only-not-a-secret');
  return {
    async generate() {
      const plaintext = randomBytes(32);
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', master, iv);
      const wrapped = Buffer.concat([cipher.update(plaintext), cipher.final()]);
      return { plaintext, encrypted: Buffer.concat([iv, cipher.getAuthTag(), wrapped]) };
    },
    async decrypt(encrypted) {
      const decipher = createDecipheriv('aes-256-gcm', master, encrypted.subarray(0, 12));
      decipher.setAuthTag(encrypted.subarray(12, 28));
      return Buffer.concat([decipher.update(encrypted.subarray(28)), decipher.final()]);
    },
  };
}

/** LOCAL ONLY: the sealer of the local stack and tests, over {@link localDataKeys}. */
export function localSecretSealer(options?: EnvelopeOptions): SecretSealer {
  return envelopeSealer(localDataKeys(), options);
}
