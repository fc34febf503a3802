/**
 * Delivery summaries and their attempt evidence (docs/architecture.md#delivery-items). A delivery
 * is three kinds of item in its own partition: the immutable summary (`META`: ids, event type,
 * payload, creation; written once, with its index keys), the state (`STATE`: status, attempts,
 * last evidence; absent until the first evidence), and one immutable item per attempt (`ATT#`).
 * Recording rolls forward: the attempt is written first (put if absent: the first observation
 * wins), then the state and the endpoint's streak catch up from it, conditional on the evidence
 * count read, so a duplicate or late observation can never regress the state or repeat a streak
 * change; a crash between the two is completed from the attempt on the next receive, with no
 * second POST. A status update therefore never rewrites the payload. A first attempt that moves
 * no streak (most first-try deliveries) is the exception: it travels inside the state's own first
 * write (`firstAttempt`), so it costs one write; one that moves the streak is stored first like
 * any other, so a contended endpoint update never loses its evidence.
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { RESUME_AFTER, type Page } from '../contract/pagination';
import { encodeCursor } from '../domain/cursor';
import type { Attempt, Delivery, DeliveryStatus } from '../contract/schemas';
import { nextStreak, OPEN_STATUSES, STREAK_CHANGES, type DeliveryRecord, type StreakChange } from '../domain/delivery-lifecycle';
import { deliveryExpiresAtEpoch } from '../domain/scheduled-jobs';
import { DELIVERY_STATUSES } from '../contract/delivery-statuses';
import type { TableContext } from './client';
import { auditWrites, writeAudited, type AuditInput, type TransactItem } from './audit';
import type { EndpointRecord } from './endpoints';
import { replayedDeadLetterWrite } from './health-counters';
import { queryPage } from './pages';
import { attemptId, INDEX_SHARDS, keys, shardOf, SK_PREFIX, TABLE } from './table-schema';
import {
  batchWriteAll,
  bool,
  conditionFailedAt,
  conflictAt,
  conflicted,
  IF_ABSENT,
  IF_EXISTS,
  ifAbsentOr,
  type Item,
  ItemShapeError,
  num,
  oneOf,
  optMap,
  optNum,
  optStr,
  partitionQuery,
  shardedQuery,
  str,
} from './table-io';

/** The wire form of a summary. */
export function toDeliveryWire(r: DeliveryRecord): Delivery {
  return {
    deliveryId: r.deliveryId,
    endpointId: r.endpointId,
    status: r.status,
    attempts: r.attempts,
    nextAttemptAt: r.nextAttemptAt ?? null,
    eventType: r.eventType,
    eventId: r.eventId ?? null,
    payload: r.payload,
    replayedFrom: r.replayedFrom ?? null,
    lastResponseStatus: r.lastResponseStatus ?? null,
    lastError: r.lastError ?? null,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

/**
 * The summary's attributes holding the payload as the JSON text it was published as, never as a
 * DynamoDB map: any JSON value then stores as it came (keys such as `__proto__` or `constructor`,
 * any depth, numbers beyond DynamoDB's range, lone surrogates) and reads back as the same value,
 * and the item's size is bounded by the payload limit. One of the two: the text itself, or (when
 * that is smaller, as for most payloads of a kilobyte or more) the text deflated: JSON's quotes
 * and punctuation make the plain text larger than a map, the deflated text much smaller.
 */
const PAYLOAD_TEXT = { plain: 'payloadJson', deflated: 'payloadJsonDeflated' } as const;

/** Texts shorter than this are stored plain: deflating them saves next to nothing. */
const DEFLATE_FROM_BYTES = 256;

/**
 * The payload's attribute, computed once per payload object: the publisher's rows of one event
 * share one payload, and a large payload would otherwise be serialised and deflated per endpoint.
 */
const encodedPayloads = new WeakMap<object, Record<string, string | Uint8Array>>();

/** The payload attribute of a summary (absent for an absent payload). */
function payloadAttribute(payload: unknown): Record<string, string | Uint8Array> {
  if (payload === undefined) return {};
  const cached = typeof payload === 'object' && payload !== null ? encodedPayloads.get(payload) : undefined;
  if (cached) return cached;
  const text = JSON.stringify(payload);
  const deflated = Buffer.byteLength(text) >= DEFLATE_FROM_BYTES ? deflateRawSync(text) : null;
  const attribute: Record<string, string | Uint8Array> =
    deflated && deflated.length < Buffer.byteLength(text)
      ? { [PAYLOAD_TEXT.deflated]: new Uint8Array(deflated) }
      : { [PAYLOAD_TEXT.plain]: text };
  if (typeof payload === 'object' && payload !== null) encodedPayloads.set(payload, attribute);
  return attribute;
}

/**
 * The payload of a summary item: its JSON text, parsed (JSON.parse makes a `__proto__` key an own
 * property, as it was published). Summaries written by earlier versions hold the payload as a
 * DynamoDB value under `payload` instead, and a developer's `.local/` data may still have some:
 * they read as stored. Only the text forms are written ({@link summaryItem}).
 */
function payloadOf(item: Item): unknown {
  if (PAYLOAD_TEXT.plain in item) return JSON.parse(str(item, PAYLOAD_TEXT.plain));
  if (PAYLOAD_TEXT.deflated in item) {
    const deflated = item[PAYLOAD_TEXT.deflated];
    if (!(deflated instanceof Uint8Array))
      throw new ItemShapeError(
        `item ${String(item[TABLE.partitionKey])} / ${String(item[TABLE.sortKey])}: ${PAYLOAD_TEXT.deflated} is not binary`,
      );
    return JSON.parse(inflateRawSync(deflated).toString('utf8'));
  }
  return item.payload;
}

/** A stored summary item (with its state laid over it) as a record, each attribute checked. */
export function fromItem(item: Item): DeliveryRecord {
  return {
    deliveryId: str(item, 'deliveryId'),
    workspace: str(item, 'workspace'),
    endpointId: str(item, 'endpointId'),
    status: oneOf(item, 'status', DELIVERY_STATUSES),
    attempts: num(item, 'attempts', 0),
    evidenceCount: num(item, 'evidenceCount', 0),
    nextAttemptAt: optStr(item, 'nextAttemptAt'),
    eventType: str(item, 'eventType'),
    // Absent on summaries stored before deliveries carried their event: null, never an error.
    eventId: optStr(item, 'eventId'),
    payload: payloadOf(item),
    replayedFrom: optStr(item, 'replayedFrom'),
    lastResponseStatus: optNum(item, 'lastResponseStatus'),
    lastError: optStr(item, 'lastError'),
    createdAt: str(item, 'createdAt'),
    updatedAt: str(item, 'updatedAt'),
  };
}

/** The fields the state item holds: they override the summary's initial ones. */
const STATE_FIELDS = ['status', 'attempts', 'evidenceCount', 'nextAttemptAt', 'lastResponseStatus', 'lastError', 'updatedAt'] as const;

/**
 * A summary item with its state item laid over it: the delivery as it stands. Until its first
 * evidence a delivery has no state item, and its summary's initial state is the state.
 */
function mergeStateItem(summary: Record<string, unknown>, state: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!state) return summary;
  const merged: Record<string, unknown> = { ...summary };
  for (const field of STATE_FIELDS) if (field in state) merged[field] = state[field];
  return merged;
}

/**
 * The stored summary of a new delivery (pending, or held: docs/behaviour.md#held-deliveries; its
 * initial state is its record's, a held one terminal from the start and never queued), with
 * its index keys: the endpoint's shard of gsi2 and the workspace log, both keys only (plus the event
 * type), so the item is written once and never again: status updates go to the state item.
 */
export function summaryItem(record: DeliveryRecord): Record<string, unknown> {
  const { payload, ...fields } = record;
  return {
    ...keys.delivery(record.deliveryId),
    type: 'delivery',
    ...fields,
    // An absent payload stays absent, and reads back absent.
    ...payloadAttribute(payload),
    [TABLE.gsi2.partitionKey]: keys.endpointDeliveriesPk(record.endpointId, keys.endpointDeliveryShard(record.deliveryId)),
    [TABLE.gsi2.sortKey]: record.deliveryId,
    // Retention by TTL (docs/behaviour.md#retention-and-scheduled-jobs); its state and attempts carry the same.
    [TABLE.ttlAttribute]: deliveryExpiresAtEpoch(record.createdAt),
    // The workspace delivery log, in shards (docs/architecture.md#delivery-log-index).
    [TABLE.deliveryLog.partitionKey]: keys.deliveryLogPk(record.workspace, keys.deliveryLogShard(record.deliveryId)),
    [TABLE.deliveryLog.sortKey]: record.deliveryId,
    // The event's deliveries, keyed by the event (docs/architecture.md#item-keys): sparse, only with an event id.
    ...(record.eventId
      ? {
          [TABLE.eventDeliveries.partitionKey]: keys.eventDeliveriesPk(record.workspace, record.eventId),
          [TABLE.eventDeliveries.sortKey]: record.deliveryId,
        }
      : {}),
  };
}

/**
 * The state item of a delivery as `record` has it. `repair`: in the stuck-pending repair's index
 * (gsi3) until the first evidence replaces the item.
 */
export function stateItem(record: DeliveryRecord, repair = false): Record<string, unknown> {
  return {
    ...keys.deliveryState(record.deliveryId),
    type: 'delivery-state',
    deliveryId: record.deliveryId,
    status: record.status,
    attempts: record.attempts,
    evidenceCount: record.evidenceCount,
    nextAttemptAt: record.nextAttemptAt ?? null,
    lastResponseStatus: record.lastResponseStatus ?? null,
    lastError: record.lastError ?? null,
    updatedAt: record.updatedAt,
    [TABLE.ttlAttribute]: deliveryExpiresAtEpoch(record.createdAt),
    ...(repair
      ? {
          [TABLE.gsi3.partitionKey]: keys.pendingShardPk(shardOf(record.deliveryId, INDEX_SHARDS)),
          [TABLE.gsi3.sortKey]: keys.byCreation(record.createdAt, record.deliveryId),
        }
      : {}),
  };
}

/** Writes new pending summaries, and held ones when given, in batches. */
export async function putPendingDeliveries(
  table: TableContext,
  records: readonly DeliveryRecord[],
  held: readonly DeliveryRecord[] = [],
): Promise<void> {
  await batchWriteAll(table, [
    ...records.map((r) => ({ PutRequest: { Item: summaryItem(r) } })),
    ...held.map((r) => ({ PutRequest: { Item: summaryItem(r) } })),
  ]);
}

/**
 * Puts pending deliveries whose message could not be sent in the stuck-pending repair's index
 * (docs/architecture.md#stuck-pending-repair): a state item, unless one exists (its delivery moved on).
 */
export async function markForRepair(table: TableContext, records: readonly DeliveryRecord[]): Promise<void> {
  await Promise.all(
    records.map(async (r) => {
      try {
        await table.doc.send(new PutCommand({ TableName: table.tableName, Item: stateItem(r, true), ConditionExpression: IF_ABSENT }));
      } catch (e) {
        if (!(e instanceof ConditionalCheckFailedException)) throw e;
      }
    }),
  );
}

/** What {@link putDeliveriesIfAbsent} found: the rows it wrote, and the rows that were already there (as they are now). */
export interface PutPendingOutcome {
  readonly created: readonly DeliveryRecord[];
  /** Rows with an id already taken, read back (strongly consistent); a row deleted meanwhile is left out. */
  readonly existing: readonly DeliveryRecord[];
}

/** Conditional puts in flight at once: enough for a large fan-out, few enough to stay polite to the table. */
const PUT_CONCURRENCY = 16;

/**
 * The publisher's write (docs/architecture.md#publisher): new pending summaries, and held ones when given, each put-if-absent:
 * a row that already exists is never overwritten (it may have moved on: evidence,
 * a terminal status), only read back. A publisher re-run after a partial write
 * thus completes the missing rows and learns which of the others are still pending.
 */
export async function putDeliveriesIfAbsent(
  table: TableContext,
  records: readonly DeliveryRecord[],
  held: readonly DeliveryRecord[] = [],
): Promise<PutPendingOutcome> {
  const writes = [...records.map((r) => ({ record: r, item: summaryItem(r) })), ...held.map((r) => ({ record: r, item: summaryItem(r) }))];
  const created: DeliveryRecord[] = [];
  const taken: string[] = [];
  let next = 0;
  let failed = false;
  const worker = async () => {
    // After a failure no worker starts another put: the caller's retry completes them.
    while (!failed && next < writes.length) {
      const { record, item } = writes[next++]!;
      try {
        await table.doc.send(new PutCommand({ TableName: table.tableName, Item: item, ConditionExpression: IF_ABSENT }));
        created.push(record);
      } catch (e) {
        if (!(e instanceof ConditionalCheckFailedException)) {
          failed = true;
          throw e;
        }
        taken.push(record.deliveryId);
      }
    }
  };
  // Settle every worker before failing: the invocation never ends with a put still in flight.
  const settled = await Promise.allSettled(Array.from({ length: Math.min(PUT_CONCURRENCY, writes.length) }, worker));
  const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failure) throw failure.reason;
  const existing = (await Promise.all(taken.map((id) => getDelivery(table, id)))).filter((r): r is DeliveryRecord => r !== null);
  return { created, existing };
}

