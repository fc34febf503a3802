/** A fresh table on the run's DynamoDB Local, one per test file or test. */
import { randomUUID } from 'node:crypto';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { inject } from 'vitest';
import { createTableContext, type TableContext } from '../../lambdas/store/client';
import { ensureTable } from '../../bin/local/create-table';

/** Creates a uniquely named table; `drop` deletes it. */
export async function freshTable(): Promise<TableContext & { drop(): Promise<void> }> {
  const table = createTableContext({ tableName: `t-${randomUUID()}`, endpoint: inject('dynamoDbEndpoint') });
  await ensureTable(table);
  return {
    ...table,
    async drop() {
      await table.doc.send(new DeleteTableCommand({ TableName: table.tableName }));
      table.doc.destroy();
    },
  };
}
