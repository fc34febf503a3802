/**
 * Idempotency keys on the POSTs that return no secret (docs/behaviour.md#idempotency-keys):
 * the header names, what a key may be and how long a first response is kept. Read by the REST
 * handler, the store and the OpenAPI document.
 */
import { z } from 'zod';

/** The request header a client sends (header names are case-insensitive). */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

/** The response header on an answer replayed from the first request. */
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

/** How long the first response of a key is kept, in hours. */
export const IDEMPOTENCY_WINDOW_HOURS = 24;

/** Longest key, in characters. */
const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

/** A key: 1–255 printable ASCII characters (space included, control characters not). */
export const IdempotencyKeySchema = z
  .string()
  .min(1)
  .max(IDEMPOTENCY_KEY_MAX_LENGTH)
  .regex(/^[\x20-\x7e]+$/, 'only printable ASCII characters')
  .meta({
    description: `Makes this POST safe to retry: the same key from the same token within ${IDEMPOTENCY_WINDOW_HOURS} h answers the first successful response again (with \`${IDEMPOTENT_REPLAYED_HEADER}: true\`) and does nothing; the same key with another request is 422 \`IdempotencyKeyReused\`; while the first request still runs, 409 \`IdempotencyKeyInProgress\`. 1–${IDEMPOTENCY_KEY_MAX_LENGTH} printable characters, e.g. a UUID.`,
    example: '6f1c2a9e-3b7d-4e58-9a0c-2d4b8e7f1a36',
  });
