/**
 * Lambda entry of the publisher: the target of the domain-events bus rule.
 * A producer puts `detail-type` = the event type, `detail` = `{workspace, payload}`.
 * Each published event counts its pending and held deliveries (docs/operations.md).
 */
import type { EventBridgeEvent } from 'aws-lambda';
import { defaultRuntime, invocationMetrics, logger } from '../composition/runtime';
import { publishBusEvent, type PublishResult } from '../pipeline/publisher';

/** Publishes one bus event; an invalid event is logged and dropped (retrying cannot fix it). */
export async function handler(event: EventBridgeEvent<string, { workspace?: unknown; payload?: unknown }>): Promise<PublishResult> {
  const { deps } = defaultRuntime();
  const metrics = invocationMetrics();
  try {
    const workspace = typeof event.detail?.workspace === 'string' ? event.detail.workspace : '';
    const published = { id: event.id, time: event.time, workspace, type: event['detail-type'], payload: event.detail?.payload };
    return await publishBusEvent(deps, published, { log: logger, metrics });
  } finally {
    metrics.flush();
  }
}
