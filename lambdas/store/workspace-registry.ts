/**
 * The workspace registry (docs/architecture.md#retention): every workspace item carries the gsi1
 * keys below, so the daily retention pass can walk the workspaces and read each one's delivery log
 * for what is older than the retention period. It is written with the workspace, never on the
 * delivery path.
 */
import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { TableContext } from './client';
import { optStr, partitionQuery, withExpressions } from './table-io';
import { keys, TABLE } from './table-schema';

/** The attributes that put a workspace item in the registry. */
export function workspaceRegistryKeys(slug: string): Record<string, string> {
  return { [TABLE.gsi1.partitionKey]: keys.workspaceRegistryPk, [TABLE.gsi1.sortKey]: slug };
}

/** Registered workspaces after `after` (exclusive; null: from the first), in slug order, at most `limit`. */
export async function registeredWorkspaces(table: TableContext, after: string | null, limit: number): Promise<string[]> {
  const out = await table.doc.send(
    new QueryCommand({
      TableName: table.tableName,
      ...withExpressions(partitionQuery(keys.workspaceRegistryPk, { index: TABLE.gsi1, ...(after === null ? {} : { sk: { after } }) }), {
        names: { '#rsk': TABLE.gsi1.sortKey },
      }),
      ProjectionExpression: '#rsk',
      Limit: limit,
    }),
  );
  return (out.Items ?? []).map((i) => String(i[TABLE.gsi1.sortKey]));
}

const CURSOR = keys.retentionWorkspaceCursor;

/** The workspace the retention pass looked at last (null: start from the first). */
export async function getRetentionWorkspaceCursor(table: TableContext): Promise<string | null> {
  const out = await table.doc.send(new GetCommand({ TableName: table.tableName, Key: CURSOR, ConsistentRead: true }));
  return out.Item ? optStr(out.Item, 'workspace') : null;
}

/** Saves where the retention pass stopped in the registry (null: it went round; start again). */
export async function putRetentionWorkspaceCursor(table: TableContext, workspace: string | null): Promise<void> {
  await table.doc.send(new PutCommand({ TableName: table.tableName, Item: { ...CURSOR, type: 'retention-cursor', workspace } }));
}
