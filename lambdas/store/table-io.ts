/**
 * Generic I/O on the table, shared by the store modules, so none of them writes a key expression
 * by hand: the key condition of a partition query, a query over every shard of a sharded index,
 * the "if absent" / "if exists" conditions, every page of a query, batch writes with bounded
 * retries, deleting a whole partition, reading which item of a cancelled transaction failed its
 * condition, and checked reads of an item's attributes for the typed item mappers.
 */
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, paginateQuery, QueryCommand, type QueryCommandInput, type QueryCommandOutput } from '@aws-sdk/lib-dynamodb';
import type { TableContext } from './client';
import { TABLE } from './table-schema';

/** A stored item as the document client returns it. */
export type Item = Record<string, unknown>;

/** Condition of a write that must not replace an item: there is none at its key. */
export const IF_ABSENT = `attribute_not_exists(${TABLE.partitionKey})`;

/** Condition of a write that must not create an item: there is one at its key. */
export const IF_EXISTS = `attribute_exists(${TABLE.partitionKey})`;

/** {@link IF_ABSENT}, or else `condition` on the item there. */
export const ifAbsentOr = (condition: string): string => `${IF_ABSENT} OR ${condition}`;

/** {@link IF_EXISTS}, and `condition` on it. */
export const ifExistsAnd = (condition: string): string => `${IF_EXISTS} AND ${condition}`;

/** The key attribute names of the table or of an index. */
export interface KeyNames {
  readonly name?: string;
  readonly partitionKey: string;
  readonly sortKey: string;
}

/** The sort-key part of a partition query. */
export type SortKeyCondition =
  | { readonly prefix: string }
  | { readonly between: readonly [low: string, high: string] }
  | { readonly below: string }
  | { readonly atMost: string }
  | { readonly after: string };

/** The key condition of a query of one partition, with the names and values it uses (placeholders `#pk`, `#sk`, `:pk`, `:sk…`). */
export interface PartitionQuery {
  readonly IndexName?: string;
  readonly KeyConditionExpression: string;
  readonly ExpressionAttributeNames: Record<string, string>;
  readonly ExpressionAttributeValues: Record<string, unknown>;
}

/**
 * A query of partition `pk` of the table (or of `index`), optionally narrowed on the sort key.
 * Spread it into a query's input; merge a filter's or projection's names and values with
 * {@link withExpressions}.
 */
export function partitionQuery(pk: string, options: { index?: KeyNames; sk?: SortKeyCondition } = {}): PartitionQuery {
  const keys = options.index ?? TABLE;
  const { sk } = options;
  const values: Record<string, unknown> = { ':pk': pk };
  let condition = '';
  if (sk && 'prefix' in sk) {
    condition = ' AND begins_with(#sk, :sk)';
    values[':sk'] = sk.prefix;
  } else if (sk && 'between' in sk) {
    condition = ' AND #sk BETWEEN :skLow AND :skHigh';
    values[':skLow'] = sk.between[0];
    values[':skHigh'] = sk.between[1];
  } else if (sk) {
    const [op, value] = 'below' in sk ? ['<', sk.below] : 'atMost' in sk ? ['<=', sk.atMost] : ['>', sk.after];
    condition = ` AND #sk ${op} :sk`;
    values[':sk'] = value;
  }
  return {
    ...(options.index?.name ? { IndexName: options.index.name } : {}),
    KeyConditionExpression: `#pk = :pk${condition}`,
    ExpressionAttributeNames: { '#pk': keys.partitionKey, ...(sk ? { '#sk': keys.sortKey } : {}) },
    ExpressionAttributeValues: values,
  };
}

/** A partition query with the names and values of a filter or projection added. */
export function withExpressions(
  query: PartitionQuery,
  extra: { names?: Record<string, string>; values?: Record<string, unknown> },
): PartitionQuery {
  return {
    ...query,
    ExpressionAttributeNames: { ...query.ExpressionAttributeNames, ...extra.names },
    ExpressionAttributeValues: { ...query.ExpressionAttributeValues, ...extra.values },
  };
}

/**
 * The first `limit` entries of a sharded index in its sort-key order, ascending: one query of at
 * most `limit` entries per shard partition (all at once), merged.
 */
export async function shardedQuery(
  table: TableContext,
  index: KeyNames,
  partitions: readonly string[],
  sk: SortKeyCondition,
  limit: number,
): Promise<Item[]> {
  const shards = await Promise.all(
    partitions.map(async (pk) => {
      const out = await table.doc.send(
        new QueryCommand({ TableName: table.tableName, ...partitionQuery(pk, { index, sk }), ScanIndexForward: true, Limit: limit }),
      );
      return out.Items ?? [];
    }),
  );
  const position = (item: Item) => String(item[index.sortKey]);
  return shards
    .flat()
    .sort((a, b) => (position(a) < position(b) ? -1 : position(a) > position(b) ? 1 : 0))
    .slice(0, limit);
}

/** An attribute of an item that is not what its mapper expects: the item is not of today's layout. */
export class ItemShapeError extends Error {
  override readonly name = 'ItemShapeError';
}

function wrong(item: Item, name: string, expected: string): never {
  throw new ItemShapeError(`item ${String(item[TABLE.partitionKey])} / ${String(item[TABLE.sortKey])}: ${name} is not ${expected}`);
}

