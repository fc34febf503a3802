/**
 * How many endpoints and API tokens a workspace has (docs/behaviour.md#rate-limits): one counter
 * item per workspace, changed in the same transaction as the create, delete or revoke it counts,
 * under a condition, so concurrent creates can never pass the limit and a refused create writes
 * nothing.
 *
 * The counter item is made on first use: creating a workspace writes none, and while a count is
 * absent the first counted write of its kind counts the items once, strongly consistent, and sets
 * the count on the condition that it is still absent, so two first writes cannot both set it (the
 * loser retries on the stored count). A count taken from the items rather than assumed 0 cannot
 * let a workspace pass its limit, nor drive the count below zero as it deletes.
 */
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { TableContext } from './client';
import { writeAudited, type AuditInput, type TransactItem } from './audit';
import { conditionFailedAt, partitionQuery } from './table-io';
import { keys, SK_PREFIX } from './table-schema';

/** What the counter counts. */
export type CountedKind = 'endpoints' | 'apiTokens';

/** The counted items: their sort-key prefix in the workspace partition, and the counter's attribute. */
const COUNTED: Readonly<Record<CountedKind, { readonly skPrefix: string; readonly attribute: string }>> = {
  endpoints: { skPrefix: SK_PREFIX.endpoint, attribute: 'endpoints' },
  apiTokens: { skPrefix: SK_PREFIX.token, attribute: 'apiTokens' },
};

/** The key of a workspace's counter item. */
export const countsKey = keys.workspaceCounts;

/** Concurrent counted writes retry on the stored count at most this often (each retry means another write won). */
const MAX_TRIES = 8;

/** The count of `kind` as stored; undefined when it was never set. */
async function storedCount(table: TableContext, slug: string, kind: CountedKind): Promise<number | undefined> {
  const out = await table.doc.send(new GetCommand({ TableName: table.tableName, Key: countsKey(slug), ConsistentRead: true }));
  const value: unknown = out.Item?.[COUNTED[kind].attribute];
  return typeof value === 'number' ? value : undefined;
}

/** The items of `kind` in the workspace, counted strongly consistent (first use only). */
async function countedItems(table: TableContext, slug: string, kind: CountedKind): Promise<number> {
  let count = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const out = await table.doc.send(
      new QueryCommand({
        TableName: table.tableName,
        ...partitionQuery(keys.workspacePk(slug), { sk: { prefix: COUNTED[kind].skPrefix } }),
        Select: 'COUNT',
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    count += out.Count ?? 0;
    start = out.LastEvaluatedKey;
  } while (start);
  return count;
}

/** The workspace's current count of `kind`: the stored one, else counted. */
export async function currentCount(table: TableContext, slug: string, kind: CountedKind): Promise<number> {
  return (await storedCount(table, slug, kind)) ?? countedItems(table, slug, kind);
}

/** The counter's change in a transaction, on a condition that holds only if nothing changed it since `seen` was read. */
function counterUpdate(
  table: TableContext,
  slug: string,
  kind: CountedKind,
  seen: Seen,
  delta: 1 | -1,
  limit: number | undefined,
): TransactItem {
  const names = { '#count': COUNTED[kind].attribute, '#type': 'type' };
  const base = { TableName: table.tableName, Key: countsKey(slug) };
  if (seen.stored !== null && !(delta < 0 && seen.stored === 0)) {
    // Relative, so concurrent creates do not conflict unless the limit is near.
    const condition = delta > 0 ? (limit === undefined ? 'attribute_exists(#count)' : '#count < :limit') : '#count > :zero';
    return {
      Update: {
        ...base,
        UpdateExpression: 'SET #count = #count + :delta, #type = :type',
        ConditionExpression: condition,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: {
          ':delta': delta,
          ':type': COUNTS_TYPE,
          ...(delta > 0 ? (limit === undefined ? {} : { ':limit': limit }) : { ':zero': 0 }),
        },
      },
    };
  }
  // First use (counted), or a stored 0 with an item still to delete (written by an uncounted writer): set it from a count.
  return {
    Update: {
      ...base,
      UpdateExpression: 'SET #count = :next, #type = :type',
      ConditionExpression: seen.stored !== null ? '#count = :seen' : 'attribute_not_exists(#count)',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: {
        ':next': Math.max(0, seen.count + delta),
        ':type': COUNTS_TYPE,
        ...(seen.stored !== null ? { ':seen': seen.stored } : {}),
      },
    },
  };
}

/** The counter item's `type`. */
const COUNTS_TYPE = 'workspace-counts';

/** A count as read before a write: the stored one, or (`stored` null) the items counted. */
interface Seen {
  readonly count: number;
  /** The stored value the write is conditional on; null when none is stored. */
  readonly stored: number | null;
}

/** The cancellation code of the item at `index` of a cancelled transaction (`None` when it was fine). */
function cancellationAt(error: unknown, index: number): string | undefined {
  return error instanceof TransactionCanceledException ? error.CancellationReasons?.[index]?.Code : undefined;
}

/** What a counted write did. */
export type CountedWrite = 'written' | 'limit_reached';

/**
 * Writes `items` (and the audit event, when given) with the change of the workspace's count of
 * `kind` by `delta`, in one transaction. With `limit`, a create (`delta` 1) that would pass it
 * writes nothing and answers `limit_reached`. The counter is the item after `items` (before the
 * audit), so a caller still reads its own items' failed conditions by their index: such a failure
 * is thrown as the transaction's error, unchanged.
 */
export async function writeCounted(
  table: TableContext,
  slug: string,
  change: { readonly kind: CountedKind; readonly delta: 1 | -1; readonly limit?: number },
  items: readonly TransactItem[],
  audit: AuditInput | undefined,
  now: Date,
): Promise<CountedWrite> {
  const { kind, delta, limit } = change;
  for (let tries = 1; ; tries++) {
    const stored = await storedCount(table, slug, kind);
    const count = stored !== undefined && !(delta < 0 && stored === 0) ? stored : await countedItems(table, slug, kind);
    if (delta > 0 && limit !== undefined && count + delta > limit) return 'limit_reached';
    try {
      await writeAudited(
        table,
        [...items, counterUpdate(table, slug, kind, { count, stored: stored ?? null }, delta, limit)],
        slug,
        audit,
        now,
      );
      return 'written';
    } catch (e) {
      // The caller's own items failed: theirs to read. Otherwise another counted write got to the
      // counter first (its condition failed, or the two transactions conflicted): read it again.
      if (items.some((_, i) => conditionFailedAt(e, i))) throw e;
      const counter = cancellationAt(e, items.length);
      const retry =
        counter === 'ConditionalCheckFailed' ||
        counter === 'TransactionConflict' ||
        items.some((_, i) => cancellationAt(e, i) === 'TransactionConflict');
      if (!retry || tries >= MAX_TRIES) throw e;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * tries));
    }
  }
}
