/**
 * The publisher (docs/architecture.md#publisher, docs/behaviour.md#event-publishing): validates a domain event against the
 * catalogue, writes one `pending` row per enabled subscribed endpoint whose payload filter (if
 * any) matches it (and a held row, never queued, per disabled one: docs/behaviour.md#held-deliveries;
 * nothing at all for an endpoint whose filter does not match: docs/behaviour.md#payload-filters), then
 * enqueues one message per pending row. Row ids derive from the event's id, so
 * EventBridge's at-least-once invocations never deliver one event twice under
 * two ids. A row whose message was never sent is re-sent by the event's next
 * invocation or found by the stuck-pending repair; an invalid, oversized or too deeply nested event
 * writes nothing.
 */
import { randomUUID } from 'node:crypto';
import { TIME_MAX } from 'ulid';
import { EVENT_SOURCE } from '../contract/deployment';
import { AppError, isAppError } from '../contract/errors';
import { payloadDepthRefusal } from '../contract/input-validation';
import { MAX_PAYLOAD_BYTES } from '../contract/limits';
import type { MetricsRecorder } from '../contract/metrics';
import type { EventCatalogue } from '../domain/event-catalogue';
import { newHeldDelivery, newPendingDelivery } from '../domain/delivery-lifecycle';
import { evaluatePayloadFilter, parsePayloadFilter, type PayloadFilter } from '../domain/payload-filter';
import { eventDeliveryId } from '../domain/ids';
import type { DeliveryMessage, DeliveryQueue } from '../queue/delivery-queue';
import type { TableContext } from '../store/client';
import { markForRepair, putDeliveriesIfAbsent } from '../store/deliveries';
import { findSubscribers, type Subscriber } from '../store/subscriptions';

/** Adapters of the publisher. */
export interface PublishDeps {
  readonly table: TableContext;
  readonly queue: DeliveryQueue;
  readonly eventTypes: EventCatalogue;
  readonly now: () => Date;
}

/** A domain event to publish. */
export interface DomainEvent {
  /**
   * The EventBridge event id (`POST /local/events`: the body's `id`). Deliveries are derived
   * from it, so a redelivered or retried event creates nothing new. Absent: a fresh one
   * (every call is then a new event).
   */
  readonly id?: string;
  /** The event's time (EventBridge `time`, ISO 8601): the time part of its delivery ids. @default now */
  readonly time?: string;
  readonly workspace: string;
  readonly type: string;
  readonly payload: unknown;
}

/** What a publish did: the event's deliveries, and whether the messages of those still pending were sent. */
export interface PublishResult {
  /** The deliveries to enabled subscribed endpoints, one per endpoint (the same ids for a redelivered event). */
  readonly deliveryIds: string[];
  /** The held deliveries, one per disabled subscribed endpoint: recorded, not queued. */
  readonly heldDeliveryIds: string[];
  /** False when the rows were written but the enqueue failed: the stuck-pending repair sends them. */
  readonly queued: boolean;
}

/** Parsed filters by their JSON text: a container parses each endpoint's filter once, not once per event. */
const parsedFilters = new Map<string, PayloadFilter | null>();
/** Past this many filters the cache starts again (a bound on memory, not on correctness). */
const PARSED_FILTERS_MAX = 1000;

/**
 * Whether an event's payload goes to a subscriber: always without a filter; else when its filter
 * matches. A stored filter the language no longer accepts (every filter is validated when written)
 * filters nothing: an event is never lost to a filter that cannot be read.
 */
function passesFilter(subscriber: Subscriber, payload: unknown): boolean {
  if (subscriber.filter === null) return true;
  let filter = parsedFilters.get(subscriber.filter);
  if (filter === undefined) {
    let parsed: ReturnType<typeof parsePayloadFilter> | null = null;
    try {
      parsed = parsePayloadFilter(JSON.parse(subscriber.filter));
    } catch {
      parsed = null;
    }
    filter = parsed?.ok ? parsed.filter : null;
    if (parsedFilters.size >= PARSED_FILTERS_MAX) parsedFilters.clear();
    parsedFilters.set(subscriber.filter, filter);
  }
  return filter === null || evaluatePayloadFilter(filter, payload).matches;
}

