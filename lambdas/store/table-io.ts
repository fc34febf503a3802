/**
 * Generic I/O on the table, shared by the store modules: every page of a query,
 * batch writes with bounded retries, deleting a whole partition, and reading
 * which item of a cancelled transaction failed its condition.
 */
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, paginateQuery, type QueryCommandInput, type QueryCommandOutput } from '@aws-sdk/lib-dynamodb';
import type { TableContext } from './client';

/** True when a transaction was cancelled because the item at `index` failed its condition. */
export function conditionFailedAt(error: unknown, index: number): boolean {
  return error instanceof TransactionCanceledException && error.CancellationReasons?.[index]?.Code === 'ConditionalCheckFailed';
}

/** True when a transaction was cancelled because another transaction was changing the item at `index`. */
export function conflictAt(error: unknown, index: number): boolean {
  return error instanceof TransactionCanceledException && error.CancellationReasons?.[index]?.Code === 'TransactionConflict';
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
  for await (const page of queryPages(table, {
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': pk },
    ProjectionExpression: 'pk, sk',
  })) {
    const items = page.Items ?? [];
    await batchWriteAll(
      table,
      items.map((k) => ({ DeleteRequest: { Key: { pk: k.pk as string, sk: k.sk as string } } })),
    );
    deleted += items.length;
  }
  return deleted;
}
