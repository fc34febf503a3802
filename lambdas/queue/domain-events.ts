/** The service's own domain events: the port, and its EventBridge adapter (the local stack injects its own). */
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { EVENT_SOURCE } from '../contract/deployment';

/** Where the service's own domain events go (EventBridge in the cloud, the publisher in-process locally). */
export interface DomainEventSink {
  /** Best effort, after persistence: a failure is logged, never the caller's. */
  emit(workspace: string, type: string, payload: unknown): Promise<void>;
}

/** A sink that puts `{detail-type: type, detail: {workspace, payload}}` on a bus. */
export function eventBridgeSink(client: EventBridgeClient, busName: string): DomainEventSink {
  return {
    async emit(workspace, type, payload) {
      // Loaded on first use, not at cold start (docs/architecture.md#lambda-bundles).
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

/** A sink that drops events (no bus bound). */
export const noEventSink: DomainEventSink = { emit: async () => undefined };
