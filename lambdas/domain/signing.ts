/**
 * Standard Webhooks signatures (docs/behaviour.md#signing): HMAC-SHA256 keyed
 * with the base64-decoded part of `whsec_…`, over `id.timestamp.body`, as
 * space-separated `v1,<base64>` entries, current key first.
 */
import { createHmac } from 'node:crypto';

/** The HMAC key of a `whsec_<base64>` secret. */
export function secretKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
}

/** One `v1,<base64>` signature. */
export function signOne(secret: string, webhookId: string, timestamp: number, body: string): string {
  const mac = createHmac('sha256', secretKey(secret)).update(`${webhookId}.${timestamp}.${body}`, 'utf8').digest('base64');
  return `v1,${mac}`;
}

/** The `webhook-signature` header value for the active secrets, newest first. */
export function signatureHeader(secrets: readonly string[], webhookId: string, timestamp: number, body: string): string {
  return secrets.map((s) => signOne(s, webhookId, timestamp, body)).join(' ');
}
