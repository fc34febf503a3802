/**
 * Workspaces as the platform API manages them (docs/api.md#platform-api): created with their
 * owner member in one transaction, listed from the workspace registry, renamed. A workspace whose
 * item carries `erasingJobId` is being erased (its item is deleted last).
 */
import { GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { PlatformWorkspace } from '../contract/platform-schemas';
import { RESUME_AFTER, type Page } from '../contract/pagination';
import type { AuditActor, Member } from '../contract/schemas';
import { decodeCursor, encodeCursor } from '../domain/cursor';
import { newId } from '../domain/ids';
import { auditWrites } from './audit';
import type { TableContext } from './client';
import { conditionFailedAt, IF_ABSENT, ifExistsAnd, optStr, partitionQuery, str, type Item } from './table-io';
import { keys, TABLE } from './table-schema';
import { workspaceRegistryKeys } from './workspace-registry';

/** The attribute an erasure sets on the workspace item when it starts (the erasure job's id). */
const ERASING = 'erasingJobId';

/** A workspace item as the platform API shows it, each attribute checked. */
function platformWorkspaceFromItem(item: Item): PlatformWorkspace {
  return {
    slug: str(item, 'slug'),
    name: str(item, 'name'),
    createdAt: str(item, 'createdAt'),
    status: optStr(item, ERASING) === null ? 'active' : 'erasing',
  };
}

/**
 * Creates a workspace (in the registry) and its owner member, audited in the workspace's own log
 * as `workspace.created` by `actor`, all in one transaction; null when the slug is taken (an
 * existing workspace, or one being erased).
 */
export async function createWorkspaceWithOwner(
  table: TableContext,
  input: { readonly slug: string; readonly name: string; readonly ownerEmail: string },
  actor: AuditActor,
  now: Date,
): Promise<{ workspace: PlatformWorkspace; owner: Member } | null> {
  const owner: Member = { memberId: newId('mem', now), email: input.ownerEmail, role: 'owner' };
  const createdAt = now.toISOString();
  try {
    await table.doc.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: table.tableName,
              Item: {
                ...keys.workspace(input.slug),
                type: 'workspace',
                slug: input.slug,
                name: input.name,
                createdAt,
                ...workspaceRegistryKeys(input.slug),
              },
              ConditionExpression: IF_ABSENT,
            },
          },
          {
            Put: { TableName: table.tableName, Item: { ...keys.member(input.slug, owner.memberId), type: 'member', ...owner, createdAt } },
          },
          ...auditWrites(
            table,
            input.slug,
            { action: 'workspace.created', actor, targetId: input.slug, detail: { name: input.name, ownerMemberId: owner.memberId } },
            now,
          ),
        ],
      }),
    );
  } catch (e) {
    if (conditionFailedAt(e, 0)) return null;
    throw e;
  }
  return { workspace: { slug: input.slug, name: input.name, createdAt, status: 'active' }, owner };
}

/**
 * Renames a workspace, audited as `workspace.renamed`; null when there is no such workspace.
 * A workspace being erased cannot be renamed: `erasing`.
 */
export async function renameWorkspace(
  table: TableContext,
  slug: string,
  name: string,
  actor: AuditActor,
  now: Date,
): Promise<PlatformWorkspace | null | 'erasing'> {
  let updated: Item | undefined;
  try {
    const out = await table.doc.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: keys.workspace(slug),
        UpdateExpression: 'SET #name = :name',
        ConditionExpression: ifExistsAnd(`attribute_not_exists(#erasing)`),
        ExpressionAttributeNames: { '#name': 'name', '#erasing': ERASING },
        ExpressionAttributeValues: { ':name': name },
        ReturnValues: 'ALL_OLD',
      }),
    );
    updated = out.Attributes;
  } catch (e) {
    if (!(e instanceof ConditionalCheckFailedException)) throw e;
    const current = await getPlatformWorkspace(table, slug);
    return current ? 'erasing' : null;
  }
  if (!updated) return null;
  const previous = str(updated, 'name');
  const workspace = { ...platformWorkspaceFromItem(updated), name };
  if (previous !== name) {
    await table.doc.send(
      new TransactWriteCommand({
        TransactItems: auditWrites(
          table,
          slug,
          { action: 'workspace.renamed', actor, targetId: slug, detail: { name, previousName: previous } },
          now,
        ),
      }),
    );
  }
  return workspace;
}

/** A workspace by slug, or null. */
export async function getPlatformWorkspace(table: TableContext, slug: string): Promise<PlatformWorkspace | null> {
  const out = await table.doc.send(new GetCommand({ TableName: table.tableName, Key: keys.workspace(slug), ConsistentRead: true }));
  return out.Item ? platformWorkspaceFromItem(out.Item) : null;
}

/** A cursor of another list (whose ids all have an `_`) addresses no position here. */
const SLUG_POSITION = /^[a-z0-9-]{1,63}$/;

/** Workspaces in slug order, from the registry (gsi1 projects whole workspace items). */
export async function listPlatformWorkspaces(table: TableContext, limit: number, cursor?: string): Promise<Page<PlatformWorkspace>> {
  let after: string | null = null;
  if (cursor !== undefined) {
    const position = decodeCursor(cursor, SLUG_POSITION);
    if (!position) return { items: [], nextCursor: null };
    after = position.id;
  }
  const items: Item[] = [];
  let start: Item | undefined;
  // One extra row tells whether a next page exists, so the last page says null.
  while (items.length <= limit) {
    const out = await table.doc.send(
      new QueryCommand({
        TableName: table.tableName,
        ...partitionQuery(keys.workspaceRegistryPk, { index: TABLE.gsi1, ...(after === null ? {} : { sk: { after } }) }),
        Limit: limit + 1 - items.length,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    items.push(...(out.Items ?? []));
    if (!out.LastEvaluatedKey) break;
    start = out.LastEvaluatedKey;
  }
  const workspaces = items.slice(0, limit).map(platformWorkspaceFromItem);
  const resumeAfter = (index: number) => encodeCursor({ sortKey: workspaces[index]!.slug, id: workspaces[index]!.slug });
  return {
    items: workspaces,
    nextCursor: items.length > limit && workspaces.length > 0 ? resumeAfter(workspaces.length - 1) : null,
    [RESUME_AFTER]: resumeAfter,
  };
}
