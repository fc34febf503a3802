/** A workspace's branding in the console (docs/behaviour.md#branding): one item in the workspace's partition. */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Branding } from '../contract/portal-schemas';
import type { TableContext } from './client';
import { writeAudited, type AuditInput } from './audit';
import { optStr } from './table-io';
import { keys } from './table-schema';

/** The item key of a workspace's branding (docs/architecture.md#item-keys). */
const brandingKey = (slug: string) => ({ pk: keys.workspacePk(slug), sk: 'BRANDING' });

/** A workspace's branding; empty when it has none. */
export async function getBranding(table: TableContext, slug: string): Promise<Branding> {
  const out = await table.doc.send(new GetCommand({ TableName: table.tableName, Key: brandingKey(slug), ConsistentRead: true }));
  if (!out.Item) return {};
  const displayName = optStr(out.Item, 'displayName');
  const accentColor = optStr(out.Item, 'accentColor');
  return { ...(displayName === null ? {} : { displayName }), ...(accentColor === null ? {} : { accentColor }) };
}

/** Replaces a workspace's branding, with its audit event. */
export async function putBranding(table: TableContext, slug: string, branding: Branding, now: Date, audit: AuditInput): Promise<void> {
  await writeAudited(
    table,
    [{ Put: { TableName: table.tableName, Item: { ...brandingKey(slug), type: 'branding', ...branding, updatedAt: now.toISOString() } } }],
    slug,
    audit,
    now,
  );
}
