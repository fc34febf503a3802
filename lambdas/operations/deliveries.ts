/** Delivery operations (docs/behaviour.md#replay, docs/behaviour.md#test-sends): list, get, attempts, replay, test send. */
import { randomUUID } from 'node:crypto';
import { DELIVERY_REPLAYS_SHOWN } from '../contract/delivery-links';
import { AppError } from '../contract/errors';
import { TEST_EVENT_TYPE } from '../contract/events';
import { clampLimit } from '../contract/pagination';
import { isReplayable, newPendingDelivery, REPLAYABLE_STATUSES, type DeliveryRecord } from '../domain/delivery-lifecycle';
import { callerActor, type Caller, type OperationDeps, type OperationImpl } from './context';
import { getDelivery, listAttempts, listReplays, putPendingDelivery, putReplayDelivery, toDeliveryWire } from '../store/deliveries';
import { listDeliveriesOfEndpoint } from '../store/delivery-log';
import { getEndpointRecord, liveEndpointIds, type EndpointRecord } from '../store/endpoints';
import type { AuditInput } from '../store/audit';
import { chargeWorkspaceQuota } from './rate-limiter';
import { assertMayChangeEndpoint } from './portal-scope';

async function endpointOf(deps: OperationDeps, caller: Caller, endpointId: string): Promise<EndpointRecord> {
  const endpoint = await getEndpointRecord(deps.table, caller.workspace, endpointId);
  if (!endpoint) throw new AppError('EndpointNotFound', `No webhook endpoint ${endpointId} in workspace ${caller.workspace}`);
  return endpoint;
}

/**
 * A delivery of the caller's workspace; another workspace's is as absent as a missing one, and so is
 * one whose endpoint was deleted (docs/behaviour.md#deleting-an-endpoint).
 */
async function deliveryOf(deps: OperationDeps, caller: Caller, deliveryId: string): Promise<DeliveryRecord> {
  const delivery = await getDelivery(deps.table, deliveryId);
  if (
    !delivery ||
    delivery.workspace !== caller.workspace ||
    !(await liveEndpointIds(deps.table, caller.workspace, [delivery.endpointId])).has(delivery.endpointId)
  )
    throw new AppError('DeliveryNotFound', `No delivery ${deliveryId} in workspace ${caller.workspace}`);
  return delivery;
}

/**
 * The replay of `source`: a new pending row (same event type and payload,
 * `replayedFrom` = the source) and its `webhook.delivery_replayed` audit. One
 * factory for interactive replays and recovery jobs (docs/behaviour.md#replay).
 */
export function replayOf(source: DeliveryRecord, actor: AuditInput['actor'], now: Date): { record: DeliveryRecord; audit: AuditInput } {
  const record = newPendingDelivery(
    {
      workspace: source.workspace,
      endpointId: source.endpointId,
      eventType: source.eventType,
      // The same event as its source: the log's eventId filter finds the replay beside it.
      eventId: source.eventId,
      payload: source.payload,
      replayedFrom: source.deliveryId,
    },
    now,
  );
  return {
    record,
    audit: {
      action: 'webhook.delivery_replayed',
      actor,
      targetId: record.deliveryId,
      detail: { replayedFrom: source.deliveryId, endpointId: source.endpointId },
    },
  };
}

/** Queues a row just written; if this send is lost, the row stays pending and the stuck-pending repair queues it. */
async function queueWritten(deps: OperationDeps, record: DeliveryRecord): Promise<DeliveryRecord> {
  await deps.queue.send([{ deliveryId: record.deliveryId }]);
  return record;
}

/** GET .../webhooks/{endpointId}/deliveries */
export const listWebhookDeliveries: OperationImpl<'listWebhookDeliveries'> = async (deps, caller, { params, query }) => {
  await endpointOf(deps, caller, params.endpointId);
  return listDeliveriesOfEndpoint(deps.table, params.endpointId, clampLimit(query.limit), query.cursor);
};

