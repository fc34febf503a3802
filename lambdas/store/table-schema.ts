/**
 * The one table's key schema (DESIGN §4), shared by CDK, the local stack and
 * tests so the three can never drift. No I/O.
 */

/** Attribute and index names. */
export const TABLE = {
  partitionKey: 'pk',
  sortKey: 'sk',
  ttlAttribute: 'expiresAtEpoch',
  gsi1: { name: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
  gsi2: { name: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk' },
} as const;

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
  rateLimit: (bucket: string, clientKey: string, windowStart: number) => ({ pk: `RL#${bucket}#${clientKey}`, sk: String(windowStart) }),
} as const;
