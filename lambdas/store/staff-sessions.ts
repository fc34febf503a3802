/**
 * Staff sessions and sign-in nonces (docs/behaviour.md#staff-sign-in). A session is an item in the
 * staff partition (listed newest first, revoked) and a token-hash item beside the API tokens'
 * ones, so the authorizer resolves a `wss_` token by the same lookup as an API token. A nonce is
 * an item keyed by its hash, consumed by one conditional delete. Every item carries the table's TTL
 * attribute, so ended sessions and unused nonces go away by themselves; reads treat them as gone
 * from `expiresAt` on.
 */
import { DeleteCommand, GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { STAFF_ROLES, type StaffRole } from '../contract/console-oidc';
import { idPattern } from '../contract/ids';
import type { Page } from '../contract/pagination';
import type { ConsoleSession } from '../contract/staff-schemas';
import type { TableContext } from './client';
import { queryFilteredPage } from './filtered-pages';
import { IF_ABSENT, IF_EXISTS, oneOf, str, type Item } from './table-io';
import { keys, SK_PREFIX, TABLE } from './table-schema';

/** A staff session as the store keeps it. */
interface StaffSessionRecord {
  readonly sessionId: string;
  readonly email: string;
  readonly role: StaffRole;
  readonly createdAt: string;
  readonly expiresAt: string;
}

const epochSeconds = (iso: string) => Math.ceil(Date.parse(iso) / 1000);

function sessionFromItem(item: Item): StaffSessionRecord & { tokenHash: string } {
  return {
    sessionId: str(item, 'sessionId'),
    email: str(item, 'email'),
    role: oneOf(item, 'role', STAFF_ROLES),
    createdAt: str(item, 'createdAt'),
    expiresAt: str(item, 'expiresAt'),
    tokenHash: str(item, 'tokenHash'),
  };
}

/**
 * Stores a new session and its token's hash in one transaction: the hash resolves to a `staff`
 * identity whose workspace is `anyWorkspace` (the mark of every workspace the caller knows).
 */
export async function putStaffSession(
  table: TableContext,
  session: StaffSessionRecord,
  tokenHash: string,
  anyWorkspace: string,
): Promise<void> {
  const ttl = { [TABLE.ttlAttribute]: epochSeconds(session.expiresAt) };
  await table.doc.send(
    new TransactWriteCommand({
      TransactItems: [
        {
          Put: {
            TableName: table.tableName,
            Item: { ...keys.staffSession(session.sessionId), type: 'staff-session', ...session, tokenHash, ...ttl },
            ConditionExpression: IF_ABSENT,
          },
        },
        {
          Put: {
            TableName: table.tableName,
            Item: {
              ...keys.tokenHash(tokenHash),
              type: 'session-hash',
              kind: 'staff',
              tokenId: session.sessionId,
              workspace: anyWorkspace,
              scopes: [session.role],
              staffRole: session.role,
              email: session.email,
              expiresAt: session.expiresAt,
              ...ttl,
            },
            ConditionExpression: IF_ABSENT,
          },
        },
      ],
    }),
  );
}

/** A session (strongly consistent); null when there is none or it has ended at `now`. */
async function readSession(table: TableContext, sessionId: string, now: Date) {
  const out = await table.doc.send(new GetCommand({ TableName: table.tableName, Key: keys.staffSession(sessionId), ConsistentRead: true }));
  if (!out.Item) return null;
  const session = sessionFromItem(out.Item);
  return Date.parse(session.expiresAt) > now.getTime() ? session : null;
}

/**
 * Ends a session: its item and its token's hash go in one transaction, so the token stops
 * resolving at once. False when there is none (or it has ended).
 */
export async function deleteStaffSession(table: TableContext, sessionId: string, now: Date): Promise<boolean> {
  const session = await readSession(table, sessionId, now);
  if (!session) return false;
  try {
    await table.doc.send(
      new TransactWriteCommand({
        TransactItems: [
          { Delete: { TableName: table.tableName, Key: keys.staffSession(sessionId), ConditionExpression: IF_EXISTS } },
          { Delete: { TableName: table.tableName, Key: keys.tokenHash(session.tokenHash) } },
        ],
      }),
    );
  } catch (e) {
    // A concurrent revocation got there first: gone, as for the first.
    if (e instanceof TransactionCanceledException) return false;
    throw e;
  }
  return true;
}

/** The sessions that have not ended, newest first (a page may hold fewer than `limit`). */
export function listStaffSessions(table: TableContext, limit: number, now: Date, cursor?: string): Promise<Page<ConsoleSession>> {
  return queryFilteredPage(table, {
    pk: keys.staffSessionsPk,
    skPrefix: SK_PREFIX.staffSession,
    limit,
    cursor,
    idPattern: idPattern('wcs'),
    filter: {
      expression: '#expiresAt > :now',
      names: { '#expiresAt': 'expiresAt' },
      values: { ':now': now.toISOString() },
      fingerprint: 'unexpired',
    },
    map: async (items) =>
      items.map((item) => {
        const { sessionId, email, role, createdAt, expiresAt } = sessionFromItem(item);
        return { sessionId, email, role, createdAt, expiresAt };
      }),
  });
}

/** Stores a sign-in nonce (its hash only), usable once until `expiresAt`. */
export async function putConsoleNonce(table: TableContext, nonceHash: string, expiresAt: string): Promise<void> {
  await table.doc.send(
    new PutCommand({
      TableName: table.tableName,
      Item: { ...keys.consoleNonce(nonceHash), type: 'console-nonce', expiresAt, [TABLE.ttlAttribute]: epochSeconds(expiresAt) },
      ConditionExpression: IF_ABSENT,
    }),
  );
}

/**
 * Consumes a nonce: one conditional delete, so of two sign-ins racing with one nonce exactly one
 * gets true. False for a nonce never issued, already used, or past its time.
 */
export async function consumeConsoleNonce(table: TableContext, nonceHash: string, now: Date): Promise<boolean> {
  try {
    await table.doc.send(
      new DeleteCommand({
        TableName: table.tableName,
        Key: keys.consoleNonce(nonceHash),
        ConditionExpression: `${IF_EXISTS} AND #expiresAt > :now`,
        ExpressionAttributeNames: { '#expiresAt': 'expiresAt' },
        ExpressionAttributeValues: { ':now': now.toISOString() },
      }),
    );
    return true;
  } catch (e) {
    if (e instanceof ConditionalCheckFailedException) return false;
    throw e;
  }
}
