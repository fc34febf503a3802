/**
 * Newest-first keyset pages of one partition's list under a filter the key cannot serve
 * (docs/behaviour.md#filtered-lists): the notifications by `acknowledged`, the jobs by `status`.
 * DynamoDB applies the filter after reading, so a page reads at most a budget of items (as the
 * delivery log does) and may end with fewer than `limit` matches and a cursor at the position it
 * read to. The cursor carries the filter, so a cursor of other filters addresses no position.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { RESUME_AFTER, type Page } from '../contract/pagination';
import { decodeCursor, encodeCursor } from '../domain/cursor';
import type { TableContext } from './client';
import { partitionQuery, str, withExpressions, type Item } from './table-io';
import { TABLE } from './table-schema';

/** A filter expression over the list's items, and the text that names it in cursors. */
export interface ItemFilter {
  readonly expression: string;
  readonly names?: Record<string, string>;
  readonly values?: Record<string, unknown>;
  /** The filter's canonical form (e.g. `acknowledged=true`): what a cursor is tied to. */
  readonly fingerprint: string;
}

/** What a filtered list reads. */
export interface FilteredPageSpec<T> {
  readonly pk: string;
  /** Sort-key prefix of the list's items; the item's sort key is prefix + id. */
  readonly skPrefix: string;
  readonly limit: number;
  readonly cursor?: string | undefined;
  /** Id shape of the list, to refuse cursors of other lists. */
  readonly idPattern: RegExp;
  /** Absent: every item matches (the cursor is then tied to the empty filter). */
  readonly filter?: ItemFilter;
  /** Maps the page's matching items (newest first) to wire values; a null value is left out of the page. */
  readonly map: (items: Item[]) => Promise<(T | null)[]>;
}

/** Items a page reads at most: as the delivery log's merge, max(8 × limit, 128). */
export function filteredReadBudget(limit: number): number {
  return Math.max(8 * limit, 128);
}

/** Reads one page newest first: matches strictly older than the cursor's position, within the read budget. */
export async function queryFilteredPage<T>(table: TableContext, spec: FilteredPageSpec<T>): Promise<Page<T>> {
  const fingerprint = spec.filter?.fingerprint ?? '';
  let start: Item | undefined;
  if (spec.cursor !== undefined) {
    const position = decodeCursor(spec.cursor, spec.idPattern);
    if (!position || position.sortKey !== fingerprint) return { items: [], nextCursor: null };
    start = { [TABLE.partitionKey]: spec.pk, [TABLE.sortKey]: `${spec.skPrefix}${position.id}` };
  }
  const idOf = (item: Item) => str(item, TABLE.sortKey).slice(spec.skPrefix.length);
  const budget = filteredReadBudget(spec.limit);
  const matches: Item[] = [];
  let examined = 0;
  // The id the read reached when it stopped on its budget; null once the list is read to its end.
  let readTo: string | null = null;
  for (;;) {
    const query = partitionQuery(spec.pk, { sk: { prefix: spec.skPrefix } });
    const filter = spec.filter;
    const out = await table.doc.send(
      new QueryCommand({
        TableName: table.tableName,
        ...(filter
          ? { ...withExpressions(query, { names: filter.names ?? {}, values: filter.values ?? {} }), FilterExpression: filter.expression }
          : query),
        ScanIndexForward: false,
        // One match past the limit tells whether a next page exists; a sparse filter reads on in larger steps.
        Limit: Math.min(budget - examined, Math.max(spec.limit + 1 - matches.length, 32)),
        // Strongly consistent, so a list read right after an acknowledgement or a job's end filters on what it changed.
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    examined += out.ScannedCount ?? 0;
    matches.push(...(out.Items ?? []));
    if (!out.LastEvaluatedKey) break;
    if (matches.length > spec.limit) break;
    if (examined >= budget) {
      readTo = idOf(out.LastEvaluatedKey);
      break;
    }
    start = out.LastEvaluatedKey;
  }
  const kept = matches.slice(0, spec.limit);
  const ids = kept.map(idOf);
  const values = await spec.map(kept);
  const after = (id: string) => encodeCursor({ sortKey: fingerprint, id });
  const last = ids[ids.length - 1];
  const next = matches.length > spec.limit && last !== undefined ? last : readTo;
  const shown = values.flatMap((value, i) => (value === null ? [] : [{ value, id: ids[i]! }]));
  return {
    items: shown.map((s) => s.value),
    nextCursor: next === null ? null : after(next),
    [RESUME_AFTER]: (index) => after(shown[index]!.id),
  };
}