/**
 * Writes one pending delivery (replay, test send) with an optional audit event, atomically: its
 * summary, and its state in the stuck-pending repair's index (its message is sent afterwards).
 */
export async function putPendingDelivery(table: TableContext, record: DeliveryRecord, now: Date, audit?: AuditInput): Promise<void> {
  await writeAudited(table, pendingWithRepair(table, record), record.workspace, audit, now);
}

/** The transaction items of a pending delivery whose message is sent after the write: summary, and state with the repair keys. */
export function pendingWithRepair(table: TableContext, record: DeliveryRecord, extra: Record<string, unknown> = {}): TransactItem[] {
  return [
    { Put: { TableName: table.tableName, Item: { ...summaryItem(record), ...extra }, ConditionExpression: IF_ABSENT } },
    { Put: { TableName: table.tableName, Item: stateItem(record, true) } },
  ];
}

/**
 * The writes that link a replay to its source (docs/architecture.md#delivery-items), for the
 * replay's own transaction; the source's summary and state are never touched. Always: the link
 * `@REPLAY#<replayId>` in the source's partition (put if absent). With `first`: also the source's
 * `@REPLAYED` marker (put if absent, so only one replay is ever the first: the transaction fails
 * at index 0 when the source has a replay already) and, for a dead-lettered source, one more
 * replayed dead letter in the hour it was dead-lettered (docs/architecture.md#health-counters).
 * Both items expire with the source.
 */