/** The time an event's delivery ids carry: its own when it has a usable one (a redelivery has the same), else now. */
function eventTime(event: DomainEvent, now: Date): Date {
  const at = event.time === undefined ? Number.NaN : Date.parse(event.time);
  return Number.isFinite(at) && at >= 0 && at <= TIME_MAX ? new Date(at) : now;
}

/**
 * Publishes one event, idempotently (docs/architecture.md#publisher): each
 * delivery's id is derived from (event id, endpoint id) and its row is written
 * put-if-absent, so a redelivered event, or a re-run after a crash anywhere in
 * here, writes only the rows still missing and re-sends only the messages of
 * rows still `pending` (at worst a second message for the same id; the
 * dispatcher records one observation). Once the rows are written it fails only
 * if it cannot even mark them: the rows of a failed send are put in the
 * stuck-pending repair's index (the happy path writes nothing there).
 */
export async function publishEvent(deps: PublishDeps, event: DomainEvent): Promise<PublishResult> {
  // First: the validators and the size's JSON.stringify walk the payload recursively.
  const tooDeep = payloadDepthRefusal(event.payload);
  if (tooDeep) throw tooDeep;
  const problems = deps.eventTypes.validate(event.type, event.payload);
  if (problems === null) throw new AppError('UnknownEventType', `Unknown event type: ${event.type}`);
  if (problems.length > 0) {
    throw new AppError('ValidationError', `Invalid ${event.type} payload: ${problems.join('; ')}`, {
      issues: problems.map((p) => ({ path: p.split(':')[0], message: p })),
    });
  }
  const size = Buffer.byteLength(JSON.stringify(event.payload ?? null), 'utf8');
  if (size > MAX_PAYLOAD_BYTES)
    throw new AppError('PayloadTooLarge', `The payload is ${size} bytes; at most ${MAX_PAYLOAD_BYTES} are accepted`);
  // The subscribers of the type, from their subscription items (docs/architecture.md#subscriptions);
  // the workspace item is read only until this container has seen it.
  const subscribers = await findSubscribers(deps.table, event.workspace, event.type);
  if (subscribers === null) throw new AppError('WorkspaceNotFound', `No workspace ${event.workspace}`);
  // Filters apply here, to published events only: test sends, replays and recovery never come this way.
  const endpoints = subscribers.filter((s) => passesFilter(s, event.payload));
  if (endpoints.length === 0) return { deliveryIds: [], heldDeliveryIds: [], queued: true };
  const eventId = event.id ?? randomUUID();
  // Every row of the event is stamped with the event's time, so a re-run builds byte-identical rows.
  const at = eventTime(event, deps.now());
  const input = (ep: Subscriber) => ({
    workspace: event.workspace,
    endpointId: ep.endpointId,
    eventType: event.type,
    // Kept on every row (and a replay's), never sent to the receiver: the log's eventId filter reads it.
    eventId,
    payload: event.payload,
  });
  const id = (ep: Subscriber) => ({ deliveryId: eventDeliveryId(eventId, ep.endpointId, at) });
  const rows = endpoints.filter((ep) => ep.enabled).map((ep) => ({ ...newPendingDelivery(input(ep), at), ...id(ep) }));
  // Nothing published during an outage is lost from the record: a disabled endpoint's event is held.
  const held = endpoints.filter((ep) => !ep.enabled).map((ep) => ({ ...newHeldDelivery(input(ep), at), ...id(ep) }));
  const { created, existing } = await putDeliveriesIfAbsent(deps.table, rows, held);
  const deliveryIds = rows.map((r) => r.deliveryId);
  const heldDeliveryIds = held.map((r) => r.deliveryId);
  // New pending rows, and rows of an earlier run still pending (their message may never have been sent).
  const toSend = [...created, ...existing].filter((r) => r.status === 'pending');
  if (toSend.length === 0) return { deliveryIds, heldDeliveryIds, queued: true };
  // A subscription item carries no lane state: a new delivery starts in the fast lane, whose
  // dispatcher moves it when its endpoint is failing or slow (docs/behaviour.md#delivery-lanes).
  const fast: DeliveryMessage[] = toSend.map((r) => ({ deliveryId: r.deliveryId, endpointId: r.endpointId, workspace: r.workspace }));
  const unsent = new Set<string>();
  const sendTo = async (queue: DeliveryQueue, messages: DeliveryMessage[]) => {
    if (messages.length === 0) return;
    try {
      await queue.send(messages);
    } catch {
      for (const m of messages) unsent.add(m.deliveryId);
    }
  };
  await sendTo(deps.queue, fast);
  if (unsent.size === 0) return { deliveryIds, heldDeliveryIds, queued: true };
  // The rows whose send failed go into the stuck-pending repair's index; a crash before this point
  // fails the invocation, which Lambda runs again (the re-run sends what is still pending).
  await markForRepair(
    deps.table,
    toSend.filter((r) => unsent.has(r.deliveryId)),
  );
  return { deliveryIds, heldDeliveryIds, queued: false };
}

