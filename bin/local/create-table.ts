/**
 * Creates the table, and the outbox table with its stream, with the key schemas of the deployed
 * ones (local stack and tests; the deployed tables are CDK's).
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  ResourceInUseException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import type { TableContext } from '#lambdas/composition/tools';
import { OUTBOX } from '#lambdas/contract/deployment';
import { INDEXES, TABLE } from '#lambdas/store/table-schema';

type Index = (typeof INDEXES)[number];

/**
 * Creates the table if absent; returns true when it was created. An existing
 * table (the local stack keeps one in `.local/dynamodb`) gets the schema's
 * indexes it lacks, one at a time as DynamoDB allows; an added index holds the
 * items that carry its keys.
 */
export async function ensureTable(table: TableContext): Promise<boolean> {
  try {
    const described = await table.doc.send(new DescribeTableCommand({ TableName: table.tableName }));
    const present = new Set((described.Table?.GlobalSecondaryIndexes ?? []).map((g) => g.IndexName));
    for (const g of INDEXES.filter((i) => !present.has(i.name))) await addIndex(table, g);
    return false;
  } catch (e) {
    if ((e as { name?: string }).name !== 'ResourceNotFoundException') throw e;
  }
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
    new UpdateTimeToLiveCommand({
      TableName: table.tableName,
      TimeToLiveSpecification: { AttributeName: TABLE.ttlAttribute, Enabled: true },
    }),
  );
  return true;
}

/** How long adding an index may take before the local stack gives up. */
const INDEX_WAIT_SECONDS = 180;

/** Adds one index to an existing table and waits (bounded) until it is active. */
async function addIndex(table: TableContext, g: Index): Promise<void> {
  await table.doc.send(
    new UpdateTableCommand({
      TableName: table.tableName,
      AttributeDefinitions: [g.partitionKey, g.sortKey].map((AttributeName) => ({ AttributeName, AttributeType: 'S' as const })),
      GlobalSecondaryIndexUpdates: [{ Create: gsi(g) }],
    }),
  );
  // DynamoDB Local builds an index in seconds alone, but in minutes while other work loads it.
  for (let tries = 0; tries < INDEX_WAIT_SECONDS * 10; tries++) {
    const out = await table.doc.send(new DescribeTableCommand({ TableName: table.tableName }));
    if (out.Table?.GlobalSecondaryIndexes?.find((i) => i.IndexName === g.name)?.IndexStatus === 'ACTIVE') return;
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error(`index ${g.name} of ${table.tableName} did not become active within ${INDEX_WAIT_SECONDS} s`);
}

/** A schema index as CreateTable and UpdateTable take it. */
function gsi(g: Index) {
  return {
    IndexName: g.name,
    KeySchema: [
      { AttributeName: g.partitionKey, KeyType: 'HASH' as const },
      { AttributeName: g.sortKey, KeyType: 'RANGE' as const },
    ],
    Projection: { ProjectionType: g.projection, ...('nonKeyAttributes' in g ? { NonKeyAttributes: [...g.nonKeyAttributes] } : {}) },
  };
}

/**
 * Creates the outbox table `tableName` (docs/architecture.md#outbox) if absent, with its stream of
 * new images, as the deployed one has; an existing table without a stream gets one. Answers the
 * stream's ARN, which the local relay polls (./outbox-stream.ts).
 */
export async function ensureOutboxTable(table: TableContext, tableName: string): Promise<string> {
  const stream = { StreamEnabled: true, StreamViewType: OUTBOX.table.streamViewType };
  try {
    await table.doc.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: OUTBOX.table.partitionKey, AttributeType: 'S' }],
        KeySchema: [{ AttributeName: OUTBOX.table.partitionKey, KeyType: 'HASH' }],
        StreamSpecification: stream,
      }),
    );
    await table.doc.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: OUTBOX.table.ttlAttribute, Enabled: true },
      }),
    );
  } catch (e) {
    if (!(e instanceof ResourceInUseException)) throw e;
  }
  const described = await table.doc.send(new DescribeTableCommand({ TableName: tableName }));
  if (described.Table?.StreamSpecification?.StreamEnabled && described.Table.LatestStreamArn) return described.Table.LatestStreamArn;
  const updated = await table.doc.send(new UpdateTableCommand({ TableName: tableName, StreamSpecification: stream }));
  const arn = updated.TableDescription?.LatestStreamArn;
  if (!arn) throw new Error(`the outbox table ${tableName} has no stream`);
  return arn;
}
