/**
 * Adapters of a running function, built once per container from its
 * environment (cold start), then reused.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { deploymentCatalogue } from '../domain/configured-event-types';
import type { OperationDeps } from '../operations/context';
import { tableFromEnv } from '../store/client';
import { SQSClient } from '@aws-sdk/client-sqs';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { DeliveryQueue, MessageDelayer } from '../queue/delivery-queue';
import { eventBridgeSink, noEventSink } from '../queue/domain-events';
import { isLocalUrl, localBinding } from '../queue/local-bindings';
import { sqsDeliveryQueue, sqsMessageDelayer } from '../queue/sqs-delivery-queue';
import type { DomainEventSink } from '../operations/context';
import { rateLimiterFor, type RateLimiter } from './rate-limiter';

/** The service's logger (Powertools; `POWERTOOLS_*` env configures it). */
export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'webhooks' });

/** Everything a REST handler needs at run time. */
export interface Runtime {
  readonly deps: OperationDeps;
  readonly rateLimiter: RateLimiter;
}

/** Builds a runtime from environment variables. */
export function runtimeFromEnv(env: NodeJS.ProcessEnv = process.env): Runtime {
  const table = tableFromEnv(env);
  const rateTable = env.RATE_LIMIT_TABLE_NAME ? { ...table, tableName: env.RATE_LIMIT_TABLE_NAME } : undefined;
  return {
    deps: {
      table,
      now: () => new Date(),
      eventTypes: deploymentCatalogue(),
      // Local-development switch (DESIGN §6); the deployed stack never sets it.
      urlPolicy: { allowLoopback: env.ALLOW_LOOPBACK_TARGETS === 'true' },
      queue: queueFromEnv(env),
      events: eventsFromEnv(env),
    },
    rateLimiter: rateLimiterFor(rateTable, env.RATE_LIMITS),
  };
}

let cached: Runtime | undefined;

/** The container's runtime, built on first use. */
export function defaultRuntime(): Runtime {
  cached ??= runtimeFromEnv();
  return cached;
}

/** The delivery queue of `DELIVERY_QUEUE_URL` (SQS, or the local stack's binding); created on first send. */
export function queueFromEnv(env: NodeJS.ProcessEnv = process.env): DeliveryQueue {
  const url = env.DELIVERY_QUEUE_URL;
  let queue: DeliveryQueue | undefined;
  return {
    send(messages) {
      if (!url) throw new Error('DELIVERY_QUEUE_URL is not set');
      queue ??= isLocalUrl(url) ? localBinding<DeliveryQueue>(url) : sqsDeliveryQueue(new SQSClient({}), url);
      return queue.send(messages);
    },
  };
}

/** The domain-event sink of `EVENT_BUS_NAME` (EventBridge, or the local stack's binding); none when unset. */
export function eventsFromEnv(env: NodeJS.ProcessEnv = process.env): DomainEventSink {
  const bus = env.EVENT_BUS_NAME;
  if (!bus) return noEventSink;
  let sink: DomainEventSink | undefined;
  return {
    async emit(workspace, type, payload) {
      try {
        sink ??= isLocalUrl(bus) ? localBinding<DomainEventSink>(bus) : eventBridgeSink(new EventBridgeClient({}), bus);
        await sink.emit(workspace, type, payload);
      } catch (error) {
        // Best effort, after persistence: the change stands; the event is logged as lost.
        logger.warn('Domain event not emitted', { workspace, type, error: error as Error });
      }
    },
  };
}

/** The retry delayer of `DELIVERY_QUEUE_URL` (ChangeMessageVisibility, or the local queue). */
export function delayerFromEnv(env: NodeJS.ProcessEnv = process.env): MessageDelayer {
  const url = env.DELIVERY_QUEUE_URL;
  let delayer: MessageDelayer | undefined;
  return {
    delay(receiptHandle, seconds) {
      if (!url) throw new Error('DELIVERY_QUEUE_URL is not set');
      delayer ??= isLocalUrl(url) ? localBinding<MessageDelayer>(url) : sqsMessageDelayer(new SQSClient({}), url);
      return delayer.delay(receiptHandle, seconds);
    },
  };
}
