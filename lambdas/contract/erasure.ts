/** The erasure job's zod-free names (docs/behaviour.md#erasing-a-workspace); its schema is in `erasure-schemas.ts`. */

/**
 * The kinds an erasure counts (docs/behaviour.md#erasing-a-workspace): records a person would
 * recognise, and `other` for the items that support them (token hashes, delivery states, replay
 * links, job entries and markers, locks, grace entries). `secrets` counts the sealed signing
 * secrets erased with their endpoints.
 */
export const ERASED_KINDS = [
  'endpoints',
  'secrets',
  'deliveries',
  'attempts',
  'audit',
  'notifications',
  'tokens',
  'sessions',
  'members',
  'jobs',
  'idempotency',
  'subscriptions',
  'health',
  'counters',
  'other',
] as const;

/** A kind an erasure counts. */
export type ErasedKind = (typeof ERASED_KINDS)[number];
