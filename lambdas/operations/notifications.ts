/** Acknowledging a workspace notification (docs/behaviour.md#acknowledging-notifications). */
import { AppError } from '../contract/errors';
import { acknowledgeNotification } from '../store/notifications';
import type { OperationImpl } from './context';
import { callerActor } from './context';

/** POST /workspaces/{slug}/notifications/{notificationId}/ack: sets `acknowledgedAt` once; a repeat answers the first. */
export const ackNotification: OperationImpl<'ackNotification'> = async (deps, caller, { params }) => {
  const acknowledged = await acknowledgeNotification(deps.table, caller.workspace, params.notificationId, deps.now(), {
    action: 'notification.acknowledged',
    actor: callerActor(caller),
    targetId: params.notificationId,
  });
  if (!acknowledged)
    throw new AppError('NotificationNotFound', `No notification ${params.notificationId} in workspace ${caller.workspace}`);
  return acknowledged;
};
