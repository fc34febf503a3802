/**
 * The workspace delivery log (docs/architecture.md#delivery-log-index), and an endpoint's
 * deliveries: pages of delivery summaries, newest first, filtered, with bounded reads, merged
 * from index shards that hold keys (plus, in the log, the event type, so that filter runs in the
 * index). The status lives on the delivery's state item, so a status filter (and, on an
 * endpoint's shards, an event-type filter) reads the summaries of the entries it looks at; a page
 * reads its summaries from the table. An endpoint's deliveries are its 8 gsi2 shards.
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { deliveryLogReadBudget } from '../contract/delivery-log';
import { RESUME_AFTER, type Page } from '../contract/pagination';
import type { Delivery } from '../contract/schemas';
import {
  decodeDeliveryLogCursor,
  filterIdBounds,
  deliveryLogFilter,
  encodeDeliveryLogCursor,
  matchesDeliveryLogFilter,
  type DeliveryLogFilter,
} from '../domain/delivery-log';
import { mergeNewestFirst, type ShardRead } from '../domain/newest-first-merge';
import type { TableContext } from './client';
import { partitionQuery, shardedQuery, str, withExpressions } from './table-io';
import { fromItem, getDeliveryItems, toDeliveryWire } from './deliveries';
import { liveEndpointIds } from './endpoints';
import { endpointDeliveryPartitions, keys, TABLE } from './table-schema';

/** One index partition a page reads: a log shard, or an endpoint's gsi2 shard. */
interface LogSource {
  readonly index: { readonly name: string; readonly partitionKey: string; readonly sortKey: string };
  readonly pk: string;
}

/** The event-type filter as a FilterExpression on the log index, whose entries carry the event type. */
function eventTypeExpression(filter: DeliveryLogFilter) {
  if (!filter.eventType) return {};
  const exact = 'exact' in filter.eventType;
  return {
    FilterExpression: exact ? '#et = :et' : 'begins_with(#et, :et)',
    ExpressionAttributeNames: { '#et': 'eventType' },
    ExpressionAttributeValues: { ':et': 'exact' in filter.eventType ? filter.eventType.exact : filter.eventType.prefix },
  };
}

/** True when the filter needs the summaries of a source's entries (what its index entries do not hold). */
function needsSummaries(source: LogSource, filter: DeliveryLogFilter): boolean {
  return (
    filter.statuses !== null ||
    (source.index !== TABLE.deliveryLog && filter.eventType !== null) ||
    // An event's partition holds every endpoint's deliveries of the event.
    (source.index === TABLE.eventDeliveries && filter.endpointId !== null)
  );
}

/**
 * The index partitions a page of the log merges: with an `eventId`, the event's one partition (a
 * keyed read, whatever the other filters); with an `endpointId`, that endpoint's gsi2 shards;
 * otherwise the workspace's log shards.
 */
function logSources(workspace: string, filter: DeliveryLogFilter): LogSource[] {
  if (filter.eventId !== null) return [{ index: TABLE.eventDeliveries, pk: keys.eventDeliveriesPk(workspace, filter.eventId) }];
  if (filter.endpointId !== null) return endpointDeliveryPartitions(filter.endpointId);
  return Array.from({ length: keys.deliveryLogShards }, (_, shard) => ({
    index: TABLE.deliveryLog,
    pk: keys.deliveryLogPk(workspace, shard),
  }));
}

/**
 * Reads one chunk of a source, newest first, strictly older than `after`, inside the filter's id
 * range. When the filter needs what the entries do not hold, it reads the chunk's summaries and
 * keeps those that match: they are the matches, whole, and count as read. Otherwise a match's
 * value is null (the page reads its summaries).
 */
async function readSource(
  table: TableContext,
  source: LogSource,
  filter: DeliveryLogFilter,
  after: string | null,
  limit: number,
): Promise<ShardRead<Record<string, unknown> | null>> {
  const range = filterIdBounds(filter);
  if (after !== null && after <= range.low) return { matches: [], evaluated: 0, stoppedAt: null };
  const {
    FilterExpression,
    ExpressionAttributeNames = {},
    ExpressionAttributeValues = {},
  } = source.index === TABLE.deliveryLog ? eventTypeExpression(filter) : {};
  const out = await table.doc.send(
    new QueryCommand({
      TableName: table.tableName,
      ...withExpressions(partitionQuery(source.pk, { index: source.index, sk: { between: [range.low, range.high] } }), {
        names: ExpressionAttributeNames,
        values: ExpressionAttributeValues,
      }),
      ...(FilterExpression ? { FilterExpression } : {}),
      ScanIndexForward: false,
      Limit: limit,
      // Strictly older than `after`; a position above the range needs no start (the range bounds it).
      ...(after !== null && after <= range.high
        ? { ExclusiveStartKey: { ...keys.delivery(after), [source.index.partitionKey]: source.pk, [source.index.sortKey]: after } }
        : {}),
    }),
  );
  const position = (item: Record<string, unknown>) => String(item[source.index.sortKey]);
  const stoppedAt = out.LastEvaluatedKey ? position(out.LastEvaluatedKey) : null;
  const entries = (out.Items ?? []).map((item) => ({ position: position(item), value: null }));
  if (!needsSummaries(source, filter)) return { matches: entries, evaluated: out.ScannedCount ?? 0, stoppedAt };
  const summaries = await getDeliveryItems(
    table,
    entries.map((e) => e.position),
  );
  const matches = entries.flatMap((e) => {
    const item = summaries.get(e.position);
    return item && matchesDeliveryLogFilter(filter, toDeliveryWire(fromItem(item))) ? [{ position: e.position, value: item }] : [];
  });
  return { matches, evaluated: out.ScannedCount ?? 0, stoppedAt };
}

