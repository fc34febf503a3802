/**
 * API tokens: a hash item (the authorizer's lookup, strongly consistent on the
 * table) and a listing item under the workspace, written and deleted together. A portal session's
 * token has a hash item of the same key (lambdas/store/portal-sessions.ts), so one lookup resolves both.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { ApiToken } from '../contract/schemas';
import { STAFF_ROLES, type StaffRole } from '../contract/console-oidc';
import { idPattern } from '../contract/ids';
import type { Page } from '../contract/pagination';
import { SCOPES } from '../contract/permissions';
import type { TableContext } from './client';
import { storedActor, workspaceViewActor, type AuditInput } from './audit';
import { countItems, queryPage } from './pages';
import { conditionFailedAt, IF_ABSENT, IF_EXISTS, oneOf, oneOfList, optStr, str, strList, type Item } from './table-io';
import { keys, SK_PREFIX } from './table-schema';
import { writeCounted } from './workspace-counts';

/** What the authorizer learns from a token hash. */
export interface TokenIdentity {
  readonly tokenId: string;
  readonly workspace: string;
  readonly scopes: string[];
  /** The token's name (audit entries keep it beside the token id); null for a token whose hash item carries none. */
  readonly name: string | null;
  /**
   * `portal_session` for a portal session's token (lambdas/store/portal-sessions.ts), `staff` for a
   * staff session's (lambdas/store/staff-sessions.ts), else an API token.
   */
  readonly kind: 'token' | 'portal_session' | 'staff';
  /** A portal session's event types; null when unrestricted (and for API tokens). */
  readonly eventTypes: string[] | null;
  /** When a session's token stops working; null for API tokens, which do not expire. */
  readonly expiresAt: string | null;
  /** A staff session's role and person; null for other tokens. */
  readonly staff: { readonly role: StaffRole; readonly email: string } | null;
}

/**
 * Stores a new token (its hash only) with an optional audit event, counted
 * (lambdas/store/workspace-counts.ts): with `limit`, false (and nothing written) when the workspace
 * already has that many tokens. Tokens issued by the system (the admin CLI, the local stack's seed)
 * are counted but not limited.
 */
export async function putApiToken(
  table: TableContext,
  slug: string,
  token: ApiToken & { hash: string },
  now: Date,
  audit?: AuditInput,
  limit?: number,
): Promise<boolean> {
  const { hash, ...meta } = token;
  const outcome = await writeCounted(
    table,
    slug,
    { kind: 'apiTokens', delta: 1, ...(limit === undefined ? {} : { limit }) },
    [
      {
        Put: {
          TableName: table.tableName,
          Item: {
            ...keys.tokenHash(hash),
            type: 'token-hash',
            tokenId: meta.tokenId,
            workspace: slug,
            scopes: meta.scopes,
            name: meta.name,
          },
          ConditionExpression: IF_ABSENT,
        },
      },
      { Put: { TableName: table.tableName, Item: { ...keys.token(slug, meta.tokenId), type: 'token', ...meta, hash } } },
    ],
    audit,
    now,
  );
  return outcome === 'written';
}

/** A token-hash item as the identity it resolves to, each attribute checked (absent scopes: none; absent name: null). */
function tokenIdentityFromItem(item: Item): TokenIdentity {
  const portal = item.kind === 'portal_session';
  const staff = item.kind === 'staff';
  return {
    tokenId: str(item, 'tokenId'),
    workspace: str(item, 'workspace'),
    scopes: strList(item, 'scopes'),
    name: optStr(item, 'name'),
    kind: portal ? 'portal_session' : staff ? 'staff' : 'token',
    eventTypes: portal && item.eventTypes !== null && item.eventTypes !== undefined ? strList(item, 'eventTypes') : null,
    expiresAt: portal || staff ? str(item, 'expiresAt') : null,
    staff: staff ? { role: oneOf(item, 'staffRole', STAFF_ROLES), email: str(item, 'email') } : null,
  };
}

/** A token item as its wire form (the hash left out), each attribute checked. */
function apiTokenFromItem(item: Item): ApiToken {
  return {
    tokenId: str(item, 'tokenId'),
    name: str(item, 'name'),
    scopes: oneOfList(item, 'scopes', SCOPES),
    createdAt: str(item, 'createdAt'),
    // Tokens stored before their creator was kept carry none.
    createdBy:
      item.createdBy === undefined || item.createdBy === null ? null : workspaceViewActor(storedActor({ ...item, actor: item.createdBy })),
  };
}

/** Resolves a token hash to its identity, or null. */
export async function findTokenByHash(table: TableContext, hash: string): Promise<TokenIdentity | null> {
  const out = await table.doc.send(new GetCommand({ TableName: table.tableName, Key: keys.tokenHash(hash), ConsistentRead: true }));
  if (!out.Item) return null;
  return tokenIdentityFromItem(out.Item);
}

/** Deletes a token of a workspace; false when there is none. */
export async function deleteApiToken(table: TableContext, slug: string, tokenId: string, now: Date, audit: AuditInput): Promise<boolean> {
  const out = await table.doc.send(new GetCommand({ TableName: table.tableName, Key: keys.token(slug, tokenId), ConsistentRead: true }));
  if (!out.Item) return false;
  try {
    // Counted: the revocation frees a slot of the workspace's token limit.
    await writeCounted(
      table,
      slug,
      { kind: 'apiTokens', delta: -1 },
      [
        { Delete: { TableName: table.tableName, Key: keys.token(slug, tokenId), ConditionExpression: IF_EXISTS } },
        { Delete: { TableName: table.tableName, Key: keys.tokenHash(str(out.Item, 'hash')) } },
      ],
      audit,
      now,
    );
  } catch (e) {
    // A concurrent revocation deleted it between the read and the write: gone, as for the first.
    if (conditionFailedAt(e, 0)) return false;
    throw e;
  }
  return true;
}

/** Tokens of a workspace, newest first. */
export function listApiTokens(table: TableContext, slug: string, limit: number, cursor?: string): Promise<Page<ApiToken>> {
  return queryPage(table, {
    pk: keys.workspacePk(slug),
    skPrefix: SK_PREFIX.token,
    forward: false,
    limit,
    cursor,
    idPattern: idPattern('tok'),
    map: (item) => {
      const value = apiTokenFromItem(item);
      return { value, sortKey: value.createdAt, id: value.tokenId };
    },
  });
}

/** Number of tokens. */
export function countApiTokens(table: TableContext, slug: string): Promise<number> {
  return countItems(table, keys.workspacePk(slug), SK_PREFIX.token);
}