export function replayLinkWrites(
  table: TableContext,
  source: DeliveryRecord,
  replay: DeliveryRecord,
  now: Date,
  first: boolean,
): TransactItem[] {
  const expiresAt = deliveryExpiresAtEpoch(source.createdAt);
  const link: TransactItem = {
    Put: {
      TableName: table.tableName,
      Item: {
        ...keys.deliveryReplay(source.deliveryId, replay.deliveryId),
        type: 'delivery-replay',
        deliveryId: replay.deliveryId,
        createdAt: replay.createdAt,
        [TABLE.ttlAttribute]: expiresAt,
      },
      ConditionExpression: IF_ABSENT,
    },
  };
  if (!first) return [link];
  const marker: TransactItem = {
    Put: {
      TableName: table.tableName,
      Item: {
        ...keys.deliveryReplayed(source.deliveryId),
        type: 'delivery-replayed',
        firstReplayId: replay.deliveryId,
        createdAt: replay.createdAt,
        [TABLE.ttlAttribute]: expiresAt,
      },
      ConditionExpression: IF_ABSENT,
    },
  };
  const counted = source.status === 'dead_lettered' ? replayedDeadLetterWrite(table, source.workspace, source.updatedAt, now) : null;
  return [marker, link, ...(counted ? [counted] : [])];
}

