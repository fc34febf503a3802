/**
 * Portal sessions (docs/behaviour.md#portal-sessions): a session item in its workspace's partition
 * (listed, revoked), a single-use code item keyed by the code's hash (the link), and, once the link
 * is opened, a token-hash item beside the API tokens' ones, so the authorizer resolves a session
 * token by the same lookup as an API token. Every item carries the table's TTL attribute, so an
 * expired session's items go away by themselves; reads treat them as gone from `expiresAt` on.
 */
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { idPattern } from '../contract/ids';
import type { Page } from '../contract/pagination';
import type { PortalSession } from '../contract/portal-schemas';
import type { AuditActor } from '../contract/schemas';
import type { TableContext } from './client';
import { auditWrites, storedActor, workspaceViewActor, type AuditInput } from './audit';
import { queryFilteredPage } from './filtered-pages';
import { bool, IF_ABSENT, IF_EXISTS, optStr, str, strList, type Item } from './table-io';
import { keys, SK_PREFIX, TABLE } from './table-schema';

/** Sort-key prefix of a workspace's portal sessions. */
const SESSION_SK_PREFIX = SK_PREFIX.portalSession;

/** The item keys of portal sessions (docs/architecture.md#item-keys). */
const portalKeys = { session: keys.portalSession, code: keys.portalCode } as const;

/** A session as the store keeps it. */
export interface PortalSessionRecord {
  readonly sessionId: string;
  readonly workspace: string;
  readonly createdAt: string;
  readonly expiresAt: string;
  readonly readOnly: boolean;
  /** The permissions its token carries. */
  readonly permissions: readonly string[];
  readonly eventTypes: readonly string[] | null;
  readonly returnUrl: string | null;
  readonly createdBy: AuditActor;
  readonly openedAt: string | null;
}

const epochSeconds = (iso: string) => Math.ceil(Date.parse(iso) / 1000);

function sessionFromItem(item: Item): PortalSessionRecord & { codeHash: string; tokenHash: string | null } {
  return {
    sessionId: str(item, 'sessionId'),
    workspace: str(item, 'workspace'),
    createdAt: str(item, 'createdAt'),
    expiresAt: str(item, 'expiresAt'),
    readOnly: bool(item, 'readOnly'),
    permissions: strList(item, 'permissions'),
    eventTypes: item.eventTypes === null || item.eventTypes === undefined ? null : strList(item, 'eventTypes'),
    returnUrl: optStr(item, 'returnUrl'),
    createdBy: workspaceViewActor(storedActor({ ...item, actor: item.createdBy })),
    openedAt: optStr(item, 'openedAt'),
    codeHash: str(item, 'codeHash'),
    tokenHash: optStr(item, 'tokenHash'),
  };
}

/** A session record as the list shows it. */
function portalSessionWire(record: PortalSessionRecord): PortalSession {
  return {
    sessionId: record.sessionId,
    createdAt: record.createdAt,
    expiresAt: record.expiresAt,
    readOnly: record.readOnly,
    eventTypes: record.eventTypes ? [...record.eventTypes] : null,
    returnUrl: record.returnUrl,
    createdBy: record.createdBy,
    openedAt: record.openedAt,
  };
}

/**
 * Stores a new session and its link's code (its hash only), with the audit event, in one
 * transaction. The code item expires at `codeExpiresAt`.
 */
export async function putPortalSession(
  table: TableContext,
  session: Omit<PortalSessionRecord, 'openedAt'>,
  code: { readonly hash: string; readonly expiresAt: string },
  now: Date,
  audit: AuditInput,
): Promise<void> {
  const { workspace, sessionId, eventTypes, ...rest } = session;
  await table.doc.send(
    new TransactWriteCommand({
      TransactItems: [
        {
          Put: {
            TableName: table.tableName,
            Item: {
              ...portalKeys.session(workspace, sessionId),
              type: 'portal-session',
              sessionId,
              workspace,
              ...rest,
              eventTypes: eventTypes ? [...eventTypes] : null,
              permissions: [...session.permissions],
              codeHash: code.hash,
              [TABLE.ttlAttribute]: epochSeconds(session.expiresAt),
            },
            ConditionExpression: IF_ABSENT,
          },
        },
        {
          Put: {
            TableName: table.tableName,
            Item: {
              ...portalKeys.code(code.hash),
              type: 'portal-code',
              sessionId,
              workspace,
              expiresAt: code.expiresAt,
              [TABLE.ttlAttribute]: epochSeconds(code.expiresAt),
            },
            ConditionExpression: IF_ABSENT,
          },
        },
        ...auditWrites(table, workspace, audit, now),
      ],
    }),
  );
}

