/**
 * The publisher (docs/architecture.md#publisher, docs/behaviour.md#event-publishing): validates a domain event against the
 * catalogue, writes one `pending` row per enabled subscribed endpoint, then
 * enqueues one message per row. A row whose message was never sent is found
 * by the stuck-pending repair; an invalid or oversized event writes nothing.
 */
import { AppError } from '../contract/errors';
import { MAX_PAYLOAD_BYTES } from '../contract/limits';
import type { EventCatalogue } from '../domain/event-catalogue';
import { newPendingDelivery } from '../domain/delivery-lifecycle';
import type { DeliveryQueue } from '../queue/delivery-queue';
import type { TableContext } from '../store/client';
import { putPendingDeliveries } from '../store/deliveries';
import { enabledSubscribers } from '../store/endpoints';
import { getWorkspace } from '../store/workspaces';

/** Adapters of the publisher. */
export interface PublishDeps {
  readonly table: TableContext;
  readonly queue: DeliveryQueue;
  readonly eventTypes: EventCatalogue;
  readonly now: () => Date;
}

/** A domain event to publish. */
export interface DomainEvent {
  readonly workspace: string;
  readonly type: string;
  readonly payload: unknown;
}

/** What a publish did: the deliveries it created, and whether their messages were sent. */
export interface PublishResult {
  readonly deliveryIds: string[];
  /** False when the rows were written but the enqueue failed: the stuck-pending repair sends them. */
  readonly queued: boolean;
}

/**
 * Publishes one event. Once the rows are written it never fails: a failed
 * enqueue is left to the repair, because a retry of the whole publish would
 * mint new ids and deliver the event twice.
 */
export async function publishEvent(deps: PublishDeps, event: DomainEvent): Promise<PublishResult> {
  const problems = deps.eventTypes.validate(event.type, event.payload);
  if (problems === null) throw new AppError('UnknownEventType', `Unknown event type: ${event.type}`);
  if (problems.length > 0) {
    throw new AppError('ValidationError', `Invalid ${event.type} payload: ${problems.join('; ')}`, { issues: problems.map((p) => ({ path: p.split(':')[0], message: p })) });
  }
  const size = Buffer.byteLength(JSON.stringify(event.payload ?? null), 'utf8');
  if (size > MAX_PAYLOAD_BYTES) throw new AppError('PayloadTooLarge', `The payload is ${size} bytes; at most ${MAX_PAYLOAD_BYTES} are accepted`);
  if (!(await getWorkspace(deps.table, event.workspace))) throw new AppError('WorkspaceNotFound', `No workspace ${event.workspace}`);

  const endpoints = await enabledSubscribers(deps.table, event.workspace, event.type);
  if (endpoints.length === 0) return { deliveryIds: [], queued: true };
  const now = deps.now();
  const rows = endpoints.map((ep) => newPendingDelivery({ workspace: event.workspace, endpointId: ep.endpointId, eventType: event.type, payload: event.payload }, now));
  await putPendingDeliveries(deps.table, rows);
  const deliveryIds = rows.map((r) => r.deliveryId);
  try {
    await deps.queue.send(deliveryIds.map((deliveryId) => ({ deliveryId })));
    return { deliveryIds, queued: true };
  } catch {
    return { deliveryIds, queued: false };
  }
}