/** Tries a replay takes when concurrent replays of the same source (or counter hour) keep refusing its transaction. */
const REPLAY_TRIES = 5;

/**
 * Writes an interactive replay (docs/behaviour.md#replay): its summary and pending state (in the
 * repair index), its link under the source, the source's marker when it is the first replay, and
 * its audit, in one transaction. A concurrent first replay of the same source makes this one a
 * later replay; a transaction conflict on the shared items is tried again.
 */
export async function putReplayDelivery(
  table: TableContext,
  source: DeliveryRecord,
  replay: DeliveryRecord,
  now: Date,
  audit: AuditInput,
): Promise<void> {
  const own = pendingWithRepair(table, replay);
  let first = true;
  for (let tries = 1; ; tries++) {
    try {
      await writeAudited(table, [...replayLinkWrites(table, source, replay, now, first), ...own], replay.workspace, audit, now);
      return;
    } catch (e) {
      if (tries >= REPLAY_TRIES) throw e;
      // The marker is there: another replay was first; this one is a later replay.
      if (first && conditionFailedAt(e, 0)) first = false;
      else if (!conflicted(e)) throw e;
    }
  }
}

/** A delivery's replay as its GET lists it. */
export interface ReplayLink {
  readonly deliveryId: string;
  readonly status: DeliveryStatus;
  readonly createdAt: string;
}

/**
 * A delivery's newest `limit` replays, newest first (docs/architecture.md#access-patterns): one
 * Query of its `@REPLAY#` links, then the replays' state items (a replay writes its state with
 * its summary), never their summaries and payloads. A replay deleted since is left out.
 */
export async function listReplays(table: TableContext, sourceId: string, limit: number): Promise<ReplayLink[]> {
  const out = await table.doc.send(
    new QueryCommand({
      TableName: table.tableName,
      ...partitionQuery(keys.delivery(sourceId).pk, { sk: { prefix: SK_PREFIX.replay } }),
      ScanIndexForward: false,
      Limit: limit,
      ConsistentRead: true,
    }),
  );
  const links = (out.Items ?? []).map((item) => ({ deliveryId: str(item, 'deliveryId'), createdAt: str(item, 'createdAt') }));
  if (links.length === 0) return [];
  const states = await batchGet(
    table,
    links.map((l) => keys.deliveryState(l.deliveryId)),
    { consistent: true, projection: ['deliveryId', 'status'] },
  );
  const status = new Map(states.map((item) => [str(item, 'deliveryId'), oneOf(item, 'status', DELIVERY_STATUSES)]));
  return links.flatMap((l) => {
    const s = status.get(l.deliveryId);
    return s ? [{ deliveryId: l.deliveryId, status: s, createdAt: l.createdAt }] : [];
  });
}

