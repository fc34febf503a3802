/**
 * The bus of the service's own domain events, as the outbox relay puts them on it
 * (docs/architecture.md#outbox): the port, and its EventBridge adapter (the local stack injects
 * its own, which hands each event to the publisher).
 */
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { EVENT_SOURCE } from '../contract/deployment';

/** A domain event on its way to the bus: the outbox item's id, its workspace, type, payload (JSON text) and time. */
export interface BusEvent {
  readonly outboxId: string;
  readonly workspace: string;
  readonly type: string;
  readonly payloadJson: string;
  readonly createdAt: string;
}

/** Where the relay puts domain events (EventBridge in the cloud, the publisher in-process locally). */
export interface DomainEventBus {
  /**
   * Puts `events` (at most {@link BUS_BATCH} at a time); answers, per event in order, null when
   * it was put or the reason it was not. Throws when the request itself failed (none was put).
   */
  put(events: readonly BusEvent[]): Promise<(string | null)[]>;
}

/** Entries of one PutEvents request (EventBridge's limit). */
export const BUS_BATCH = 10;

/**
 * An event's `detail`: `{workspace, outboxId, payload}`, the payload spliced in as the JSON text
 * it was written as (never parsed and printed again). `outboxId` is the event's own id: EventBridge
 * gives every put a new event id, so the publisher derives deliveries from this one.
 */
export function busEventDetail(event: BusEvent): string {
  return `{"workspace":${JSON.stringify(event.workspace)},"outboxId":${JSON.stringify(event.outboxId)},"payload":${event.payloadJson}}`;
}

/** A bus that puts `{source: webhooks.service, detail-type: type, detail, time: createdAt}` with PutEvents. */
export function eventBridgeBus(client: EventBridgeClient, busName: string): DomainEventBus {
  return {
    async put(events) {
      if (events.length > BUS_BATCH) throw new RangeError(`PutEvents takes at most ${BUS_BATCH} entries`);
      // Loaded on first use, not at cold start (docs/architecture.md#lambda-bundles).
      const { PutEventsCommand } = await import('@aws-sdk/client-eventbridge');
      const out = await client.send(
        new PutEventsCommand({
          Entries: events.map((e) => ({
            EventBusName: busName,
            Source: EVENT_SOURCE,
            DetailType: e.type,
            Detail: busEventDetail(e),
            Time: new Date(e.createdAt),
          })),
        }),
      );
      // One result per entry, in order: an ErrorCode marks an entry EventBridge did not put.
      return events.map((_, i) => {
        const entry = out.Entries?.[i];
        if (!entry) return 'no result for the entry';
        return entry.ErrorCode ? `${entry.ErrorCode}: ${entry.ErrorMessage ?? ''}` : null;
      });
    },
  };
}

/** Puts one event as a producer would (the admin CLI's `publish --bus`): no outbox id, so its deliveries derive from EventBridge's id. */
export interface DomainEventSink {
  emit(workspace: string, type: string, payload: unknown): Promise<void>;
}

/** A sink that puts `{detail-type: type, detail: {workspace, payload}}` on a bus. */
export function eventBridgeSink(client: EventBridgeClient, busName: string): DomainEventSink {
  return {
    async emit(workspace, type, payload) {
      const { PutEventsCommand } = await import('@aws-sdk/client-eventbridge');
      const out = await client.send(
        new PutEventsCommand({
          Entries: [{ EventBusName: busName, Source: EVENT_SOURCE, DetailType: type, Detail: JSON.stringify({ workspace, payload }) }],
        }),
      );
      if (out.FailedEntryCount) throw new Error(`EventBridge refused ${type}: ${out.Entries?.[0]?.ErrorMessage ?? 'unknown error'}`);
    },
  };
}
