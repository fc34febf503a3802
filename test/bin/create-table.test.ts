/**
 * bin/local/create-table.ts: a table kept from an earlier version (the local
 * stack's `.local/dynamodb`) gets the indexes of the schema it lacks, so an
 * upgraded `npm start` can list the delivery log; deliveries written before the
 * index existed are not in it (docs/architecture.md#delivery-log-index).
 * It runs on a DynamoDB Local of its own: the suite's shared one, busy with every other test file,
 * can take minutes to build an index.
 */
import { randomUUID } from 'node:crypto';
import { CreateTableCommand, DeleteTableCommand, DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { deliveryLogFilter } from '../../lambdas/domain/delivery-log';
import { newPendingDelivery } from '../../lambdas/domain/delivery-lifecycle';
import { createTableContext } from '../../lambdas/store/client';
import { putPendingDeliveries } from '../../lambdas/store/deliveries';
import { listDeliveryLog } from '../../lambdas/store/delivery-log';
import { INDEXES, keys, TABLE } from '../../lambdas/store/table-schema';
import { ensureTable } from '../../bin/local/create-table';
import { startDynamoDbLocal, type DynamoDbLocal } from '../../bin/local/dynamodb-local';

let dynamo: DynamoDbLocal | undefined;
let table: ReturnType<typeof createTableContext>;

beforeAll(async () => {
  dynamo = await startDynamoDbLocal();
  table = createTableContext({ tableName: `t-${randomUUID()}`, endpoint: dynamo.endpoint });
}, 180_000);

afterAll(async () => {
  try {
    await table?.doc.send(new DeleteTableCommand({ TableName: table.tableName }));
    table?.doc.destroy();
  } finally {
    await dynamo?.stop();
  }
});

it('adds the indexes an existing table lacks, and leaves older items out of them', async () => {
  const older = INDEXES.filter((g) => g.name !== TABLE.deliveryLog.name);
  await table.doc.send(
    new CreateTableCommand({
      TableName: table.tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [TABLE.partitionKey, TABLE.sortKey, ...older.flatMap((g) => [g.partitionKey, g.sortKey])].map(
        (AttributeName) => ({ AttributeName, AttributeType: 'S' }),
      ),
      KeySchema: [
        { AttributeName: TABLE.partitionKey, KeyType: 'HASH' },
        { AttributeName: TABLE.sortKey, KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: older.map((g) => ({
        IndexName: g.name,
        KeySchema: [
          { AttributeName: g.partitionKey, KeyType: 'HASH' },
          { AttributeName: g.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: g.projection },
      })),
    }),
  );
  // A summary as an earlier version wrote it: no log keys.
  const old = newPendingDelivery(
    { workspace: 'w', endpointId: 'whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC', eventType: 'webhook.test_event', payload: {} },
    new Date(Date.now() - 1_000),
  );
  await table.doc.send(
    new PutCommand({ TableName: table.tableName, Item: { ...keys.delivery(old.deliveryId), type: 'delivery', ...old } }),
  );

  expect(await ensureTable(table)).toBe(false);
  const described = await table.doc.send(new DescribeTableCommand({ TableName: table.tableName }));
  expect(described.Table?.GlobalSecondaryIndexes?.map((g) => g.IndexName).sort()).toEqual(INDEXES.map((g) => g.name).sort());
  expect(described.Table?.GlobalSecondaryIndexes?.find((g) => g.IndexName === TABLE.deliveryLog.name)?.Projection).toEqual({
    ProjectionType: 'INCLUDE',
    NonKeyAttributes: [...TABLE.deliveryLog.nonKeyAttributes],
  });

  const fresh = newPendingDelivery(
    { workspace: 'w', endpointId: 'whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC', eventType: 'webhook.test_event', payload: {} },
    new Date(),
  );
  await putPendingDeliveries(table, [fresh]);
  // The log shows a delivery only while its endpoint exists (docs/behaviour.md#deleting-an-endpoint).
  await table.doc.send(new PutCommand({ TableName: table.tableName, Item: { ...keys.endpoint('w', fresh.endpointId), type: 'endpoint' } }));
  const page = await listDeliveryLog(table, 'w', deliveryLogFilter({}), 50);
  expect(page.items.map((d) => d.deliveryId)).toEqual([fresh.deliveryId]);
  expect(await ensureTable(table)).toBe(false);
  // DynamoDB Local builds an index slowly while the rest of the suite loads it (seconds alone, tens of seconds in a
  // full run, once over 60 s): the local stack waits up to 180 s.
}, 240_000);
