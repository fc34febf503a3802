/**
 * The publisher (spec §1, §6; DESIGN §5): validates a domain event against the
 * catalogue, writes one `pending` row per enabled subscribed endpoint, then
 * enqueues one message per row. A row whose message was never sent is found
 * by the stuck-pending repair; an invalid or oversized event writes nothing.
 */
import { AppError } from '../contract/errors';
import type { EventCatalogue } from '../domain/event-catalogue';
import { newId } from '../domain/ids';
import type { DeliveryQueue } from '../queue/delivery-queue';
import type { TableContext } from '../store/client';
import { putPendingDeliveries, type DeliveryRecord } from '../store/deliveries';
import { enabledSubscribers } from '../store/endpoints';
import { getWorkspace } from '../store/workspaces';

/** Largest payload accepted: an EventBridge event's limit (DESIGN §4). */
export const MAX_PAYLOAD_BYTES = 256 * 1024;

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

/** Publishes one event; returns the delivery ids it created. */
export async function publishEvent(deps: PublishDeps, event: DomainEvent): Promise<{ deliveryIds: string[] }> {
  const problems = deps.eventTypes.validate(event.type, event.payload);
  if (problems === null) throw new AppError('UnknownEventType', `Unknown event type: ${event.type}`);
  if (problems.length > 0) {
    throw new AppError('ValidationError', `Invalid ${event.type} payload: ${problems.join('; ')}`, { issues: problems.map((p) => ({ path: p.split(':')[0], message: p })) });
  }
  const size = Buffer.byteLength(JSON.stringify(event.payload ?? null), 'utf8');
  if (size > MAX_PAYLOAD_BYTES) throw new AppError('PayloadTooLarge', `The payload is ${size} bytes; at most ${MAX_PAYLOAD_BYTES} are accepted`);
  if (!(await getWorkspace(deps.table, event.workspace))) throw new AppError('WorkspaceNotFound', `No workspace ${event.workspace}`);

  const endpoints = await enabledSubscribers(deps.table, event.workspace, event.type);
  if (endpoints.length === 0) return { deliveryIds: [] };
  const now = deps.now();
  const createdAt = now.toISOString();
  const rows: DeliveryRecord[] = endpoints.map((ep) => ({
    deliveryId: newId('whd', now),
    workspace: event.workspace,
    endpointId: ep.endpointId,
    status: 'pending',
    attempts: 0,
    evidenceCount: 0,
    nextAttemptAt: createdAt,
    eventType: event.type,
    payload: event.payload,
    replayedFrom: null,
    lastResponseStatus: null,
    lastError: null,
    createdAt,
    updatedAt: createdAt,
  }));
  await putPendingDeliveries(deps.table, rows);
  await deps.queue.send(rows.map((r) => ({ deliveryId: r.deliveryId })));
  return { deliveryIds: rows.map((r) => r.deliveryId) };
}
