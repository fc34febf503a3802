/** Creates the table with the key schema of the deployed one (local stack and tests; the deployed table is CDK's). */
import { CreateTableCommand, DescribeTableCommand, ResourceInUseException, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import type { TableContext } from '../../lambdas/store/client';
import { INDEXES, TABLE } from '../../lambdas/store/table-schema';

/** Creates the table if absent; returns true when it was created. */
export async function ensureTable(table: TableContext): Promise<boolean> {
  try {
    await table.doc.send(new DescribeTableCommand({ TableName: table.tableName }));
    return false;
  } catch (e) {
    if ((e as { name?: string }).name !== 'ResourceNotFoundException') throw e;
  }
  const gsi = (g: (typeof INDEXES)[number]) => ({
    IndexName: g.name,
    KeySchema: [
      { AttributeName: g.partitionKey, KeyType: 'HASH' as const },
      { AttributeName: g.sortKey, KeyType: 'RANGE' as const },
    ],
    Projection: { ProjectionType: g.projection },
  });
  try {
    await table.doc.send(
      new CreateTableCommand({
        TableName: table.tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [TABLE.partitionKey, TABLE.sortKey, ...INDEXES.flatMap((g) => [g.partitionKey, g.sortKey])].map(
          (AttributeName) => ({ AttributeName, AttributeType: 'S' as const }),
        ),
        KeySchema: [
          { AttributeName: TABLE.partitionKey, KeyType: 'HASH' },
          { AttributeName: TABLE.sortKey, KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: INDEXES.map(gsi),
      }),
    );
  } catch (e) {
    if (e instanceof ResourceInUseException) return false;
    throw e;
  }
  await table.doc.send(
    new UpdateTimeToLiveCommand({ TableName: table.tableName, TimeToLiveSpecification: { AttributeName: TABLE.ttlAttribute, Enabled: true } }),
  );
  return true;
}
