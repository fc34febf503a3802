/** Workspaces and their members. */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { MEMBER_ROLES } from '../contract/permissions';
import type { Member } from '../contract/schemas';
import { idPattern } from '../contract/ids';
import type { Page } from '../contract/pagination';
import { newId } from '../domain/ids';
import type { TableContext } from './client';
import { IF_ABSENT, oneOf, str, type Item } from './table-io';
import { countItems, queryPage } from './pages';
import { workspaceRegistryKeys } from './workspace-registry';
import { keys, SK_PREFIX } from './table-schema';

/** A workspace record. */
export interface Workspace {
  readonly slug: string;
  readonly name: string;
  readonly createdAt: string;
}

/** The roles a member item may hold. */
/** A workspace item as a record, each attribute checked. */
function workspaceFromItem(item: Item): Workspace {
  return { slug: str(item, 'slug'), name: str(item, 'name'), createdAt: str(item, 'createdAt') };
}

/** A member item as its wire form, each attribute checked. */
function memberFromItem(item: Item): Member {
  return { memberId: str(item, 'memberId'), email: str(item, 'email'), role: oneOf(item, 'role', MEMBER_ROLES) };
}

/** Reads a workspace by slug. */
export async function getWorkspace(table: TableContext, slug: string): Promise<Workspace | null> {
  const out = await table.doc.send(new GetCommand({ TableName: table.tableName, Key: keys.workspace(slug), ConsistentRead: true }));
  if (!out.Item) return null;
  return workspaceFromItem(out.Item);
}

/**
 * Creates a workspace (in the workspace registry: docs/architecture.md#retention); false when the slug is taken.
 */
export async function createWorkspace(table: TableContext, input: { slug: string; name: string }, now: Date): Promise<boolean> {
  try {
    await table.doc.send(
      new PutCommand({
        TableName: table.tableName,
        Item: {
          ...keys.workspace(input.slug),
          type: 'workspace',
          slug: input.slug,
          name: input.name,
          createdAt: now.toISOString(),
          ...workspaceRegistryKeys(input.slug),
        },
        ConditionExpression: IF_ABSENT,
      }),
    );
    return true;
  } catch (e) {
    if (e instanceof ConditionalCheckFailedException) return false;
    throw e;
  }
}

/** Adds a member to a workspace. */
export async function addMember(
  table: TableContext,
  slug: string,
  input: { email: string; role: Member['role'] },
  now: Date,
): Promise<Member> {
  const member: Member = { memberId: newId('mem', now), email: input.email, role: input.role };
  await table.doc.send(
    new PutCommand({
      TableName: table.tableName,
      Item: { ...keys.member(slug, member.memberId), type: 'member', ...member, createdAt: now.toISOString() },
    }),
  );
  return member;
}

/** Members of a workspace, forward on id. */
export function listMembers(table: TableContext, slug: string, limit: number, cursor?: string): Promise<Page<Member>> {
  return queryPage(table, {
    pk: keys.workspacePk(slug),
    skPrefix: SK_PREFIX.member,
    forward: true,
    limit,
    cursor,
    idPattern: idPattern('mem'),
    map: (item) => {
      const value = memberFromItem(item);
      return { value, sortKey: value.memberId, id: value.memberId };
    },
  });
}

/** Number of members. */
export function countMembers(table: TableContext, slug: string): Promise<number> {
  return countItems(table, keys.workspacePk(slug), SK_PREFIX.member);
}
