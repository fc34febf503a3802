/**
 * The publisher (docs/architecture.md#publisher, docs/behaviour.md#event-publishing): validates a domain event against the
 * catalogue, writes one `pending` row per enabled subscribed endpoint (and a
 * held row, never queued, per disabled one: docs/behaviour.md#held-deliveries), then
 * enqueues one message per pending row. A row whose message was never sent is found
 * by the stuck-pending repair; an invalid or oversized event writes nothing.
 */
import { AppError } from '../contract/errors';
import { MAX_PAYLOAD_BYTES } from '../contract/limits';
import type { EventCatalogue } from '../domain/event-catalogue';
import { newHeldDelivery, newPendingDelivery } from '../domain/delivery-lifecycle';
import type { DeliveryQueue } from '../queue/delivery-queue';
import type { TableContext } from '../store/client';
import { putPendingDeliveries } from '../store/deliveries';
import { subscribers } from '../store/endpoints';
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
  /** The pending deliveries, one per enabled subscribed endpoint. */
  readonly deliveryIds: string[];
  /** The held deliveries, one per disabled subscribed endpoint: recorded, not queued. */
  readonly heldDeliveryIds: string[];
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

  const endpoints = await subscribers(deps.table, event.workspace, event.type);
  if (endpoints.length === 0) return { deliveryIds: [], heldDeliveryIds: [], queued: true };
  const now = deps.now();
  const input = (endpointId: string) => ({ workspace: event.workspace, endpointId, eventType: event.type, payload: event.payload });
  const rows = endpoints.filter((ep) => ep.enabled).map((ep) => newPendingDelivery(input(ep.endpointId), now));
  // Nothing published during an outage is lost from the record: a disabled endpoint's event is held.
  const held = endpoints.filter((ep) => !ep.enabled).map((ep) => newHeldDelivery(input(ep.endpointId), now));
  await putPendingDeliveries(deps.table, rows, held);
  const deliveryIds = rows.map((r) => r.deliveryId);
  const heldDeliveryIds = held.map((r) => r.deliveryId);
  if (deliveryIds.length === 0) return { deliveryIds, heldDeliveryIds, queued: true };
  try {
    await deps.queue.send(deliveryIds.map((deliveryId) => ({ deliveryId })));
    return { deliveryIds, heldDeliveryIds, queued: true };
  } catch {
    return { deliveryIds, heldDeliveryIds, queued: false };
  }
}
