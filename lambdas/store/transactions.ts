/** Helpers around DynamoDB transactions and batch deletes. */
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { TableContext } from './client';

/** True when a transaction was cancelled because the item at `index` failed its condition. */
export function conditionFailedAt(error: unknown, index: number): boolean {
  return (
    error instanceof TransactionCanceledException &&
    error.CancellationReasons?.[index]?.Code === 'ConditionalCheckFailed'
  );
}

/** Deletes every item of a partition (e.g. a delivery and its attempts), 25 at a time. */
export async function deletePartition(table: TableContext, pk: string): Promise<number> {
  let deleted = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const out = await table.doc.send(
      new QueryCommand({
        TableName: table.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': pk },
        ProjectionExpression: 'pk, sk',
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    const items = out.Items ?? [];
    for (let i = 0; i < items.length; i += 25) {
      let requests: Record<string, unknown>[] = items.slice(i, i + 25).map((k) => ({ DeleteRequest: { Key: { pk: k.pk as string, sk: k.sk as string } } }));
      // Unprocessed items are retried, a bounded number of times.
      for (let tries = 0; requests.length > 0 && tries < 10; tries++) {
        const res = await table.doc.send(new BatchWriteCommand({ RequestItems: { [table.tableName]: requests } }));
        requests = res.UnprocessedItems?.[table.tableName] ?? [];
      }
      if (requests.length > 0) throw new Error(`DynamoDB left ${requests.length} deletes unprocessed after 10 tries`);
      deleted += items.slice(i, i + 25).length;
    }
    start = out.LastEvaluatedKey;
  } while (start);
  return deleted;
}