/**
 * A page of summaries merged newest first: the next page starts strictly older than `next`, or
 * than the last item kept when a surface ends the page early (a summary's position in its index
 * is its delivery id).
 */
function logPage(filter: DeliveryLogFilter, items: Delivery[], next: string | null): Page<Delivery> {
  return {
    items,
    nextCursor: next === null ? null : encodeDeliveryLogCursor(filter, next),
    [RESUME_AFTER]: (index) => encodeDeliveryLogCursor(filter, items[index]!.deliveryId),
  };
}

/** True when the endpoint exists in the workspace (its deliveries are then the workspace's). */
async function endpointInWorkspace(table: TableContext, workspace: string, endpointId: string): Promise<boolean> {
  const out = await table.doc.send(
    new GetCommand({
      TableName: table.tableName,
      Key: keys.endpoint(workspace, endpointId),
      ProjectionExpression: TABLE.partitionKey,
      // Strongly consistent: a deleted endpoint's deliveries are shown from no moment after its delete.
      ConsistentRead: true,
    }),
  );
  return out.Item !== undefined;
}

/**
 * One page of the workspace's delivery log, newest first: at most `limit`
 * summaries matching `filter`, reading at most {@link deliveryLogReadBudget}
 * items (index entries, and summaries a filter checks) plus the page's
 * own summaries. A page may be short, even empty,
 * with a `nextCursor` (a selective filter); a cursor of other filters, or one
 * that does not decode, gives an empty page.
 */
export async function listDeliveryLog(
  table: TableContext,
  workspace: string,
  filter: DeliveryLogFilter,
  limit: number,
  cursor?: string,
): Promise<Page<Delivery>> {
  const empty = { items: [], nextCursor: null };
  let after: string | null = null;
  if (cursor !== undefined) {
    after = decodeDeliveryLogCursor(filter, cursor);
    if (after === null) return empty;
  }
  if (filter.endpointId !== null && !(await endpointInWorkspace(table, workspace, filter.endpointId))) return empty;
  const sources = logSources(workspace, filter);
  const budget = deliveryLogReadBudget(limit);
  // A filter the entries cannot answer reads a summary per entry: half the budget each.
  const fromTable = needsSummaries(sources[0]!, filter);
  const page = await mergeNewestFirst((shard, from, n) => readSource(table, sources[shard]!, filter, from, n), {
    shards: sources.length,
    limit,
    budget: fromTable ? Math.floor(budget / 2) : budget,
    after,
  });
  const summaries = fromTable
    ? new Map(page.entries.map((e) => [e.position, e.value]))
    : await getDeliveryItems(
        table,
        page.entries.map((e) => e.position),
      );
  // The index is eventually consistent: a summary gone since, or no longer matching, is left out.
  const found = page.entries
    .map((e) => summaries.get(e.position))
    .filter((item): item is Record<string, unknown> => item !== undefined && item !== null && item.workspace === workspace)
    .map((item) => toDeliveryWire(fromItem(item)))
    .filter((d) => matchesDeliveryLogFilter(filter, d));
  // A deleted endpoint's deliveries are shown nowhere (docs/behaviour.md#deleting-an-endpoint); its purge job removes them.
  const live =
    filter.endpointId !== null
      ? new Set([filter.endpointId])
      : await liveEndpointIds(
          table,
          workspace,
          found.map((d) => d.endpointId),
        );
  const items = found.filter((d) => live.has(d.endpointId));
  return logPage(filter, items, page.next);
}

/**
 * Deliveries of an endpoint, newest first (its gsi2 shards, merged).
 * The caller has checked that the endpoint is the caller's workspace's.
 */
export async function listDeliveriesOfEndpoint(
  table: TableContext,
  endpointId: string,
  limit: number,
  cursor?: string,
): Promise<Page<Delivery>> {
  const filter = deliveryLogFilter({ endpointId });
  let after: string | null = null;
  if (cursor !== undefined) {
    after = decodeDeliveryLogCursor(filter, cursor);
    if (after === null) return { items: [], nextCursor: null };
  }
  const sources = endpointDeliveryPartitions(endpointId);
  const page = await mergeNewestFirst((shard, from, n) => readSource(table, sources[shard]!, filter, from, n), {
    shards: sources.length,
    limit,
    budget: deliveryLogReadBudget(limit),
    after,
  });
  const summaries = await getDeliveryItems(
    table,
    page.entries.map((e) => e.position),
  );
  const items = page.entries.flatMap((e) => {
    const item = summaries.get(e.position);
    return item && item.endpointId === endpointId ? [toDeliveryWire(fromItem(item))] : [];
  });
  return logPage(filter, items, page.next);
}

/**
 * A workspace's deliveries created before `beforeMs`, oldest first, at most `limit`, from every
 * shard of its log (the retention pass: docs/architecture.md#retention). A delivery id's time is
 * its creation time, so "before" is an id bound.
 */
export async function workspaceDeliveriesBefore(
  table: TableContext,
  workspace: string,
  beforeMs: number,
  limit: number,
): Promise<string[]> {
  const before = filterIdBounds(deliveryLogFilter({ until: new Date(Math.max(0, beforeMs - 1)).toISOString() })).high;
  const partitions = Array.from({ length: keys.deliveryLogShards }, (_, shard) => keys.deliveryLogPk(workspace, shard));
  const entries = await shardedQuery(table, TABLE.deliveryLog, partitions, { atMost: before }, limit);
  return entries.map((item) => str(item, TABLE.deliveryLog.sortKey));
}
