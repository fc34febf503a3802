/**
 * Health counters in the table (docs/architecture.md#health-counters): one item per
 * (endpoint, hour) and per (workspace, hour), each written once per batch by one UpdateItem
 * ADD and expired by TTL; read back by key range, never scanned.
 */
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import {
  counterExpiresAtEpoch,
  emptyCounts,
  hourOf,
  type BatchIncrements,
  type EndpointCounts,
  type HourCounts,
  type ScalarCounts,
} from '../domain/delivery-health';
import type { TransactItem } from './audit';
import type { TableContext } from './client';
import { keys, TABLE } from './table-schema';
import { partitionQuery, queryPages, str } from './table-io';

const SCALARS = ['attempts', 'delivered', 'failed', 'failedPermanent', 'deadLettered'] as const satisfies readonly (keyof ScalarCounts)[];
/** Attribute prefixes of the per-status counts and the latency histogram (flat: ADD cannot create a nested map). */
const STATUS_PREFIX = 'status_';
const LATENCY_PREFIX = 'latency_';
const ENDPOINT_TYPE = 'endpoint-health';
const WORKSPACE_TYPE = 'workspace-health';

/** One UpdateItem: ADD every non-zero count, stamp the type and the TTL (and the latest attempt). */
async function addCounts(
  table: TableContext,
  key: { pk: string; sk: string },
  type: string,
  hour: string,
  adds: Record<string, number>,
  lastAttemptAt: string | null,
) {
  const names: Record<string, string> = { '#type': 'type', '#ttl': TABLE.ttlAttribute };
  const values: Record<string, unknown> = { ':type': type, ':ttl': counterExpiresAtEpoch(hour) };
  const added: string[] = [];
  Object.entries(adds)
    .filter(([, n]) => n !== 0)
    .forEach(([attribute, n], i) => {
      names[`#a${i}`] = attribute;
      values[`:a${i}`] = n;
      added.push(`#a${i} :a${i}`);
    });
  const sets = ['#type = :type', '#ttl = if_not_exists(#ttl, :ttl)'];
  if (lastAttemptAt !== null) {
    // Batches of one key overlap by seconds at most, so a plain SET may lag the true latest by that much.
    sets.push('lastAttemptAt = :last');
    values[':last'] = lastAttemptAt;
  }
  await table.doc.send(
    new UpdateCommand({
      TableName: table.tableName,
      Key: key,
      UpdateExpression: `SET ${sets.join(', ')}${added.length ? ` ADD ${added.join(', ')}` : ''}`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    }),
  );
}

function scalarAdds(c: ScalarCounts): Record<string, number> {
  return Object.fromEntries(SCALARS.map((k) => [k, c[k]]));
}

function endpointAdds(c: EndpointCounts): Record<string, number> {
  return {
    ...scalarAdds(c),
    ...Object.fromEntries(Object.entries(c.byResponseStatus).map(([k, n]) => [`${STATUS_PREFIX}${k}`, n])),
    ...Object.fromEntries(Object.entries(c.latency).map(([i, n]) => [`${LATENCY_PREFIX}${String(i).padStart(2, '0')}`, n])),
  };
}

/**
 * Adds one batch's increments: one write per counter key, all attempted even if one fails;
 * throws afterwards if any failed (those counts are lost, as for a crash; nothing is retried
 * that could count twice).
 */
export async function addBatchIncrements(table: TableContext, inc: BatchIncrements): Promise<void> {
  const writes = [
    ...inc.endpoints.map((e) =>
      addCounts(
        table,
        keys.endpointHealth(e.endpointId, inc.hour),
        ENDPOINT_TYPE,
        inc.hour,
        endpointAdds(e.counts),
        e.counts.lastAttemptAt,
      ),
    ),
    ...inc.workspaces.map((w) =>
      addCounts(table, keys.workspaceHealth(w.workspace, inc.hour), WORKSPACE_TYPE, inc.hour, scalarAdds(w.counts), null),
    ),
  ];
  const failed = (await Promise.allSettled(writes)).filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed.length > 0)
    throw new AggregateError(
      failed.map((f): unknown => f.reason),
      `${failed.length} of ${writes.length} health counter writes failed`,
    );
}