/** The deliveries of `ids` that have a replay (their `@REPLAYED` marker), read in batches. */
export async function replayedAmong(table: TableContext, ids: readonly string[]): Promise<Set<string>> {
  const markers = await batchGet(
    table,
    [...new Set(ids)].map((id) => keys.deliveryReplayed(id)),
    { projection: [TABLE.partitionKey] },
  );
  return new Set(markers.map((item) => keys.deliveryIdOfPk(str(item, TABLE.partitionKey))));
}

/** Reads items by key, 100 per request, retrying unprocessed keys a bounded number of times; absent ones are left out. */
async function batchGet(
  table: TableContext,
  itemKeys: readonly Record<string, unknown>[],
  options: { consistent?: boolean; projection?: readonly string[] } = {},
): Promise<Item[]> {
  const found: Item[] = [];
  const projection = options.projection
    ? {
        ProjectionExpression: options.projection.map((_, i) => `#p${i}`).join(', '),
        ExpressionAttributeNames: Object.fromEntries(options.projection.map((name, i) => [`#p${i}`, name])),
      }
    : {};
  for (let i = 0; i < itemKeys.length; i += 100) {
    let pending: Record<string, unknown>[] = itemKeys.slice(i, i + 100);
    for (let tries = 0; pending.length > 0 && tries < 10; tries++) {
      const out = await table.doc.send(
        new BatchGetCommand({
          RequestItems: { [table.tableName]: { Keys: pending, ...(options.consistent ? { ConsistentRead: true } : {}), ...projection } },
        }),
      );
      found.push(...(out.Responses?.[table.tableName] ?? []));
      pending = out.UnprocessedKeys?.[table.tableName]?.Keys ?? [];
    }
    if (pending.length > 0) throw new Error(`DynamoDB left ${pending.length} reads unprocessed after 10 tries`);
  }
  return found;
}

/** An attempt written whose state has not caught up yet (a crash between the two writes). */
export interface UnappliedAttempt {
  readonly attempt: Attempt;
  readonly applies: AttemptEffect;
}

/** A delivery as read: its record, and an attempt still to apply to its state, if any. */
export interface DeliveryRead {
  readonly record: DeliveryRecord;
  readonly unapplied: UnappliedAttempt | null;
}

/**
 * Reads a delivery by id (any workspace: callers check ownership), strongly consistent, in one
 * Query of its partition's top three items: the state, the summary, and the latest attempt (or
 * the two latest when there is no state).
 */
export async function readDelivery(table: TableContext, deliveryId: string): Promise<DeliveryRead | null> {
  const out = await table.doc.send(
    new QueryCommand({
      TableName: table.tableName,
      ...partitionQuery(keys.delivery(deliveryId).pk),
      ScanIndexForward: false,
      Limit: 3,
      ConsistentRead: true,
    }),
  );
  const items = out.Items ?? [];
  const summary = items.find((i) => i.sk === keys.delivery(deliveryId).sk);
  if (!summary) return null;
  const record = fromItem(
    mergeStateItem(
      summary,
      items.find((i) => i.sk === keys.deliveryState(deliveryId).sk),
    ),
  );
  const next = items.find((i) => i.sk === keys.attempt(deliveryId, record.evidenceCount + 1).sk);
  const applies = next ? appliesFromItem(next) : null;
  const unapplied = next && applies ? { attempt: attemptFromItem(next), applies } : null;
  return { record, unapplied };
}

/** Reads a delivery by id as it stands (any workspace: callers check ownership). */
export async function getDelivery(table: TableContext, deliveryId: string): Promise<DeliveryRecord | null> {
  return (await readDelivery(table, deliveryId))?.record ?? null;
}

/**
 * Reads deliveries by id, each summary with its state laid over it, as stored items (a page's
 * worth; eventually consistent, as the index entries that name them). A delivery gone is left out.
 */