/** A bus event as EventBridge hands it to the publisher (the `aws-lambda` EventBridgeEvent's fields it reads). */
export interface BusEventIn {
  readonly id: string;
  readonly time?: string;
  readonly source?: string;
  readonly 'detail-type': string;
  readonly detail?: { readonly workspace?: unknown; readonly payload?: unknown; readonly outboxId?: unknown } | null;
}

/**
 * The event a bus event publishes. Its id is what its deliveries derive from: EventBridge's event
 * id, except for the service's own events (source `webhooks.service`), which the outbox relay puts
 * at least once, each put under a new EventBridge id: theirs is the outbox id the relay carries in
 * `detail` (docs/architecture.md#outbox), so a relayed duplicate maps to the same deliveries.
 */
export function busEventToPublish(event: BusEventIn): DomainEvent & { readonly id: string } {
  const detail = event.detail ?? {};
  const outboxId = event.source === EVENT_SOURCE && typeof detail.outboxId === 'string' && detail.outboxId ? detail.outboxId : null;
  return {
    id: outboxId ?? event.id,
    ...(event.time === undefined ? {} : { time: event.time }),
    workspace: typeof detail.workspace === 'string' ? detail.workspace : '',
    type: event['detail-type'],
    payload: detail.payload,
  };
}

/** Where the publisher's entry reports (Powertools' logger fits). */
interface PublishLog {
  debug(message: string, attributes: Record<string, unknown>): void;
  warn(message: string, attributes: Record<string, unknown>): void;
}

/**
 * Publishes one bus event (its `id` is EventBridge's) and reports it: its pending and held
 * deliveries counted (docs/operations.md), a failed enqueue logged. An event the publisher refuses
 * is logged and dropped, as retrying cannot fix it: the bus rule takes the whole bus, so other
 * producers' types land here too.
 */
export async function publishBusEvent(
  deps: PublishDeps,
  event: DomainEvent & { readonly id: string },
  report: { readonly log: PublishLog; readonly metrics: MetricsRecorder },
): Promise<PublishResult> {
  const { log, metrics } = report;
  try {
    const result = await publishEvent(deps, event);
    if (!result.queued)
      log.warn('Rows written, enqueue failed: the stuck-pending repair will send them', { deliveryIds: result.deliveryIds });
    // Per event at DEBUG: the counts are metrics, and an INFO line per event is most of the log bill (docs/scaling.md).
    else
      log.debug('Published', {
        type: event.type,
        workspace: event.workspace,
        deliveries: result.deliveryIds.length,
        held: result.heldDeliveryIds.length,
      });
    metrics.add('deliveriesPublished', result.deliveryIds.length, {});
    metrics.add('deliveriesHeld', result.heldDeliveryIds.length, {});
    return result;
  } catch (error) {
    if (!isAppError(error)) throw error;
    // A warning, not an error: another producer's type is no fault of the service.
    log.warn('Refused an event', { id: event.id, type: event.type, tag: error.tag, detail: error.detail });
    metrics.add('eventsRefused', 1, { outcome: error.tag });
    return { deliveryIds: [], heldDeliveryIds: [], queued: true };
  }
}