function countsFromItem(item: Record<string, unknown>): EndpointCounts {
  const c = emptyCounts();
  for (const k of SCALARS) c[k] = Number(item[k] ?? 0);
  for (const [attribute, value] of Object.entries(item)) {
    if (attribute.startsWith(STATUS_PREFIX)) c.byResponseStatus[attribute.slice(STATUS_PREFIX.length)] = Number(value);
    else if (attribute.startsWith(LATENCY_PREFIX)) c.latency[Number(attribute.slice(LATENCY_PREFIX.length))] = Number(value);
  }
  c.lastAttemptAt = typeof item.lastAttemptAt === 'string' ? item.lastAttemptAt : null;
  return c;
}

async function readHours(table: TableContext, pk: string, firstHour: string, lastHour: string): Promise<HourCounts[]> {
  const out: HourCounts[] = [];
  for await (const page of queryPages(table, {
    ...partitionQuery(pk, { sk: { between: [firstHour, lastHour] } }),
  })) {
    for (const item of page.Items ?? []) out.push({ hour: str(item, TABLE.sortKey), counts: countsFromItem(item) });
  }
  return out;
}

/** An endpoint's hour counters from `firstHour` to `lastHour` inclusive (at most 168 items for 7 days). */
export function readEndpointHours(table: TableContext, endpointId: string, firstHour: string, lastHour: string): Promise<HourCounts[]> {
  return readHours(table, keys.endpointHealthPk(endpointId), firstHour, lastHour);
}

/** A workspace's hour counters from `firstHour` to `lastHour` inclusive. */
export function readWorkspaceHours(table: TableContext, slug: string, firstHour: string, lastHour: string): Promise<HourCounts[]> {
  return readHours(table, keys.workspaceHealthPk(slug), firstHour, lastHour);
}

/** An endpoint's `limit` newest hour counters between `firstHour` and `lastHour`: one query, one page. */
export async function readLatestEndpointHours(
  table: TableContext,
  endpointId: string,
  firstHour: string,
  lastHour: string,
  limit: number,
): Promise<HourCounts[]> {
  const out = await table.doc.send(
    new QueryCommand({
      TableName: table.tableName,
      ...partitionQuery(keys.endpointHealthPk(endpointId), { sk: { between: [firstHour, lastHour] } }),
      ScanIndexForward: false,
      Limit: limit,
    }),
  );
  return (out.Items ?? []).map((item) => ({ hour: str(item, TABLE.sortKey), counts: countsFromItem(item) }));
}

/** The attribute of a workspace's replayed dead letters per hour (docs/architecture.md#health-counters). */
const REPLAYED_DEAD_LETTERED = 'replayedDeadLettered';

/**
 * The write that counts one more replayed dead letter of a workspace, in the hour it was
 * dead-lettered (`deadLetteredAt`), for the first replay's own transaction: an `ADD` on the
 * workspace's replayed-dead-letter item of that hour, which expires like the health counters.
 * Null when that hour's counters have expired already (nothing reads it any more).
 */
export function replayedDeadLetterWrite(table: TableContext, workspace: string, deadLetteredAt: string, now: Date): TransactItem | null {
  const hour = hourOf(deadLetteredAt);
  const expiresAt = counterExpiresAtEpoch(hour);
  if (expiresAt * 1000 <= now.getTime()) return null;
  return {
    Update: {
      TableName: table.tableName,
      Key: keys.workspaceReplayed(workspace, hour),
      UpdateExpression: 'SET #type = :type, #ttl = if_not_exists(#ttl, :ttl) ADD #n :one',
      ExpressionAttributeNames: { '#type': 'type', '#ttl': TABLE.ttlAttribute, '#n': REPLAYED_DEAD_LETTERED },
      ExpressionAttributeValues: { ':type': 'workspace-replayed', ':ttl': expiresAt, ':one': 1 },
    },
  };
}

/** How many of a workspace's dead letters of the hours `firstHour` to `lastHour` (inclusive) have been replayed. */
export async function readReplayedDeadLetters(table: TableContext, slug: string, firstHour: string, lastHour: string): Promise<number> {
  let total = 0;
  for await (const page of queryPages(table, partitionQuery(keys.workspaceReplayedPk(slug), { sk: { between: [firstHour, lastHour] } }))) {
    for (const item of page.Items ?? []) total += Number(item[REPLAYED_DEAD_LETTERED] ?? 0);
  }
  return total;
}