export async function getDeliveryItems(table: TableContext, ids: readonly string[]): Promise<Map<string, Record<string, unknown>>> {
  const summaries = new Map<string, Record<string, unknown>>();
  const states = new Map<string, Record<string, unknown>>();
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += 50) {
    let pending: Record<string, unknown>[] = unique.slice(i, i + 50).flatMap((id) => [keys.delivery(id), keys.deliveryState(id)]);
    for (let tries = 0; pending.length > 0 && tries < 10; tries++) {
      const out = await table.doc.send(new BatchGetCommand({ RequestItems: { [table.tableName]: { Keys: pending } } }));
      for (const item of out.Responses?.[table.tableName] ?? []) {
        const id = keys.deliveryIdOfPk(String(item.pk));
        (item.sk === keys.delivery(id).sk ? summaries : states).set(id, item);
      }
      pending = out.UnprocessedKeys?.[table.tableName]?.Keys ?? [];
    }
    if (pending.length > 0) throw new Error(`DynamoDB left ${pending.length} reads unprocessed after 10 tries`);
  }
  return new Map([...summaries].map(([id, summary]) => [id, mergeStateItem(summary, states.get(id))]));
}

/** The outcomes an attempt records: every status but `pending`. */
const ATTEMPT_OUTCOMES = DELIVERY_STATUSES.filter((s): s is Attempt['outcome'] => s !== 'pending');

/** The request headers an attempt item holds (absent: none), each value checked. */
function headersOf(item: Item): Record<string, string> {
  const headers = optMap(item, 'requestHeaders') ?? {};
  return Object.fromEntries(Object.keys(headers).map((name) => [name, str(headers, name)]));
}

/** An attempt item (or the state's first attempt) as an attempt, each attribute checked. */
function attemptFromItem(item: Item): Attempt {
  return {
    ordinal: num(item, 'ordinal'),
    outcome: oneOf(item, 'outcome', ATTEMPT_OUTCOMES),
    timestamp: str(item, 'timestamp'),
    durationMs: optNum(item, 'durationMs'),
    failureReason: optStr(item, 'failureReason'),
    requestHeaders: headersOf(item),
    responseStatus: optNum(item, 'responseStatus'),
    responseBody: optStr(item, 'responseBody'),
  };
}

/** The streak changes an attempt item's effect may record. */
/** The effect an attempt item records for its delivery's state, each attribute checked; null when it records none. */
function appliesFromItem(item: Item): AttemptEffect | null {
  const applies = optMap(item, 'applies');
  return applies
    ? {
        status: oneOf(applies, 'status', DELIVERY_STATUSES),
        http: bool(applies, 'http'),
        nextAttemptAt: optStr(applies, 'nextAttemptAt'),
        streak: oneOf(applies, 'streak', STREAK_CHANGES),
      }
    : null;
}

/** The state item's attribute holding the delivery's first attempt (written with the state's first evidence). */
const FIRST_ATTEMPT = 'firstAttempt';

/** The first attempt a delivery's state item holds, if any (a first attempt that moved the endpoint's streak is an `ATT#` item instead). */
async function embeddedFirstAttempt(table: TableContext, deliveryId: string): Promise<Attempt | null> {
  const out = await table.doc.send(
    new GetCommand({
      TableName: table.tableName,
      Key: keys.deliveryState(deliveryId),
      ProjectionExpression: '#first',
      ExpressionAttributeNames: { '#first': FIRST_ATTEMPT },
    }),
  );
  const first = out.Item ? optMap(out.Item, FIRST_ATTEMPT) : null;
  return first ? attemptFromItem(first) : null;
}

/**
 * Attempts of a delivery, by ordinal: the first from the state item (when it holds it), the others
 * from their own items. An `ATT#000001` item beside a state-held first attempt lost the race for
 * ordinal 1 (the state's condition decided): it is not evidence and is not listed.
 */
export async function listAttempts(table: TableContext, deliveryId: string, limit: number, cursor?: string): Promise<Page<Attempt>> {
  const page = (from: string | undefined, size: number) =>
    queryPage(table, {
      pk: keys.delivery(deliveryId).pk,
      skPrefix: SK_PREFIX.attempt,
      forward: true,
      limit: size,
      cursor: from,
      idPattern: /^\d{6}$/,
      map: (item) => {
        const value = attemptFromItem(item);
        const id = attemptId(value.ordinal);
        return { value, sortKey: id, id };
      },
    });
  // A cursor is at ordinal 1 or later: the first attempt belongs to the first page only.
  if (cursor !== undefined) return page(cursor, limit);
  const first = await embeddedFirstAttempt(table, deliveryId);
  if (!first) return page(undefined, limit);
  // The state's first, then the stored items from ordinal 2 on (past any ATT#000001 that lost).
  const afterFirst = encodeCursor({ sortKey: attemptId(1), id: attemptId(1) });
  if (limit === 1) {
    const more = (await page(afterFirst, 1)).items.length > 0;
    return { items: [first], nextCursor: more ? afterFirst : null, [RESUME_AFTER]: () => afterFirst };
  }
  const rest = await page(afterFirst, limit - 1);
  const resumeRest = rest[RESUME_AFTER];
  return {
    items: [first, ...rest.items],
    nextCursor: rest.nextCursor,
    ...(resumeRest ? { [RESUME_AFTER]: (index: number) => (index === 0 ? afterFirst : resumeRest(index - 1)) } : {}),
  };
}

