/** The service's own domain events: EventBridge in the cloud, a local binding in the local stack. */
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import type { DomainEventSink } from '../operations/context';

/** EventBridge `source` of the service's own events. */
export const EVENT_SOURCE = 'webhooks.service';

/** A sink that puts `{detail-type: type, detail: {workspace, payload}}` on a bus. */
export function eventBridgeSink(client: EventBridgeClient, busName: string): DomainEventSink {
  return {
    async emit(workspace, type, payload) {
      const out = await client.send(
        new PutEventsCommand({ Entries: [{ EventBusName: busName, Source: EVENT_SOURCE, DetailType: type, Detail: JSON.stringify({ workspace, payload }) }] }),
      );
      if (out.FailedEntryCount) throw new Error(`EventBridge refused ${type}: ${out.Entries?.[0]?.ErrorMessage ?? 'unknown error'}`);
    },
  };
}

/** A sink that drops events (no bus bound). */
export const noEventSink: DomainEventSink = { emit: async () => undefined };
