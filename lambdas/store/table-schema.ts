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
  /** The secret grace index (replaced secrets by grace end) and the workspace registry (docs/architecture.md#item-keys). */
  gsi1: { name: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk', projection: 'ALL' },
  /**
   * Keys only. Deliveries of an endpoint by id (newest first when read backwards), in
   * {@link ENDPOINT_DELIVERY_SHARDS} shards per endpoint, written once with the immutable summary.
   */
  gsi2: { name: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk', projection: 'KEYS_ONLY' },
  /**
   * Sparse, keys only: deliveries a replay, test send or recovery queued that have no evidence
   * yet, by creation time, in {@link INDEX_SHARDS} shards (stuck-pending repair). On the state item,
   * which the first evidence replaces. The publisher's deliveries are not in it (a failed send is
   * retried by the invocation, or marked here when the send itself failed).
   */
  gsi3: { name: 'gsi3', partitionKey: 'gsi3pk', sortKey: 'gsi3sk', projection: 'KEYS_ONLY' },
  /**
   * The workspace delivery log (docs/architecture.md#delivery-log-index): deliveries of a workspace
   * by id, newest first, in shards. Keys plus the event type, which never changes, so a summary
   * update writes nothing to it; a page reads its summaries from the table.
   */
  deliveryLog: { name: 'deliveryLog', partitionKey: 'logpk', sortKey: 'logsk', projection: 'INCLUDE', nonKeyAttributes: ['eventType'] },
  /**
   * Sparse, keys only: the deliveries of one event of a workspace by id (docs/architecture.md#item-keys),
   * so the log's `eventId` filter is a keyed read. Written once, by the summary put (a replay's
   * summary carries its source's event id, so it joins the same partition).
   */
  eventDeliveries: { name: 'eventDeliveries', partitionKey: 'evtpk', sortKey: 'evtsk', projection: 'KEYS_ONLY' },
} as const;

/**
 * The index partitions of an endpoint's deliveries (docs/architecture.md#access-patterns): its
 * {@link ENDPOINT_DELIVERY_SHARDS} gsi2 shards, whose entries are keyed by the delivery id.
 */
export function endpointDeliveryPartitions(endpointId: string): { readonly index: typeof TABLE.gsi2; readonly pk: string }[] {
  return Array.from({ length: ENDPOINT_DELIVERY_SHARDS }, (_, shard) => ({
    index: TABLE.gsi2,
    pk: keys.endpointDeliveriesPk(endpointId, shard),
  }));
}

/** Every GSI of the table. */
export const INDEXES = [TABLE.gsi1, TABLE.gsi2, TABLE.gsi3, TABLE.deliveryLog, TABLE.eventDeliveries] as const;

/**
 * Sort-key prefixes of the lists that live in one partition: a workspace's
 * members, tokens, endpoints, audit events and notifications, and a delivery's
 * attempts. An item's sort key is its prefix and its id.
 */
export const SK_PREFIX = {
  member: 'MEMBER#',
  token: 'TOKEN#',
  endpoint: 'WEBHOOK#',
  audit: 'AUDIT#',
  notification: 'NOTIF#',
  /** A workspace's entries of its recovery jobs (the job items themselves are keyed by id alone). */
  job: 'JOB#',
  attempt: 'ATT#',
  /**
   * A delivery's replays (docs/architecture.md#delivery-items): below `ATT#`, so the top items of
   * the partition (state, summary, latest attempt) stay what one short Query reads.
   */
  replay: '@REPLAY#',
  /** A workspace's portal sessions (lambdas/store/portal-sessions.ts). */
  portalSession: 'PORTAL#',
  /** The staff sessions, in their own partition (lambdas/store/staff-sessions.ts). */
  staffSession: 'SESSION#',
} as const;

const DELIVERY_PK = 'DLV#';

/** The platform's own partition: records kept outside every workspace. */
const PLATFORM_PK = 'PLATFORM';

/**
 * Shards of the repair index (docs/architecture.md#hot-keys). A delivery a replay, test send or
 * recovery queues writes it twice (added at creation, removed at its first evidence): at 10,000
 * deliveries a second, 32 shards keep each index partition near 625 writes a second, under
 * DynamoDB's 1,000 per partition.
 */
export const INDEX_SHARDS = 32;

/**
 * Shards of one endpoint's deliveries in gsi2 (docs/architecture.md#hot-keys): one endpoint can
 * take 5,000 deliveries a second (half the service's 10,000), and 8 shards keep each partition
 * near 625 writes a second. A page of an endpoint's deliveries merges the 8.
 */
export const ENDPOINT_DELIVERY_SHARDS = 8;

/** FNV-1a of an id, modulo `count`: a delivery's shard, so writes spread evenly. */
export function shardOf(id: string, count: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % count;
}

/** A shard number as keys carry it: two digits. */
const shard2 = (n: number) => String(n).padStart(2, '0');

/** An attempt's id within its delivery: the ordinal, zero-padded so the sort key orders by it. */
export const attemptId = (ordinal: number) => String(ordinal).padStart(6, '0');

/** Key builders: every item key of the table is made here. */
export const keys = {
  workspace: (slug: string) => ({ pk: `WS#${slug}`, sk: 'META' }),
  workspacePk: (slug: string) => `WS#${slug}`,
  /** A workspace's counts of endpoints and API tokens (docs/architecture.md#item-keys), changed with each create, delete and revoke. */
  workspaceCounts: (slug: string) => ({ pk: `WS#${slug}`, sk: 'COUNTS' }),
  member: (slug: string, memberId: string) => ({ pk: `WS#${slug}`, sk: `${SK_PREFIX.member}${memberId}` }),
  tokenHash: (hash: string) => ({ pk: `TOKENHASH#${hash}`, sk: 'META' }),
  /** A portal session, in its workspace's partition (sort key: its id, so newest last). */
  portalSession: (slug: string, sessionId: string) => ({ pk: `WS#${slug}`, sk: `${SK_PREFIX.portalSession}${sessionId}` }),
  /** A portal link's code, by its hash: present until the link is opened or its ten minutes end. */
  portalCode: (codeHash: string) => ({ pk: `PORTALCODE#${codeHash}`, sk: 'META' }),
  /** The partition of every staff session (docs/behaviour.md#staff-sign-in): outside every workspace. */
  staffSessionsPk: 'STAFF',
  /** A staff session (sort key: its id, a ULID, so newest last). */
  staffSession: (sessionId: string) => ({ pk: 'STAFF', sk: `${SK_PREFIX.staffSession}${sessionId}` }),
  /** A staff sign-in nonce, by its hash: present until it is used or its ten minutes end. */
  consoleNonce: (nonceHash: string) => ({ pk: `CONSOLENONCE#${nonceHash}`, sk: 'META' }),
  token: (slug: string, tokenId: string) => ({ pk: `WS#${slug}`, sk: `${SK_PREFIX.token}${tokenId}` }),
  endpoint: (slug: string, endpointId: string) => ({ pk: `WS#${slug}`, sk: `${SK_PREFIX.endpoint}${endpointId}` }),
  /**
   * A subscription (docs/architecture.md#item-keys): one small item per (endpoint, subscribed event type),
   * so the publisher reads only the subscribers of an event's type. Event type names never hold `#`.
   */
  subscription: (slug: string, eventType: string, endpointId: string) => ({ pk: `WS#${slug}`, sk: `SUB#${eventType}#${endpointId}` }),
  /** Sort-key prefix of the subscriptions to one event type; without a type, of every subscription of the workspace. */
  subscriptionPrefix: (eventType?: string) => (eventType === undefined ? 'SUB#' : `SUB#${eventType}#`),
  /** The event type and endpoint of a subscription item's sort key (the item keeps neither as an attribute). */
  subscriptionOfSk: (sk: string) => ({
    eventType: sk.slice('SUB#'.length, sk.lastIndexOf('#')),
    endpointId: sk.slice(sk.lastIndexOf('#') + 1),
  }),
  audit: (slug: string, auditEventId: string) => ({ pk: `WS#${slug}`, sk: `${SK_PREFIX.audit}${auditEventId}` }),
  notification: (slug: string, notificationId: string) => ({ pk: `WS#${slug}`, sk: `${SK_PREFIX.notification}${notificationId}` }),
  /** A delivery's immutable summary: ids, event type, payload, creation (docs/architecture.md#delivery-items). */
  delivery: (deliveryId: string) => ({ pk: `${DELIVERY_PK}${deliveryId}`, sk: 'META' }),
  /** A delivery's state (status, attempts, last evidence): absent until the first evidence, or written pending by a replay or test send. */
  deliveryState: (deliveryId: string) => ({ pk: `${DELIVERY_PK}${deliveryId}`, sk: 'STATE' }),
  /** A link from a delivery to one of its replays, in the source's partition (sort key: the replay's id, so newest last). */
  deliveryReplay: (sourceId: string, replayId: string) => ({ pk: `${DELIVERY_PK}${sourceId}`, sk: `${SK_PREFIX.replay}${replayId}` }),
  /**
   * The marker that a delivery has at least one replay, at a fixed key of its partition, so a
   * recovery reads it with the summaries and states it already reads (BatchGetItem), and a first
   * replay is told from a later one (put if absent). Sorts below `ATT#`, as the links do.
   */
  deliveryReplayed: (sourceId: string) => ({ pk: `${DELIVERY_PK}${sourceId}`, sk: '@REPLAYED' }),
  /** Index partition of one event's deliveries in a workspace (the log's `eventId` filter). */
  eventDeliveriesPk: (slug: string, eventId: string) => `EVT#${slug}#${eventId}`,
  /** gsi2 partition of one shard of an endpoint's deliveries. */
  endpointDeliveriesPk: (endpointId: string, shard: number) => `EPDLV#${endpointId}#${shard2(shard)}`,
  /** The gsi2 shard of a delivery of an endpoint. */
  endpointDeliveryShard: (deliveryId: string): number => shardOf(deliveryId, ENDPOINT_DELIVERY_SHARDS),
  /**
   * The workspace registry on gsi1 (docs/architecture.md#retention): every workspace item carries
   * this partition and its slug, so the daily retention pass can find each workspace's delivery log.
   * Written when a workspace is created, never on the delivery path.
   */
  workspaceRegistryPk: 'WORKSPACES',
  /** The delivery id of a summary's or an attempt's partition key (as index entries carry it). */
  deliveryIdOfPk: (pk: string) => pk.slice(DELIVERY_PK.length),
  deliveriesOfEndpoint: (endpointId: string) => `EP#${endpointId}`,
  attempt: (deliveryId: string, ordinal: number) => ({
    pk: `${DELIVERY_PK}${deliveryId}`,
    sk: `${SK_PREFIX.attempt}${attemptId(ordinal)}`,
  }),
  /** Grace index (gsi1) partition of endpoints with a replaced secret, and its sort key: the grace end, then the endpoint. */
  secretGracePk: 'SECRET_GRACE',
  secretGraceSk: (graceEnd: string, endpointId: string) => `${graceEnd}#${endpointId}`,
  /** The one item holding which registered workspace the retention pass looks at next. */
  retentionWorkspaceCursor: { pk: 'RETENTION', sk: 'WORKSPACE_CURSOR' },
  /** Repair index partition of one shard (sort key: creation time, then id). */
  pendingShardPk: (shard: number) => `PENDING#${shard2(shard)}`,
  /** Sort key of the repair index: oldest first. */
  byCreation: (createdAt: string, deliveryId: string) => `${createdAt}#${deliveryId}`,
  /** How many shards a workspace's delivery log is spread over (docs/architecture.md#delivery-log-index). */
  deliveryLogShards: 16,
  /** The log shard of a delivery: FNV-1a of its id, so a busy workspace's writes spread evenly. */
  deliveryLogShard: (deliveryId: string): number => shardOf(deliveryId, keys.deliveryLogShards),
  /** Delivery-log partition of one shard of a workspace. */
  deliveryLogPk: (slug: string, shard: number) => `DLVLOG#${slug}#${String(shard).padStart(2, '0')}`,
  /** Health counters (docs/architecture.md#health-counters): one item per endpoint, or per workspace, and UTC hour (`YYYY-MM-DDTHH`). */
  endpointHealthPk: (endpointId: string) => `HEALTH#EP#${endpointId}`,
  endpointHealth: (endpointId: string, hour: string) => ({ pk: `HEALTH#EP#${endpointId}`, sk: hour }),
  workspaceHealthPk: (slug: string) => `HEALTH#WS#${slug}`,
  workspaceHealth: (slug: string, hour: string) => ({ pk: `HEALTH#WS#${slug}`, sk: hour }),
  /**
   * Dead letters of a workspace replayed, counted in the hour of their dead-lettering (one per
   * source, at its first replay), beside the health counters but in a partition of their own: the
   * replay's transaction writes it, and the dispatchers' plain writes of the health items never
   * contend with a transaction.
   */
  workspaceReplayedPk: (slug: string) => `HEALTH#WSREPLAYED#${slug}`,
  workspaceReplayed: (slug: string, hour: string) => ({ pk: `HEALTH#WSREPLAYED#${slug}`, sk: hour }),
  /** A recovery job (docs/architecture.md#recovery-jobs), by id alone: a job message carries only the id. */
  job: (jobId: string) => ({ pk: `JOB#${jobId}`, sk: 'META' }),
  /** A recovery job's entry in its workspace's partition (id and status), so the workspace's jobs are listed by one Query. */
  workspaceJob: (slug: string, jobId: string) => ({ pk: `WS#${slug}`, sk: `${SK_PREFIX.job}${jobId}` }),
  /**
   * A workspace erasure job (docs/architecture.md#what-a-workspace-holds-and-where), in the
   * platform's own partition: outside every workspace, so it outlives the workspace it erases.
   */
  erasureJob: (jobId: string) => ({ pk: PLATFORM_PK, sk: `ERASURE#${jobId}` }),
  /** An entry of the platform's own audit log, beside the erasure jobs: who erased which workspace, when, and what was erased. */
  platformAudit: (auditEventId: string) => ({ pk: PLATFORM_PK, sk: `AUDIT#${auditEventId}` }),
  /** The one running recovery of an endpoint: present while a job runs, so a second one is refused. */
  recoveryLock: (endpointId: string) => ({ pk: `RECOVERY#${endpointId}`, sk: 'LOCK' }),
  /** A job's marker that it replayed one source, so no source is replayed twice in one job. */
  recoveryMarker: (jobId: string, sourceDeliveryId: string) => ({ pk: `JOB#${jobId}`, sk: `SRC#${sourceDeliveryId}` }),
  /**
   * An idempotency record (docs/architecture.md#idempotency-records): one partition per API token, so a
   * key is scoped to its token and one busy token's records never share a partition with another's.
   */
  idempotency: (tokenId: string, key: string) => ({ pk: `IDEM#${tokenId}`, sk: `KEY#${key}` }),
  rateLimit: (bucket: string, clientKey: string, windowStart: number) => ({ pk: `RL#${bucket}#${clientKey}`, sk: String(windowStart) }),
} as const;