/** GET .../webhooks/deliveries/{deliveryId}: the delivery and its newest replays (read beside it, shown once it is the caller's). */
export const getWebhookDelivery: OperationImpl<'getWebhookDelivery'> = async (deps, caller, { params }) => {
  const [delivery, replays] = await Promise.all([
    deliveryOf(deps, caller, params.deliveryId),
    listReplays(deps.table, params.deliveryId, DELIVERY_REPLAYS_SHOWN),
  ]);
  return { ...toDeliveryWire(delivery), replays };
};

/** GET .../webhooks/deliveries/{deliveryId}/attempts */
export const listWebhookDeliveryAttempts: OperationImpl<'listWebhookDeliveryAttempts'> = async (deps, caller, { params, query }) => {
  await deliveryOf(deps, caller, params.deliveryId);
  return listAttempts(deps.table, params.deliveryId, clampLimit(query.limit), query.cursor);
};

/** POST .../webhooks/deliveries/{deliveryId}/replay: a new pending row; the source is unchanged; within the workspace's replay quota (docs/behaviour.md#rate-limits). */
export const replayWebhookDelivery: OperationImpl<'replayWebhookDelivery'> = async (deps, caller, { params }) => {
  const source = await deliveryOf(deps, caller, params.deliveryId);
  if (!isReplayable(source.status)) {
    throw new AppError(
      'DeliveryNotReplayable',
      `Delivery ${source.deliveryId} is ${source.status}; only ${REPLAYABLE_STATUSES.join(', ')} deliveries can be replayed`,
    );
  }
  const endpoint = await getEndpointRecord(deps.table, caller.workspace, source.endpointId);
  if (!endpoint) throw new AppError('EndpointNotFound', `The endpoint ${source.endpointId} of this delivery no longer exists`);
  assertMayChangeEndpoint(caller, endpoint);
  if (!endpoint.enabled)
    throw new AppError(
      'EndpointDisabled',
      `Endpoint ${endpoint.endpointId} is disabled; re-enable it (PATCH enabled: true) before replaying`,
    );
  // Charged here, after every other check, and only here: recovery jobs replay through replayOf, paced by their own rate.
  await chargeWorkspaceQuota(deps, 'workspace_replay', caller.workspace);
  const now = deps.now();
  const { record, audit } = replayOf(source, callerActor(caller), now);
  await putReplayDelivery(deps.table, source, record, now, audit);
  const replay = await queueWritten(deps, record);
  deps.metrics?.add('replays', 1, {});
  return toDeliveryWire(replay);
};

/** POST .../webhooks/{endpointId}/test-event: a synthetic `webhook.test_event` to this endpoint only, within the workspace's test-send quota (docs/behaviour.md#rate-limits). */
export const sendWebhookTestEvent: OperationImpl<'sendWebhookTestEvent'> = async (deps, caller, { params }) => {
  const endpoint = await endpointOf(deps, caller, params.endpointId);
  assertMayChangeEndpoint(caller, endpoint);
  if (!endpoint.enabled)
    throw new AppError('EndpointDisabled', `Endpoint ${endpoint.endpointId} is disabled; re-enable it before sending a test event`);
  await chargeWorkspaceQuota(deps, 'workspace_test_send', caller.workspace);
  const now = deps.now();
  const payload = {
    message: 'This is a test event from the webhook delivery service.',
    sentAt: now.toISOString(),
    endpointId: endpoint.endpointId,
  };
  const record = newPendingDelivery(
    {
      workspace: endpoint.workspace,
      endpointId: endpoint.endpointId,
      eventType: TEST_EVENT_TYPE,
      // A test send is its own event: a fresh UUID, as EventBridge's event ids are.
      eventId: randomUUID(),
      payload,
      replayedFrom: null,
    },
    now,
  );
  await putPendingDelivery(deps.table, record, now);
  return toDeliveryWire(await queueWritten(deps, record));
};
