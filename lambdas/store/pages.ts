/** Keyset pages over one partition (docs/behaviour.md#keyset-cursors). */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { RESUME_AFTER, type Page } from '../contract/pagination';
import { decodeCursor, encodeCursor } from '../domain/cursor';
import type { TableContext } from './client';
import { partitionQuery, queryPages, type Item } from './table-io';
import { TABLE } from './table-schema';

/** What a list reads. */
export interface PageSpec<T> {
  readonly pk: string;
  /** Sort-key prefix of the list's items; the item's sort key is prefix + id. */
  readonly skPrefix: string;
  /** true: forward on id; false: newest first. */
  readonly forward: boolean;
  readonly limit: number;
  readonly cursor?: string | undefined;
  /** Id shape of the list, to refuse cursors of other lists. */
  readonly idPattern: RegExp;
  /** Query a GSI instead of the table: its name, key attribute names, and the full start key of an id. */
  readonly index?: {
    readonly name: string;
    readonly partitionKey: string;
    readonly sortKey: string;
    readonly startKey: (id: string) => Record<string, string>;
  };
  /** Maps a stored item to its wire form and its (sortKey, id) position. */
  readonly map: (item: Item) => { value: T; sortKey: string; id: string };
}

/** Reads one page: rows strictly past the cursor in the list's order. */
export async function queryPage<T>(table: TableContext, spec: PageSpec<T>): Promise<Page<T>> {
  let start: Item | undefined;
  if (spec.cursor !== undefined) {
    const position = decodeCursor(spec.cursor, spec.idPattern);
    if (!position) return { items: [], nextCursor: null };
    start = spec.index
      ? spec.index.startKey(position.id)
      : { [TABLE.partitionKey]: spec.pk, [TABLE.sortKey]: `${spec.skPrefix}${position.id}` };
  }
  const items: Item[] = [];
  // One extra row tells whether a next page exists, so the last page says null.
  while (items.length <= spec.limit) {
    const out = await table.doc.send(
      new QueryCommand({
        TableName: table.tableName,
        ...partitionQuery(spec.pk, { ...(spec.index ? { index: spec.index } : {}), sk: { prefix: spec.skPrefix } }),
        ScanIndexForward: spec.forward,
        Limit: spec.limit + 1 - items.length,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    items.push(...(out.Items ?? []));
    if (!out.LastEvaluatedKey) break;
    start = out.LastEvaluatedKey;
  }
  const mapped = items.slice(0, spec.limit).map(spec.map);
  const after = (m: { sortKey: string; id: string }) => encodeCursor({ sortKey: m.sortKey, id: m.id });
  const last = mapped[mapped.length - 1];
  return {
    items: mapped.map((m) => m.value),
    nextCursor: items.length > spec.limit && last ? after(last) : null,
    [RESUME_AFTER]: (index) => after(mapped[index]!),
  };
}

/** Counts the items of a partition under a sort-key prefix. */
export async function countItems(table: TableContext, pk: string, skPrefix: string): Promise<number> {
  let count = 0;
  for await (const page of queryPages(table, {
    ...partitionQuery(pk, { sk: { prefix: skPrefix } }),
    Select: 'COUNT',
  })) {
    count += page.Count ?? 0;
  }
  return count;
}
