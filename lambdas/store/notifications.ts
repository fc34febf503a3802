/** Workspace notifications (e.g. a delivery dead-lettered). */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Notification } from '../contract/schemas';
import { idPattern } from '../contract/ids';
import type { Page } from '../contract/pagination';
import { newId } from '../domain/ids';
import type { TableContext } from './client';
import { IF_ABSENT, optStr, str, type Item } from './table-io';
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
  };
  try {
    await table.doc.send(
      new PutCommand({
        TableName: table.tableName,
        Item: { ...keys.notification(slug, notification.notificationId), type: 'notification', ...notification },
        ...(input.notificationId ? { ConditionExpression: IF_ABSENT } : {}),
      }),
    );
  } catch (e) {
    // Already recorded by an earlier run of the same writer: that one stands.
    if (!(input.notificationId && e instanceof ConditionalCheckFailedException)) throw e;
  }
  return notification;
}

/** A notification item as its wire form, each attribute checked (endpoint and delivery may be absent: null). */
function notificationFromItem(item: Item): Notification {
  return {
    notificationId: str(item, 'notificationId'),
    kind: str(item, 'kind'),
    message: str(item, 'message'),
    endpointId: optStr(item, 'endpointId'),
    deliveryId: optStr(item, 'deliveryId'),
    createdAt: str(item, 'createdAt'),
  };
}

/** Notifications of a workspace, newest first. */
export function listNotifications(table: TableContext, slug: string, limit: number, cursor?: string): Promise<Page<Notification>> {
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
