/**
 * The workspace delivery log (docs/architecture.md#delivery-log-index): pages
 * of a workspace's delivery summaries, newest first, filtered, with bounded
 * reads. Without `endpointId` it merges the workspace's log shards (index
 * entries carry the event type, so that filter runs in the index; the status
 * changes, so it is not in the index and a status filter reads the summaries
 * of the entries it looks at) and reads the page's summaries from the table;
 * with `endpointId` it reads that endpoint's gsi1 partition, which holds whole
 * summaries.
 */
import { BatchGetCommand, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { deliveryLogReadBudget } from '../contract/delivery-log';
import type { Page } from '../contract/pagination';
import type { Delivery } from '../contract/schemas';
import { decodeDeliveryLogCursor, deliveryIdRange, encodeDeliveryLogCursor, matchesDeliveryLogFilter, type DeliveryLogFilter } from '../domain/delivery-log';
import { mergeNewestFirst, type ShardRead } from '../domain/newest-first-merge';
import type { TableContext } from './client';
import { fromItem, toDeliveryWire } from './deliveries';
import { keys, TABLE } from './table-schema';

/** One index partition the page reads: the log shards, or an endpoint's gsi1 partition. */
interface LogSource {
  readonly index: { readonly name: string; readonly partitionKey: string; readonly sortKey: string };
  readonly pk: string;
}

/**
 * The filter as a FilterExpression on what the index entries hold: the event type; on gsi1 (whole
 * items) the status and the workspace too.
 */
function filterExpression(filter: DeliveryLogFilter, whole: { workspace: string } | null) {
  const terms: string[] = [];
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  if (filter.statuses && whole) {
    names['#status'] = 'status';
    terms.push(`#status IN (${filter.statuses.map((s, i) => ((values[`:st${i}`] = s), `:st${i}`)).join(', ')})`);
  }
  if (filter.eventType) {
    names['#et'] = 'eventType';
    if ('exact' in filter.eventType) {
      values[':et'] = filter.eventType.exact;
      terms.push('#et = :et');
    } else {
      values[':et'] = filter.eventType.prefix;
      terms.push('begins_with(#et, :et)');
    }
  }
  if (whole) {
    names['#ws'] = 'workspace';
    values[':ws'] = whole.workspace;
    terms.push('#ws = :ws');
  }
  return terms.length === 0 ? {} : { FilterExpression: terms.join(' AND '), ExpressionAttributeNames: names, ExpressionAttributeValues: values };
}

/**
 * Reads one chunk of a source, newest first, strictly older than `after`, inside the filter's id
 * range. `whole`: the source holds whole summaries of this workspace (gsi1). Otherwise (the log
 * index, which holds no status) a status filter reads the chunk's summaries that pass the index
 * filter and keeps those whose status matches: they are the matches, whole, and count as read.
 */
async function readSource(
  table: TableContext,
  source: LogSource,
  filter: DeliveryLogFilter,
  whole: { workspace: string } | null,
  after: string | null,
  limit: number,
): Promise<ShardRead<Record<string, unknown>>> {
  const range = deliveryIdRange(filter);
  if (after !== null && after <= range.low) return { matches: [], evaluated: 0, stoppedAt: null };
  const { FilterExpression, ExpressionAttributeNames = {}, ExpressionAttributeValues = {} } = filterExpression(filter, whole);
  const out = await table.doc.send(
    new QueryCommand({
      TableName: table.tableName,
      IndexName: source.index.name,
      KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :low AND :high',
      ...(FilterExpression ? { FilterExpression } : {}),
      ExpressionAttributeNames: { ...ExpressionAttributeNames, '#pk': source.index.partitionKey, '#sk': source.index.sortKey },
      ExpressionAttributeValues: { ...ExpressionAttributeValues, ':pk': source.pk, ':low': range.low, ':high': range.high },
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
  const entries = (out.Items ?? []).map((item) => ({ position: position(item), value: item }));
  if (whole || !filter.statuses) return { matches: entries, evaluated: out.ScannedCount ?? 0, stoppedAt };
  const summaries = await getSummaries(
    table,
    entries.map((e) => e.position),
  );
  const matches = entries.flatMap((e) => {
    const item = summaries.get(e.position);
    return item && (filter.statuses as readonly unknown[]).includes(item.status) ? [{ position: e.position, value: item }] : [];
  });
  return { matches, evaluated: out.ScannedCount ?? 0, stoppedAt };
}

/** Reads the summaries of `ids` from the table (at most one page's worth), by id. */
async function getSummaries(table: TableContext, ids: readonly string[]): Promise<Map<string, Record<string, unknown>>> {
  const found = new Map<string, Record<string, unknown>>();
  for (let i = 0; i < ids.length; i += 100) {
    let pending: Record<string, unknown>[] = ids.slice(i, i + 100).map((id) => keys.delivery(id));
    for (let tries = 0; pending.length > 0 && tries < 10; tries++) {
      const out = await table.doc.send(new BatchGetCommand({ RequestItems: { [table.tableName]: { Keys: pending } } }));
      for (const item of out.Responses?.[table.tableName] ?? []) found.set(String(item.deliveryId), item);
      pending = out.UnprocessedKeys?.[table.tableName]?.Keys ?? [];
    }
    if (pending.length > 0) throw new Error(`DynamoDB left ${pending.length} reads unprocessed after 10 tries`);
  }
  return found;
}

/** True when the endpoint exists in the workspace (its gsi1 partition is then the workspace's). */
async function endpointInWorkspace(table: TableContext, workspace: string, endpointId: string): Promise<boolean> {
  const out = await table.doc.send(new GetCommand({ TableName: table.tableName, Key: keys.endpoint(workspace, endpointId), ProjectionExpression: 'pk' }));
  return out.Item !== undefined;
}

/**
 * One page of the workspace's delivery log, newest first: at most `limit`
 * summaries matching `filter`, reading at most {@link deliveryLogReadBudget}
 * items (index entries, and summaries a status filter checks) plus the page's
 * own summaries. A page may be short, even empty,
 * with a `nextCursor` (a selective filter); a cursor of other filters, or one
 * that does not decode, gives an empty page.
 */
export async function listDeliveryLog(table: TableContext, workspace: string, filter: DeliveryLogFilter, limit: number, cursor?: string): Promise<Page<Delivery>> {
  const empty = { items: [], nextCursor: null };
  let after: string | null = null;
  if (cursor !== undefined) {
    after = decodeDeliveryLogCursor(filter, cursor);
    if (after === null) return empty;
  }
  const budget = deliveryLogReadBudget(limit);

  if (filter.endpointId !== null) {
    if (!(await endpointInWorkspace(table, workspace, filter.endpointId))) return empty;
    const source = { index: TABLE.gsi1, pk: keys.deliveriesOfEndpoint(filter.endpointId) };
    // gsi1 holds whole summaries (ALL), so the page is read from the index alone; the workspace check is kept in the filter too.
    const page = await mergeNewestFirst((_shard, from, n) => readSource(table, source, filter, { workspace }, from, n), { shards: 1, limit, budget, after });
    return {
      items: page.entries.map((e) => toDeliveryWire(fromItem(e.value))),
      nextCursor: page.next === null ? null : encodeDeliveryLogCursor(filter, page.next),
    };
  }

  const shards = keys.deliveryLogShards;
  // A status filter reads a summary per index entry that passes the index filter: half the budget each.
  const statusFromTable = filter.statuses !== null;
  const page = await mergeNewestFirst(
    (shard, from, n) => readSource(table, { index: TABLE.deliveryLog, pk: keys.deliveryLogPk(workspace, shard) }, filter, null, from, n),
    { shards, limit, budget: statusFromTable ? Math.floor(budget / 2) : budget, after },
  );
  const summaries = statusFromTable
    ? new Map(page.entries.map((e) => [e.position, e.value]))
    : await getSummaries(
        table,
        page.entries.map((e) => e.position),
      );
  // The index is eventually consistent: a summary gone since, or no longer matching, is left out.
  const items = page.entries
    .map((e) => summaries.get(e.position))
    .filter((item): item is Record<string, unknown> => item !== undefined && item.workspace === workspace)
    .map((item) => toDeliveryWire(fromItem(item)))
    .filter((d) => matchesDeliveryLogFilter(filter, d));
  return { items, nextCursor: page.next === null ? null : encodeDeliveryLogCursor(filter, page.next) };
}