/** A string attribute. */
export function str(item: Item, name: string): string {
  const value = item[name];
  return typeof value === 'string' ? value : wrong(item, name, 'a string');
}

/** A string attribute that may be absent or null (null then). */
export function optStr(item: Item, name: string): string | null {
  const value = item[name];
  return value === undefined || value === null ? null : typeof value === 'string' ? value : wrong(item, name, 'a string or null');
}

/** A number attribute; absent or null reads as `absent` when given. */
export function num(item: Item, name: string, absent?: number): number {
  const value = item[name];
  if (typeof value === 'number') return value;
  return (value === undefined || value === null) && absent !== undefined ? absent : wrong(item, name, 'a number');
}

/** A number attribute that may be absent or null (null then). */
export function optNum(item: Item, name: string): number | null {
  const value = item[name];
  return value === undefined || value === null ? null : typeof value === 'number' ? value : wrong(item, name, 'a number or null');
}

/** A boolean attribute. */
export function bool(item: Item, name: string): boolean {
  const value = item[name];
  return typeof value === 'boolean' ? value : wrong(item, name, 'a boolean');
}

/** A list of strings (absent: empty). */
export function strList(item: Item, name: string): string[] {
  const value = item[name];
  if (value === undefined) return [];
  return Array.isArray(value) && value.every((v): v is string => typeof v === 'string') ? value : wrong(item, name, 'a list of strings');
}

/** A map attribute (absent or null: null). */
export function optMap(item: Item, name: string): Item | null {
  const value = item[name];
  if (value === undefined || value === null) return null;
  return typeof value === 'object' && !Array.isArray(value) ? (value as Item) : wrong(item, name, 'a map');
}

/** A list of maps (absent: empty). */
export function mapList(item: Item, name: string): Item[] {
  const value = item[name];
  if (value === undefined) return [];
  return Array.isArray(value) && value.every((v): v is Item => typeof v === 'object' && v !== null && !Array.isArray(v))
    ? value
    : wrong(item, name, 'a list of maps');
}

/** A string attribute whose value is one of `allowed`. */
export function oneOf<T extends string>(item: Item, name: string, allowed: readonly T[]): T {
  const value = str(item, name);
  return (allowed as readonly string[]).includes(value) ? (value as T) : wrong(item, name, `one of ${allowed.join(', ')}`);
}

/** A list of strings each one of `allowed` (absent: empty). */
export function oneOfList<T extends string>(item: Item, name: string, allowed: readonly T[]): T[] {
  const values = strList(item, name);
  return values.every((v): v is T => (allowed as readonly string[]).includes(v))
    ? values
    : wrong(item, name, `a list of ${allowed.join(', ')}`);
}

/** True when a transaction was cancelled because the item at `index` failed its condition. */
export function conditionFailedAt(error: unknown, index: number): boolean {
  return error instanceof TransactionCanceledException && error.CancellationReasons?.[index]?.Code === 'ConditionalCheckFailed';
}

/** True when a transaction was cancelled because another transaction was changing the item at `index`. */
export function conflictAt(error: unknown, index: number): boolean {
  return error instanceof TransactionCanceledException && error.CancellationReasons?.[index]?.Code === 'TransactionConflict';
}

/** True when a transaction was cancelled because another transaction was changing any of its items: trying again may succeed. */
export function conflicted(error: unknown): boolean {
  return error instanceof TransactionCanceledException && (error.CancellationReasons ?? []).some((r) => r.Code === 'TransactionConflict');
}

/** Every page of a query on the table (the SDK's paginator follows LastEvaluatedKey). */
export function queryPages(table: TableContext, input: Omit<QueryCommandInput, 'TableName'>): AsyncIterable<QueryCommandOutput> {
  return paginateQuery({ client: table.doc }, { TableName: table.tableName, ...input });
}

/** Writes batch requests 25 at a time; unprocessed ones are retried a bounded number of times, then it throws. */
export async function batchWriteAll(table: TableContext, requests: readonly Record<string, unknown>[]): Promise<void> {
  for (let i = 0; i < requests.length; i += 25) {
    let pending: Record<string, unknown>[] = requests.slice(i, i + 25);
    for (let tries = 0; pending.length > 0 && tries < 10; tries++) {
      const out = await table.doc.send(new BatchWriteCommand({ RequestItems: { [table.tableName]: pending } }));
      pending = out.UnprocessedItems?.[table.tableName] ?? [];
    }
    if (pending.length > 0) throw new Error(`DynamoDB left ${pending.length} writes unprocessed after 10 tries`);
  }
}

/** Deletes every item of a partition (e.g. a delivery and its attempts). */
export async function deletePartition(table: TableContext, pk: string): Promise<number> {
  let deleted = 0;
  for await (const page of queryPages(table, { ...partitionQuery(pk), ProjectionExpression: `${TABLE.partitionKey}, ${TABLE.sortKey}` })) {
    const items = page.Items ?? [];
    await batchWriteAll(
      table,
      items.map((k) => ({
        DeleteRequest: { Key: { [TABLE.partitionKey]: str(k, TABLE.partitionKey), [TABLE.sortKey]: str(k, TABLE.sortKey) } },
      })),
    );
    deleted += items.length;
  }
  return deleted;
}
