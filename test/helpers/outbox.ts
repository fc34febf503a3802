/** An outbox table beside a test table (docs/architecture.md#outbox), and a read of what it holds. */
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { ensureOutboxTable } from '../../bin/local/create-table';
import type { TableContext } from '../../lambdas/store/client';

/** An outbox item as a test reads it. */
export interface OutboxItem {
  readonly pk: string;
  readonly workspace: string;
  readonly type: string;
  /** The payload, parsed from its JSON text. */
  readonly payload: unknown;
  readonly createdAt: string;
}

/** `table` with an outbox table of its own (created here), a read of its items, and its drop. */
export async function withOutbox(
  table: TableContext,
): Promise<TableContext & { readonly outboxTableName: string; outboxItems(): Promise<OutboxItem[]>; dropOutbox(): Promise<void> }> {
  const outboxTableName = `${table.tableName}-outbox`;
  await ensureOutboxTable(table, outboxTableName);
  return {
    doc: table.doc,
    tableName: table.tableName,
    outboxTableName,
    async outboxItems() {
      const out = await table.doc.send(new ScanCommand({ TableName: outboxTableName, ConsistentRead: true }));
      return (out.Items ?? [])
        .map((item) => ({
          pk: String(item.pk),
          workspace: String(item.workspace),
          type: String(item.type),
          payload: JSON.parse(String(item.payload)) as unknown,
          createdAt: String(item.createdAt),
        }))
        .sort((a, b) => a.pk.localeCompare(b.pk));
    },
    async dropOutbox() {
      await table.doc.send(new DeleteTableCommand({ TableName: outboxTableName }));
    },
  };
}
