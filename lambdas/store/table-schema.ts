/**
 * The one table's key schema (DESIGN §4), shared by CDK, the local stack and
 * tests so the three can never drift. No I/O.
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

/** Key builders: every item key of the table is made here. */
export const keys = {
  workspace: (slug: string) => ({ pk: `WS#${slug}`, sk: 'META' }),
  workspacePk: (slug: string) => `WS#${slug}`,
  member: (slug: string, memberId: string) => ({ pk: `WS#${slug}`, sk: `MEMBER#${memberId}` }),
  tokenHash: (hash: string) => ({ pk: `TOKENHASH#${hash}`, sk: 'META' }),
  token: (slug: string, tokenId: string) => ({ pk: `WS#${slug}`, sk: `TOKEN#${tokenId}` }),
  endpoint: (slug: string, endpointId: string) => ({ pk: `WS#${slug}`, sk: `WEBHOOK#${endpointId}` }),
  audit: (slug: string, auditEventId: string) => ({ pk: `WS#${slug}`, sk: `AUDIT#${auditEventId}` }),
  notification: (slug: string, notificationId: string) => ({ pk: `WS#${slug}`, sk: `NOTIF#${notificationId}` }),
  delivery: (deliveryId: string) => ({ pk: `DLV#${deliveryId}`, sk: 'META' }),
  deliveriesOfEndpoint: (endpointId: string) => `EP#${endpointId}`,
  attempt: (deliveryId: string, ordinal: number) => ({ pk: `DLV#${deliveryId}`, sk: `ATT#${String(ordinal).padStart(6, '0')}` }),
  /** Retention index partition: the delivery's creation day. */
  deliveryDay: (createdAt: string) => `DLVDAY#${createdAt.slice(0, 10)}`,
  /** Repair index partition: the delivery's creation hour. */
  pendingHour: (createdAt: string) => `PENDING#${createdAt.slice(0, 13)}`,
  rateLimit: (bucket: string, clientKey: string, windowStart: number) => ({ pk: `RL#${bucket}#${clientKey}`, sk: String(windowStart) }),
} as const;
