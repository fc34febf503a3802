/**
 * Lambda entry of the publisher: the target of the domain-events bus rule.
 * A producer puts `detail-type` = the event type, `detail` = `{workspace, payload}`; the outbox
 * relay adds the event's own id, `outboxId` (docs/architecture.md#outbox).
 * Each published event counts its pending and held deliveries (docs/operations.md).
 */
import type { EventBridgeEvent } from 'aws-lambda';
import { defaultRuntime, invocationMetrics, logger } from '../composition/runtime';
import { busEventToPublish, publishBusEvent, type PublishResult } from '../pipeline/publisher';

/** Publishes one bus event; an invalid event is logged and dropped (retrying cannot fix it). */
export async function handler(
  event: EventBridgeEvent<string, { workspace?: unknown; payload?: unknown; outboxId?: unknown }>,
): Promise<PublishResult> {
  const { deps } = defaultRuntime();
  const metrics = invocationMetrics();
  try {
    return await publishBusEvent(deps, busEventToPublish(event), { log: logger, metrics });
  } finally {
    metrics.flush();
  }
}
