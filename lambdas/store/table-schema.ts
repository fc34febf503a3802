/**
 * The one table's key schema (docs/architecture.md#item-keys), shared by CDK,
 * the local stack and tests so the three can never drift: every item key and
 * index key of the table is made here, and nowhere else. No I/O.
 */

/** Attribute and index names. */
export const TABLE = {
  partitionKey: 'pk',
  sortKey: 'sk',
  ttlAttribute: 'expiresAtEpoch',
  /** Deliveries by endpoint (newest first); replaced secrets by grace end. Whole items: lists read them. */
  gsi1: { name: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk', projection: 'ALL' },
  /**
   * Deliveries by creation day, oldest first (retention). Keys only: retention needs the id and the
   * creation time, both in the keys, and summary updates then cost no index write.
   */
  gsi2: { name: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk', projection: 'KEYS_ONLY' },
  /** Sparse: deliveries still pending with no evidence, by creation hour (stuck-pending repair). Keys only. */
  gsi3: { name: 'gsi3', partitionKey: 'gsi3pk', sortKey: 'gsi3sk', projection: 'KEYS_ONLY' },
} as const;

/** Every GSI of the table. */
export const INDEXES = [TABLE.gsi1, TABLE.gsi2, TABLE.gsi3] as const;

/**
 * Sort-key prefixes of the lists that live in one partition: a workspace's
 * members, tokens, endpoints, audit events and notifications, a delivery's
 * attempts, and (on gsi1) an endpoint's deliveries, whose index sort key is the
 * delivery id itself. An item's sort key is its prefix and its id.
 */
export const SK_PREFIX = {
  member: 'MEMBER#',
  token: 'TOKEN#',
  endpoint: 'WEBHOOK#',
  audit: 'AUDIT#',
  notification: 'NOTIF#',
  attempt: 'ATT#',
  deliveryOfEndpoint: 'whd_',
} as const;

const DELIVERY_PK = 'DLV#';

/** An attempt's id within its delivery: the ordinal, zero-padded so the sort key orders by it. */
export const attemptId = (ordinal: number) => String(ordinal).padStart(6, '0');

/** Key builders: every item key of the table is made here. */
export const keys = {
  workspace: (slug: string) => ({ pk: `WS#${slug}`, sk: 'META' }),
  workspacePk: (slug: string) => `WS#${slug}`,
  member: (slug: string, memberId: string) => ({ pk: `WS#${slug}`, sk: `${SK_PREFIX.member}${memberId}` }),
  tokenHash: (hash: string) => ({ pk: `TOKENHASH#${hash}`, sk: 'META' }),
  token: (slug: string, tokenId: string) => ({ pk: `WS#${slug}`, sk: `${SK_PREFIX.token}${tokenId}` }),
  endpoint: (slug: string, endpointId: string) => ({ pk: `WS#${slug}`, sk: `${SK_PREFIX.endpoint}${endpointId}` }),
  audit: (slug: string, auditEventId: string) => ({ pk: `WS#${slug}`, sk: `${SK_PREFIX.audit}${auditEventId}` }),
  notification: (slug: string, notificationId: string) => ({ pk: `WS#${slug}`, sk: `${SK_PREFIX.notification}${notificationId}` }),
  delivery: (deliveryId: string) => ({ pk: `${DELIVERY_PK}${deliveryId}`, sk: 'META' }),
  /** The delivery id of a summary's or an attempt's partition key (as index entries carry it). */
  deliveryIdOfPk: (pk: string) => pk.slice(DELIVERY_PK.length),
  deliveriesOfEndpoint: (endpointId: string) => `EP#${endpointId}`,
  attempt: (deliveryId: string, ordinal: number) => ({ pk: `${DELIVERY_PK}${deliveryId}`, sk: `${SK_PREFIX.attempt}${attemptId(ordinal)}` }),
  /** Grace index (gsi1) partition of endpoints with a replaced secret, and its sort key: the grace end, then the endpoint. */
  secretGracePk: 'SECRET_GRACE',
  secretGraceSk: (graceEnd: string, endpointId: string) => `${graceEnd}#${endpointId}`,
  /** The one item holding how far retention got. */
  retentionWatermark: { pk: 'RETENTION', sk: 'WATERMARK' },
  /** Retention index partition: the delivery's creation day. */
  deliveryDay: (createdAt: string) => `DLVDAY#${createdAt.slice(0, 10)}`,
  /** Repair index partition: the delivery's creation hour. */
  pendingHour: (createdAt: string) => `PENDING#${createdAt.slice(0, 13)}`,
  // @keys:delivery-log
  // @keys:health
  // @keys:recovery
  rateLimit: (bucket: string, clientKey: string, windowStart: number) => ({ pk: `RL#${bucket}#${clientKey}`, sk: String(windowStart) }),
} as const;
