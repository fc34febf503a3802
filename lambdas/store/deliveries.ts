/**
 * Delivery summaries and their immutable attempt evidence
 * (docs/architecture.md#recording-transaction). Recording an observation is one transaction: the attempt (put
 * if absent), the summary (conditional on the evidence count read and on not
 * being terminal) and the endpoint's streak, so a duplicate or late observation
 * can never regress the summary or repeat a streak change or an audit.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { idPattern } from '../contract/ids';
import type { Page } from '../contract/pagination';
import type { Attempt, Delivery, DeliveryStatus } from '../contract/schemas';
import { nextStreak, type DeliveryRecord, type StreakChange } from '../domain/delivery-lifecycle';
import { deliveryExpiresAtEpoch } from '../domain/scheduled-jobs';
import type { TableContext } from './client';
import { auditPut, writeAudited, type AuditInput, type TransactItem } from './audit';
import type { EndpointRecord } from './endpoints';
import { queryPage } from './pages';
import { attemptId, INDEX_SHARDS, keys, shardOf, SK_PREFIX, TABLE } from './table-schema';
import { batchWriteAll, conditionFailedAt } from './table-io';

/** The wire form of a summary. */
export function toDeliveryWire(r: DeliveryRecord): Delivery {
  return {
    deliveryId: r.deliveryId,
    endpointId: r.endpointId,
    status: r.status,
    attempts: r.attempts,
    nextAttemptAt: r.nextAttemptAt ?? null,
    eventType: r.eventType,
    payload: r.payload,
    replayedFrom: r.replayedFrom ?? null,
    lastResponseStatus: r.lastResponseStatus ?? null,
    lastError: r.lastError ?? null,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

/** A stored summary item as a record. */
export function fromItem(item: Record<string, unknown>): DeliveryRecord {
  return {
    deliveryId: item.deliveryId as string,
    workspace: item.workspace as string,
    endpointId: item.endpointId as string,
    status: item.status as DeliveryStatus,
    attempts: (item.attempts as number) ?? 0,
    evidenceCount: (item.evidenceCount as number) ?? 0,
    nextAttemptAt: (item.nextAttemptAt as string | null) ?? null,
    eventType: item.eventType as string,
    payload: item.payload,
    replayedFrom: (item.replayedFrom as string | null) ?? null,
    lastResponseStatus: (item.lastResponseStatus as number | null) ?? null,
    lastError: (item.lastError as string | null) ?? null,
    createdAt: item.createdAt as string,
    updatedAt: item.updatedAt as string,
  };
}

/** The stored item of a new pending summary, with its index keys. */
export function pendingItem(record: DeliveryRecord): Record<string, unknown> {
  return {
    ...keys.delivery(record.deliveryId),
    type: 'delivery',
    ...record,
    [TABLE.gsi1.partitionKey]: keys.deliveriesOfEndpoint(record.endpointId),
    [TABLE.gsi1.sortKey]: record.deliveryId,
    [TABLE.gsi2.partitionKey]: keys.retentionShardPk(shardOf(record.deliveryId, INDEX_SHARDS)),
    [TABLE.gsi2.sortKey]: keys.byCreation(record.createdAt, record.deliveryId),
    [TABLE.gsi3.partitionKey]: keys.pendingShardPk(shardOf(record.deliveryId, INDEX_SHARDS)),
    [TABLE.gsi3.sortKey]: keys.byCreation(record.createdAt, record.deliveryId),
    // Retention by TTL (docs/behaviour.md#retention-and-scheduled-jobs); its attempts carry the same.
    [TABLE.ttlAttribute]: deliveryExpiresAtEpoch(record.createdAt),
    // The workspace delivery log, in shards (docs/architecture.md#delivery-log-index).
    [TABLE.deliveryLog.partitionKey]: keys.deliveryLogPk(record.workspace, keys.deliveryLogShard(record.deliveryId)),
    [TABLE.deliveryLog.sortKey]: record.deliveryId,
  };
}

/**
 * The stored item of a held summary (docs/behaviour.md#held-deliveries): a pending
 * item's keys minus the stuck-pending repair's (gsi3), as it is terminal and never queued.
 */
export function heldItem(record: DeliveryRecord): Record<string, unknown> {
  const { [TABLE.gsi3.partitionKey]: _pk, [TABLE.gsi3.sortKey]: _sk, ...item } = pendingItem(record);
  return item;
}

/** Writes new pending summaries, and held ones when given, in batches. */
export async function putPendingDeliveries(table: TableContext, records: readonly DeliveryRecord[], held: readonly DeliveryRecord[] = []): Promise<void> {
  await batchWriteAll(table, [...records.map((r) => ({ PutRequest: { Item: pendingItem(r) } })), ...held.map((r) => ({ PutRequest: { Item: heldItem(r) } }))]);
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
export async function putDeliveriesIfAbsent(table: TableContext, records: readonly DeliveryRecord[], held: readonly DeliveryRecord[] = []): Promise<PutPendingOutcome> {
  const writes = [...records.map((r) => ({ record: r, item: pendingItem(r) })), ...held.map((r) => ({ record: r, item: heldItem(r) }))];
  const created: DeliveryRecord[] = [];
  const taken: string[] = [];
  let next = 0;
  let failed = false;
  const worker = async () => {
    // After a failure no worker starts another put: the caller's retry completes them.
    while (!failed && next < writes.length) {
      const { record, item } = writes[next++]!;
      try {
        await table.doc.send(new PutCommand({ TableName: table.tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' }));
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

/** Writes one pending summary (replay, test send) with an optional audit event, atomically. */
export async function putPendingDelivery(table: TableContext, record: DeliveryRecord, now: Date, audit?: AuditInput): Promise<void> {
  await writeAudited(table, [{ Put: { TableName: table.tableName, Item: pendingItem(record), ConditionExpression: 'attribute_not_exists(pk)' } }], record.workspace, audit, now);
}

/** Reads a summary by id (any workspace: callers check ownership). */
export async function getDelivery(table: TableContext, deliveryId: string): Promise<DeliveryRecord | null> {
  const out = await table.doc.send(new GetCommand({ TableName: table.tableName, Key: keys.delivery(deliveryId), ConsistentRead: true }));
  return out.Item ? fromItem(out.Item) : null;
}

/** Deliveries of an endpoint, newest first. */
export function listDeliveriesOfEndpoint(table: TableContext, endpointId: string, limit: number, cursor?: string): Promise<Page<Delivery>> {
  return queryPage(table, {
    pk: keys.deliveriesOfEndpoint(endpointId),
    skPrefix: SK_PREFIX.deliveryOfEndpoint,
    forward: false,
    limit,
    cursor,
    idPattern: idPattern('whd'),
    index: {
      name: TABLE.gsi1.name,
      partitionKey: TABLE.gsi1.partitionKey,
      sortKey: TABLE.gsi1.sortKey,
      startKey: (id) => ({ ...keys.delivery(id), [TABLE.gsi1.partitionKey]: keys.deliveriesOfEndpoint(endpointId), [TABLE.gsi1.sortKey]: id }),
    },
    map: (item) => {
      const value = toDeliveryWire(fromItem(item));
      return { value, sortKey: value.createdAt, id: value.deliveryId };
    },
  });
}

function attemptFromItem(item: Record<string, unknown>): Attempt {
  return {
    ordinal: item.ordinal as number,
    outcome: item.outcome as Attempt['outcome'],
    timestamp: item.timestamp as string,
    durationMs: (item.durationMs as number | null) ?? null,
    failureReason: (item.failureReason as string | null) ?? null,
    requestHeaders: (item.requestHeaders as Record<string, string>) ?? {},
    responseStatus: (item.responseStatus as number | null) ?? null,
    responseBody: (item.responseBody as string | null) ?? null,
  };
}

/** Attempts of a delivery, by ordinal. */
export function listAttempts(table: TableContext, deliveryId: string, limit: number, cursor?: string): Promise<Page<Attempt>> {
  return queryPage(table, {
    pk: keys.delivery(deliveryId).pk,
    skPrefix: SK_PREFIX.attempt,
    forward: true,
    limit,
    cursor,
    idPattern: /^\d{6}$/,
    map: (item) => {
      const value = attemptFromItem(item);
      const id = attemptId(value.ordinal);
      return { value, sortKey: id, id };
    },
  });
}

/** One observation of a delivery: its evidence and the summary it leads to. */
export interface Observation {
  /** The summary as read before the attempt. */
  readonly delivery: DeliveryRecord;
  /** The endpoint as read (for the streak); null when it is gone. */
  readonly endpoint: EndpointRecord | null;
  readonly attempt: Omit<Attempt, 'ordinal'>;
  readonly status: DeliveryStatus;
  /** True for an HTTP attempt (counts in `attempts`, updates the last HTTP evidence). */
  readonly http: boolean;
  readonly nextAttemptAt: string | null;
  readonly streak: StreakChange;
  /** Audit written when the streak disables the endpoint. */
  readonly disableAudit?: Omit<AuditInput, 'targetId'>;
}

/** Outcome of {@link recordObservation}. */
export type RecordOutcome =
  | { kind: 'recorded'; delivery: DeliveryRecord; disabled: boolean; consecutiveFailures: number | null }
  | { kind: 'duplicate' }
  | { kind: 'endpoint_changed' };

/** Records an observation in one transaction (see the module comment). */
export async function recordObservation(table: TableContext, obs: Observation, now: Date): Promise<RecordOutcome> {
  const d = obs.delivery;
  const ordinal = d.evidenceCount + 1;
  const nowIso = now.toISOString();
  const attempt: Attempt = { ordinal, ...obs.attempt };
  const summary: Record<string, unknown> = {
    ':status': obs.status,
    ':evidence': ordinal,
    ':read': d.evidenceCount,
    ':open1': 'pending',
    ':open2': 'failed',
    ':next': obs.nextAttemptAt,
    ':now': nowIso,
  };
  const sets = ['#status = :status', 'evidenceCount = :evidence', 'nextAttemptAt = :next', 'updatedAt = :now'];
  if (obs.http) {
    sets.push('attempts = :attempts', 'lastResponseStatus = :lrs', 'lastError = :lerr');
    summary[':attempts'] = d.attempts + 1;
    summary[':lrs'] = attempt.responseStatus;
    summary[':lerr'] = attempt.failureReason;
  } else if (d.attempts === 0) {
    // Bookkeeping keeps the last HTTP evidence; with none yet, its reason is all there is to show.
    sets.push('lastError = :lerr');
    summary[':lerr'] = attempt.failureReason;
  }

  const items: TransactItem[] = [
    {
      Put: {
        TableName: table.tableName,
        Item: { ...keys.attempt(d.deliveryId, ordinal), type: 'attempt', deliveryId: d.deliveryId, ...attempt, [TABLE.ttlAttribute]: deliveryExpiresAtEpoch(d.createdAt) },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    {
      Update: {
        TableName: table.tableName,
        Key: keys.delivery(d.deliveryId),
        UpdateExpression: `SET ${sets.join(', ')} REMOVE #g3pk, #g3sk`,
        ConditionExpression: 'evidenceCount = :read AND #status IN (:open1, :open2)',
        ExpressionAttributeNames: { '#status': 'status', '#g3pk': TABLE.gsi3.partitionKey, '#g3sk': TABLE.gsi3.sortKey },
        ExpressionAttributeValues: summary,
      },
    },
  ];

  const ep = obs.endpoint;
  const streak = ep ? nextStreak(ep, obs.streak) : null;
  if (ep && streak && obs.streak === 'reset') {
    items.push({
      Update: {
        TableName: table.tableName,
        Key: keys.endpoint(ep.workspace, ep.endpointId),
        UpdateExpression: 'SET consecutiveFailures = :zero',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':zero': 0 },
      },
    });
  } else if (ep && streak) {
    // Conditional on the streak read, so concurrent failures can neither skip the threshold nor count twice.
    items.push({
      Update: {
        TableName: table.tableName,
        Key: keys.endpoint(ep.workspace, ep.endpointId),
        UpdateExpression: streak.disables ? 'SET consecutiveFailures = :next, enabled = :false, updatedAt = :now' : 'SET consecutiveFailures = :next',
        ConditionExpression: streak.disables ? 'consecutiveFailures = :prev AND enabled = :true' : 'consecutiveFailures = :prev',
        ExpressionAttributeValues: {
          ':next': streak.consecutiveFailures,
          ':prev': ep.consecutiveFailures,
          ...(streak.disables ? { ':false': false, ':true': true, ':now': nowIso } : {}),
        },
      },
    });
    if (streak.disables && obs.disableAudit) items.push(auditPut(table, ep.workspace, { ...obs.disableAudit, targetId: ep.endpointId }, now));
  }

  try {
    await table.doc.send(new TransactWriteCommand({ TransactItems: items }));
  } catch (e) {
    if (conditionFailedAt(e, 0) || conditionFailedAt(e, 1)) return { kind: 'duplicate' };
    if (conditionFailedAt(e, 2)) return { kind: 'endpoint_changed' };
    throw e;
  }
  return {
    kind: 'recorded',
    disabled: streak?.disables ?? false,
    consecutiveFailures: streak?.consecutiveFailures ?? null,
    delivery: {
      ...d,
      status: obs.status,
      evidenceCount: ordinal,
      nextAttemptAt: obs.nextAttemptAt,
      updatedAt: nowIso,
      ...(obs.http ? { attempts: d.attempts + 1, lastResponseStatus: attempt.responseStatus, lastError: attempt.failureReason } : {}),
      ...(!obs.http && d.attempts === 0 ? { lastError: attempt.failureReason } : {}),
    },
  };
}

/** The delivery id of an index entry (from its table key). */
function deliveryIdOfKey(item: Record<string, unknown>): string {
  return keys.deliveryIdOfPk(String(item.pk));
}

/** Index entries of one partition whose sort key is below `before` (and not below `from`), in index order. */
async function indexEntriesBefore(
  table: TableContext,
  index: typeof TABLE.gsi2 | typeof TABLE.gsi3,
  partition: string,
  before: string,
  limit: number,
  from?: string,
): Promise<Record<string, unknown>[]> {
  const out = await table.doc.send(
    new QueryCommand({
      TableName: table.tableName,
      IndexName: index.name,
      KeyConditionExpression: from === undefined ? '#pk = :pk AND #sk < :before' : '#pk = :pk AND #sk BETWEEN :from AND :before',
      ExpressionAttributeNames: { '#pk': index.partitionKey, '#sk': index.sortKey },
      ExpressionAttributeValues: { ':pk': partition, ':before': before, ...(from === undefined ? {} : { ':from': from }) },
      ScanIndexForward: true,
      Limit: limit,
    }),
  );
  return out.Items ?? [];
}

/** An index entry as retention and repair read it: the delivery and its creation time, from the keys alone. */
export interface CreatedEntry {
  readonly deliveryId: string;
  readonly createdAt: string;
}

function createdEntry(index: typeof TABLE.gsi2 | typeof TABLE.gsi3) {
  return (item: Record<string, unknown>): CreatedEntry => ({ deliveryId: deliveryIdOfKey(item), createdAt: String(item[index.sortKey]).split('#')[0]! });
}

/** The oldest `limit` entries of every shard of an index below `before` (and from `from`), merged oldest first. */
async function oldestAcrossShards(
  table: TableContext,
  index: typeof TABLE.gsi2 | typeof TABLE.gsi3,
  partitionOf: (shard: number) => string,
  before: string,
  limit: number,
  from?: string,
): Promise<CreatedEntry[]> {
  const shards = await Promise.all(Array.from({ length: INDEX_SHARDS }, (_, shard) => indexEntriesBefore(table, index, partitionOf(shard), before, limit, from)));
  return shards
    .flat()
    .sort((a, b) => String(a[index.sortKey]).localeCompare(String(b[index.sortKey])))
    .slice(0, limit)
    .map(createdEntry(index));
}

/**
 * Deliveries created from `since` and before `before` that still had no evidence when the
 * (eventually consistent, sparse) index was read: the repair's candidates, oldest first, from
 * every shard; plus those of the unsharded hour partitions written before the index was sharded.
 */
export async function pendingCreatedBefore(table: TableContext, since: string, before: string, limit: number): Promise<string[]> {
  const sharded = await oldestAcrossShards(table, TABLE.gsi3, keys.pendingShardPk, before, limit, since);
  const legacy: string[] = [];
  for (let hour = Date.parse(since.slice(0, 13) + ':00:00Z'); hour <= Date.parse(before) && legacy.length + sharded.length < limit; hour += 3600_000) {
    const partition = keys.legacyPendingHour(new Date(hour).toISOString());
    legacy.push(...(await indexEntriesBefore(table, TABLE.gsi3, partition, before, limit - sharded.length - legacy.length)).map(deliveryIdOfKey));
  }
  return [...legacy, ...sharded.map((e) => e.deliveryId)];
}

/** Deliveries of every retention shard created before `before`, oldest first, at most `limit`. */
export async function deliveriesCreatedBefore(table: TableContext, before: string, limit: number): Promise<CreatedEntry[]> {
  return oldestAcrossShards(table, TABLE.gsi2, keys.retentionShardPk, before, limit);
}

/** Deliveries written before sharding, of one creation day, created before `before`, oldest first. */
export async function legacyDeliveriesOfDay(table: TableContext, day: string, before: string, limit: number): Promise<CreatedEntry[]> {
  return (await indexEntriesBefore(table, TABLE.gsi2, keys.legacyDeliveryDay(day), before, limit)).map(createdEntry(TABLE.gsi2));
}

const WATERMARK = keys.retentionWatermark;

/** The oldest creation day retention has not finished (null before the first pass). */
export async function getRetentionWatermark(table: TableContext): Promise<string | null> {
  const out = await table.doc.send(new GetCommand({ TableName: table.tableName, Key: WATERMARK, ConsistentRead: true }));
  return (out.Item?.day as string | undefined) ?? null;
}

/** Saves the retention watermark. */
export async function putRetentionWatermark(table: TableContext, day: string): Promise<void> {
  await table.doc.send(new PutCommand({ TableName: table.tableName, Item: { ...WATERMARK, type: 'retention-watermark', day } }));
}
