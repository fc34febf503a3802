/**
 * The outbox relay (docs/architecture.md#outbox): puts the domain events of the outbox table's
 * stream on the bus, in stream order, at least once. A batch's first record that is not put (the
 * request failed, or EventBridge refused its entry) and every record after it are reported as
 * failed (ReportBatchItemFailures: the event source mapping retries from the first one, splitting
 * the batch, and after its retries sends the records' positions to the on-failure queue). A retry
 * may put an event again: each carries its outbox id, from which the publisher derives its
 * deliveries, so subscribers get it once per id.
 */
import { BUS_BATCH, type DomainEventBus } from '../queue/domain-events';
import { outboxEventFromImage, type OutboxEvent } from '../store/outbox';

/** One stream record as the relay reads it (the `aws-lambda` DynamoDBRecord's fields it uses). */
export interface OutboxStreamRecord {
  readonly eventName?: string;
  readonly dynamodb?: {
    readonly SequenceNumber?: string;
    readonly NewImage?: Readonly<Record<string, { readonly S?: string } | undefined>>;
  };
}

/** What the relay answers the event source mapping: the stream positions to retry from. */
export interface RelayResult {
  readonly batchItemFailures: { readonly itemIdentifier: string }[];
}

/** Where the relay reports (Powertools' logger fits). */
interface RelayLog {
  warn(message: string, attributes: Record<string, unknown>): void;
  error(message: string, attributes: Record<string, unknown>): void;
}

/** The relay's adapters. */
export interface RelayDeps {
  readonly bus: DomainEventBus;
  readonly log: RelayLog;
}

/** Relays a batch of stream records; answers the positions Lambda retries from. */
export async function relayOutboxRecords(deps: RelayDeps, records: readonly OutboxStreamRecord[]): Promise<RelayResult> {
  const events: { readonly event: OutboxEvent; readonly sequenceNumber: string }[] = [];
  for (const record of records) {
    // The event source's filter passes inserts only: a TTL removal or any other change is no event.
    if (record.eventName !== 'INSERT') continue;
    const sequenceNumber = record.dynamodb?.SequenceNumber ?? '';
    const event = outboxEventFromImage(record.dynamodb?.NewImage);
    if (!event) {
      // Not an outbox item: no retry can make it one, so it is logged and passed over.
      deps.log.error('Outbox record is not an event', { sequenceNumber });
      continue;
    }
    events.push({ event, sequenceNumber });
  }
  for (let start = 0; start < events.length; start += BUS_BATCH) {
    const chunk = events.slice(start, start + BUS_BATCH);
    let failedAt = -1;
    try {
      const results = await deps.bus.put(chunk.map((c) => c.event));
      failedAt = results.findIndex((r) => r !== null);
      if (failedAt >= 0)
        deps.log.warn('EventBridge refused an outbox event: retried from it', {
          outboxId: chunk[failedAt]!.event.outboxId,
          reason: results[failedAt],
        });
    } catch (error) {
      failedAt = 0;
      deps.log.warn('PutEvents failed: the batch is retried from its first event not put', {
        outboxId: chunk[0]!.event.outboxId,
        error: error,
      });
    }
    // Stream order: everything from the first event not put is retried (what came after it may be put again).
    if (failedAt >= 0) return { batchItemFailures: [{ itemIdentifier: chunk[failedAt]!.sequenceNumber }] };
  }
  return { batchItemFailures: [] };
}