/** Reads a session of a workspace (strongly consistent); null when there is none or it has expired. */
async function readSession(table: TableContext, slug: string, sessionId: string, now: Date) {
  const out = await table.doc.send(
    new GetCommand({ TableName: table.tableName, Key: portalKeys.session(slug, sessionId), ConsistentRead: true }),
  );
  if (!out.Item) return null;
  const session = sessionFromItem(out.Item);
  return Date.parse(session.expiresAt) > now.getTime() ? session : null;
}

/**
 * Opens a link: consumes its code and stores the session token's hash, in one transaction whose
 * conditions (the code still there, the session still there and never opened) let exactly one of
 * two racing opens through. Null for a code that is unknown, used, expired, or whose session was
 * revoked or has expired: the caller answers all of them alike.
 */
export async function openPortalSession(
  table: TableContext,
  codeHash: string,
  tokenHash: string,
  now: Date,
): Promise<PortalSessionRecord | null> {
  const code = await table.doc.send(new GetCommand({ TableName: table.tableName, Key: portalKeys.code(codeHash), ConsistentRead: true }));
  if (!code.Item || Date.parse(str(code.Item, 'expiresAt')) <= now.getTime()) return null;
  const session = await readSession(table, str(code.Item, 'workspace'), str(code.Item, 'sessionId'), now);
  if (!session || session.codeHash !== codeHash || session.tokenHash !== null) return null;
  const openedAt = now.toISOString();
  try {
    await table.doc.send(
      new TransactWriteCommand({
        TransactItems: [
          { Delete: { TableName: table.tableName, Key: portalKeys.code(codeHash), ConditionExpression: IF_EXISTS } },
          {
            Update: {
              TableName: table.tableName,
              Key: portalKeys.session(session.workspace, session.sessionId),
              UpdateExpression: 'SET tokenHash = :hash, openedAt = :at',
              ConditionExpression: `${IF_EXISTS} AND attribute_not_exists(tokenHash)`,
              ExpressionAttributeValues: { ':hash': tokenHash, ':at': openedAt },
            },
          },
          {
            Put: {
              TableName: table.tableName,
              Item: {
                ...keys.tokenHash(tokenHash),
                type: 'session-hash',
                kind: 'portal_session',
                tokenId: session.sessionId,
                workspace: session.workspace,
                scopes: [...session.permissions],
                eventTypes: session.eventTypes ? [...session.eventTypes] : null,
                expiresAt: session.expiresAt,
                [TABLE.ttlAttribute]: epochSeconds(session.expiresAt),
              },
              ConditionExpression: IF_ABSENT,
            },
          },
        ],
      }),
    );
  } catch (e) {
    // Another open of the same code (or a revocation) got there first.
    if (e instanceof TransactionCanceledException) return null;
    throw e;
  }
  return { ...session, openedAt };
}

/**
 * Revokes a session: its item, its code and its token's hash go in one transaction with the audit
 * event, so the token stops resolving at once. False when there is none (or it has expired). The
 * delete is conditioned on the token hash read, so an open racing the revocation is either seen
 * (and its token deleted) or fails.
 */
export async function deletePortalSession(
  table: TableContext,
  slug: string,
  sessionId: string,
  now: Date,
  audit: AuditInput,
): Promise<boolean> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const session = await readSession(table, slug, sessionId, now);
    if (!session) return false;
    try {
      await table.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Delete: {
                TableName: table.tableName,
                Key: portalKeys.session(slug, sessionId),
                ConditionExpression: session.tokenHash === null ? `${IF_EXISTS} AND attribute_not_exists(tokenHash)` : `tokenHash = :hash`,
                ...(session.tokenHash === null ? {} : { ExpressionAttributeValues: { ':hash': session.tokenHash } }),
              },
            },
            { Delete: { TableName: table.tableName, Key: portalKeys.code(session.codeHash) } },
            ...(session.tokenHash === null ? [] : [{ Delete: { TableName: table.tableName, Key: keys.tokenHash(session.tokenHash) } }]),
            ...auditWrites(table, slug, audit, now),
          ],
        }),
      );
      return true;
    } catch (e) {
      // The link was opened (or the session revoked) between the read and the write: read again.
      if (!(e instanceof TransactionCanceledException)) throw e;
    }
  }
  throw new Error(`portal session ${sessionId} kept changing during its revocation`);
}

/** The unexpired sessions of a workspace, newest first (a page may hold fewer than `limit`). */
export function listPortalSessions(
  table: TableContext,
  slug: string,
  limit: number,
  now: Date,
  cursor?: string,
): Promise<Page<PortalSession>> {
  return queryFilteredPage(table, {
    pk: keys.workspacePk(slug),
    skPrefix: SESSION_SK_PREFIX,
    limit,
    cursor,
    idPattern: idPattern('wps'),
    filter: {
      expression: '#expiresAt > :now',
      names: { '#expiresAt': 'expiresAt' },
      values: { ':now': now.toISOString() },
      fingerprint: 'unexpired',
    },
    map: async (items) => items.map((item) => portalSessionWire(sessionFromItem(item))),
  });
}
