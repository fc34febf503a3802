/** Workspace notifications (e.g. a delivery dead-lettered) and their acknowledgement. */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { Notification } from '../contract/schemas';
import { idPattern } from '../contract/ids';
import type { Page } from '../contract/pagination';
import { newId } from '../domain/ids';
import type { TableContext } from './client';
import { auditWrites, type AuditInput } from './audit';
import { queryFilteredPage } from './filtered-pages';
import { conditionFailedAt, IF_ABSENT, IF_EXISTS, optStr, str, type Item } from './table-io';
import { queryPage } from './pages';
import { keys, SK_PREFIX } from './table-schema';

/**
 * Records a notification. With a `notificationId` (derived from what it is about) the write is
 * put-if-absent, so a retried writer records it once.
 */
export async function putNotification(
  table: TableContext,
  slug: string,
  input: { kind: string; message: string; endpointId?: string | null; deliveryId?: string | null; notificationId?: string },
  now: Date,
): Promise<Notification> {
  const notification: Notification = {
    notificationId: input.notificationId ?? newId('ntf', now),
    kind: input.kind,
    message: input.message,
    endpointId: input.endpointId ?? null,
    deliveryId: input.deliveryId ?? null,
    createdAt: now.toISOString(),
    acknowledgedAt: null,
  };
  try {
    await table.doc.send(
      new PutCommand({
        TableName: table.tableName,
        // Not acknowledged: no `acknowledgedAt` attribute (the acknowledged filter tests its presence).
        Item: { ...keys.notification(slug, notification.notificationId), type: 'notification', ...withoutAck(notification) },
        ...(input.notificationId ? { ConditionExpression: IF_ABSENT } : {}),
      }),
    );
  } catch (e) {
    // Already recorded by an earlier run of the same writer: that one stands.
    if (!(input.notificationId && e instanceof ConditionalCheckFailedException)) throw e;
  }
  return notification;
}

/** A notification's attributes but `acknowledgedAt`, which an item holds only once acknowledged. */
function withoutAck(notification: Notification): Omit<Notification, 'acknowledgedAt'> {
  const { acknowledgedAt: _, ...rest } = notification;
  return rest;
}

/** A notification item as its wire form, each attribute checked (endpoint, delivery and acknowledgement may be absent: null). */
function notificationFromItem(item: Item): Notification {
  return {
    notificationId: str(item, 'notificationId'),
    kind: str(item, 'kind'),
    message: str(item, 'message'),
    endpointId: optStr(item, 'endpointId'),
    deliveryId: optStr(item, 'deliveryId'),
    createdAt: str(item, 'createdAt'),
    acknowledgedAt: optStr(item, 'acknowledgedAt'),
  };
}

/**
 * Notifications of a workspace, newest first; with `acknowledged`, only the acknowledged (true) or
 * unacknowledged (false) ones, a page reading a bounded number of notifications
 * (lambdas/store/filtered-pages.ts).
 */
export function listNotifications(
  table: TableContext,
  slug: string,
  limit: number,
  cursor?: string,
  acknowledged?: boolean,
): Promise<Page<Notification>> {
  if (acknowledged === undefined) {
    return queryPage(table, {
      pk: keys.workspacePk(slug),
      skPrefix: SK_PREFIX.notification,
      forward: false,
      limit,
      cursor,
      idPattern: idPattern('ntf'),
      map: (item) => {
        const value = notificationFromItem(item);
        return { value, sortKey: value.createdAt, id: value.notificationId };
      },
    });
  }
  return queryFilteredPage(table, {
    pk: keys.workspacePk(slug),
    skPrefix: SK_PREFIX.notification,
    limit,
    cursor,
    idPattern: idPattern('ntf'),
    filter: {
      expression: acknowledged ? 'attribute_exists(acknowledgedAt)' : 'attribute_not_exists(acknowledgedAt)',
      fingerprint: `acknowledged=${String(acknowledged)}`,
    },
    map: async (items) => items.map(notificationFromItem),
  });
}

/** A notification of a workspace, or null. */
async function getNotification(table: TableContext, slug: string, notificationId: string): Promise<Notification | null> {
  const out = await table.doc.send(
    new GetCommand({ TableName: table.tableName, Key: keys.notification(slug, notificationId), ConsistentRead: true }),
  );
  return out.Item ? notificationFromItem(out.Item) : null;
}

/**
 * Acknowledges a notification of a workspace: sets `acknowledgedAt` once, with `audit`, in one
 * transaction conditional on it not being set yet. An acknowledged notification is answered as it
 * is (the first time stays, no audit is written again); null when the workspace has no such notification.
 */
export async function acknowledgeNotification(
  table: TableContext,
  slug: string,
  notificationId: string,
  now: Date,
  audit: AuditInput,
): Promise<Notification | null> {
  const current = await getNotification(table, slug, notificationId);
  if (!current || current.acknowledgedAt !== null) return current;
  const acknowledgedAt = now.toISOString();
  try {
    await table.doc.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: table.tableName,
              Key: keys.notification(slug, notificationId),
              UpdateExpression: 'SET acknowledgedAt = :now',
              ConditionExpression: `${IF_EXISTS} AND attribute_not_exists(acknowledgedAt)`,
              ExpressionAttributeValues: { ':now': acknowledgedAt },
            },
          },
          ...auditWrites(table, slug, audit, now),
        ],
      }),
    );
  } catch (e) {
    // Acknowledged by a concurrent request between the read and the write: its time stands.
    if (conditionFailedAt(e, 0)) return getNotification(table, slug, notificationId);
    throw e;
  }
  return { ...current, acknowledgedAt };
}
