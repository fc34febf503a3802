/**
 * Lambda entry of the publisher: the target of the domain-events bus rule.
 * A producer puts `detail-type` = the event type, `detail` = `{workspace, payload}`.
 * Each published event counts its pending and held deliveries (docs/operations.md).
 */
import type { EventBridgeEvent } from 'aws-lambda';
import { isAppError } from '../contract/errors';
import { defaultRuntime, invocationMetrics, logger, queueFromEnv } from '../composition/runtime';
import { publishEvent, type PublishResult } from '../pipeline/publisher';

/** The slow lane (docs/behaviour.md#delivery-lanes), where the stage has one. */
const slowQueue = process.env.SLOW_DELIVERY_QUEUE_URL ? queueFromEnv(process.env, 'SLOW_DELIVERY_QUEUE_URL') : undefined;

/** Publishes one bus event; an invalid event is logged and dropped (retrying cannot fix it). */
export async function handler(event: EventBridgeEvent<string, { workspace?: unknown; payload?: unknown }>): Promise<PublishResult> {
  const { deps } = defaultRuntime();
  const metrics = invocationMetrics();
  try {
    const workspace = typeof event.detail?.workspace === 'string' ? event.detail.workspace : '';
    const result = await publishEvent(
      { ...deps, slowQueue },
      { id: event.id, time: event.time, workspace, type: event['detail-type'], payload: event.detail?.payload },
    );
    if (!result.queued)
      logger.warn('Rows written, enqueue failed: the stuck-pending repair will send them', { deliveryIds: result.deliveryIds });
    // Per event at DEBUG: the counts are metrics, and an INFO line per event is most of the log bill (docs/scaling.md).
    else
      logger.debug('Published', {
        type: event['detail-type'],
        workspace,
        deliveries: result.deliveryIds.length,
        held: result.heldDeliveryIds.length,
      });
    metrics.add('deliveriesPublished', result.deliveryIds.length, {});
    metrics.add('deliveriesHeld', result.heldDeliveryIds.length, {});
    return result;
  } catch (error) {
    if (isAppError(error)) {
      // The rule takes the whole bus, so other producers' types land here too: a warning, not an error.
      logger.warn('Refused an event', { id: event.id, type: event['detail-type'], tag: error.tag, detail: error.detail });
      return { deliveryIds: [], heldDeliveryIds: [], queued: true };
    }
    throw error;
  } finally {
    metrics.flush();
  }
}