/** What an attempt does to its delivery's state and its endpoint: stored on the attempt, so a crash before the state caught up is completed from it. */
export interface AttemptEffect {
  readonly status: DeliveryStatus;
  /** True for an HTTP attempt (counts in `attempts`, updates the last HTTP evidence). */
  readonly http: boolean;
  readonly nextAttemptAt: string | null;
  readonly streak: StreakChange;
}

/** One observation of a delivery: its evidence and the state it leads to. */
export interface Observation extends AttemptEffect {
  /** The delivery as read before the attempt. */
  readonly delivery: DeliveryRecord;
  /** The endpoint as read (for the streak); null when it is gone. */
  readonly endpoint: EndpointRecord | null;
  readonly attempt: Omit<Attempt, 'ordinal'>;
  /** Audit written when the streak disables the endpoint. */
  readonly disableAudit?: Omit<AuditInput, 'targetId'>;
}

/**
 * Outcome of {@link recordObservation}. `endpoint_changed`: a concurrent change moved the
 * endpoint's streak and nothing was applied; the attempt is stored already (only an attempt stored
 * first goes with a streak change), so a retry applies only the state and streak.
 */
export type RecordOutcome =
  | { kind: 'recorded'; delivery: DeliveryRecord; disabled: boolean; consecutiveFailures: number | null }
  | { kind: 'duplicate' }
  | { kind: 'endpoint_changed' };

/** The delivery as the observation leaves it. */
function deliveryAfter(obs: Observation, nowIso: string): DeliveryRecord {
  const d = obs.delivery;
  return {
    ...d,
    status: obs.status,
    evidenceCount: d.evidenceCount + 1,
    nextAttemptAt: obs.nextAttemptAt,
    updatedAt: nowIso,
    ...(obs.http ? { attempts: d.attempts + 1, lastResponseStatus: obs.attempt.responseStatus, lastError: obs.attempt.failureReason } : {}),
    // Bookkeeping keeps the last HTTP evidence; with none yet, its reason is all there is to show.
    ...(!obs.http && d.attempts === 0 ? { lastError: obs.attempt.failureReason } : {}),
  };
}

/**
 * Records an observation (see the module comment): the attempt, put if absent (taken: `duplicate`),
 * then the state and the streak. A first attempt that moves no streak is not put on its own: it is
 * written inside the state's first write, whose condition then decides the first observation.
 * `attemptWritten`: the attempt is already stored (a retry after `endpoint_changed`, or a
 * roll-forward of an attempt whose state never caught up).
 */
export async function recordObservation(
  table: TableContext,
  obs: Observation,
  now: Date,
  options: { attemptWritten?: boolean } = {},
): Promise<RecordOutcome> {
  const d = obs.delivery;
  const ordinal = d.evidenceCount + 1;
  if (options.attemptWritten) return applyObservation(table, obs, now, null);
  // One write when nothing else changes with it; a streak change is a transaction that concurrent
  // changes of the endpoint can refuse again and again, so its attempt is stored first.
  const movesStreak = obs.endpoint !== null && nextStreak(obs.endpoint, obs.streak) !== null;
  if (ordinal === 1 && !movesStreak) return applyObservation(table, obs, now, { ordinal, ...obs.attempt });
  const applies: AttemptEffect = { status: obs.status, http: obs.http, nextAttemptAt: obs.nextAttemptAt, streak: obs.streak };
  try {
    await table.doc.send(
      new PutCommand({
        TableName: table.tableName,
        Item: {
          ...keys.attempt(d.deliveryId, ordinal),
          type: 'attempt',
          deliveryId: d.deliveryId,
          ordinal,
          ...obs.attempt,
          applies,
          [TABLE.ttlAttribute]: deliveryExpiresAtEpoch(d.createdAt),
        },
        ConditionExpression: IF_ABSENT,
      }),
    );
  } catch (e) {
    if (e instanceof ConditionalCheckFailedException) return { kind: 'duplicate' };
    throw e;
  }
  return applyObservation(table, obs, now, null);
}

/**
 * The state write of an observation: an update (never a put, which would drop the first attempt
 * the item holds) of every state field, leaving the repair's index; with `first`, the first
 * attempt goes in too. Conditional on the evidence count read (or on no state yet: the summary
 * holds the state the count was read from), and on the state still being open, so it applies once.
 */
function stateUpdate(table: TableContext, next: DeliveryRecord, read: number, first: Attempt | null) {
  const { pk, sk, ...fields } = stateItem(next);
  const set = first ? { ...fields, [FIRST_ATTEMPT]: first } : fields;
  const names: Record<string, string> = { '#status': 'status', '#rpk': TABLE.gsi3.partitionKey, '#rsk': TABLE.gsi3.sortKey };
  const values: Record<string, unknown> = { ':read': read, ':open1': OPEN_STATUSES[0], ':open2': OPEN_STATUSES[1] };
  const assignments = Object.entries(set).map(([name, value], i) => {
    names[`#f${i}`] = name;
    values[`:f${i}`] = value;
    return `#f${i} = :f${i}`;
  });
  return {
    TableName: table.tableName,
    Key: { pk, sk },
    UpdateExpression: `SET ${assignments.join(', ')} REMOVE #rpk, #rsk`,
    ConditionExpression: ifAbsentOr('(evidenceCount = :read AND #status IN (:open1, :open2))'),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}

/**
 * Brings the state up to the observation's attempt (with `first`: the first attempt, written in
 * the same item), with the endpoint's streak (and a disable's audit) in the same transaction when
 * the streak changes.
 */
async function applyObservation(table: TableContext, obs: Observation, now: Date, first: Attempt | null): Promise<RecordOutcome> {
  const d = obs.delivery;
  const nowIso = now.toISOString();
  const next = deliveryAfter(obs, nowIso);
  const stateWrite = stateUpdate(table, next, d.evidenceCount, first);

  const items: TransactItem[] = [];
  const ep = obs.endpoint;
  const streak = ep ? nextStreak(ep, obs.streak) : null;
  if (ep && streak && obs.streak === 'reset') {
    items.push({
      Update: {
        TableName: table.tableName,
        Key: keys.endpoint(ep.workspace, ep.endpointId),
        UpdateExpression: 'SET consecutiveFailures = :zero',
        ConditionExpression: IF_EXISTS,
        ExpressionAttributeValues: { ':zero': 0 },
      },
    });
  } else if (ep && streak) {
    // Conditional on the streak read, so concurrent failures can neither skip the threshold nor count twice.
    items.push({
      Update: {
        TableName: table.tableName,
        Key: keys.endpoint(ep.workspace, ep.endpointId),
        UpdateExpression: streak.disables
          ? 'SET consecutiveFailures = :next, enabled = :false, updatedAt = :now'
          : 'SET consecutiveFailures = :next',
        ConditionExpression: streak.disables ? 'consecutiveFailures = :prev AND enabled = :true' : 'consecutiveFailures = :prev',
        ExpressionAttributeValues: {
          ':next': streak.consecutiveFailures,
          ':prev': ep.consecutiveFailures,
          ...(streak.disables ? { ':false': false, ':true': true, ':now': nowIso } : {}),
        },
      },
    });
    if (streak.disables && obs.disableAudit)
      items.push(...auditWrites(table, ep.workspace, { ...obs.disableAudit, targetId: ep.endpointId }, now));
  }

  try {
    // Most first-try deliveries change no streak: one single-item write, not a transaction (which costs every item twice).
    if (items.length === 0) await table.doc.send(new UpdateCommand(stateWrite));
    else await table.doc.send(new TransactWriteCommand({ TransactItems: [{ Update: stateWrite }, ...items] }));
  } catch (e) {
    if (e instanceof ConditionalCheckFailedException || conditionFailedAt(e, 0)) return { kind: 'duplicate' };
    // The endpoint moved, or another record's transaction was moving it: re-read it and apply again.
    if (conditionFailedAt(e, 1) || conflictAt(e, 1)) return { kind: 'endpoint_changed' };
    throw e;
  }
  return {
    kind: 'recorded',
    disabled: streak?.disables ?? false,
    consecutiveFailures: streak?.consecutiveFailures ?? null,
    delivery: next,
  };
}

/**
 * Deliveries created from `since` and before `before` that still had no evidence when the
 * (eventually consistent, sparse) index was read: the repair's candidates, oldest first, from
 * every shard.
 */
export async function pendingCreatedBefore(table: TableContext, since: string, before: string, limit: number): Promise<string[]> {
  const partitions = Array.from({ length: INDEX_SHARDS }, (_, shard) => keys.pendingShardPk(shard));
  const entries = await shardedQuery(table, TABLE.gsi3, partitions, { between: [since, before] }, limit);
  return entries.map((item) => keys.deliveryIdOfPk(str(item, TABLE.partitionKey)));
}
