/**
 * Lambda entry of the dispatcher (SQS event source, ReportBatchItemFailures) of the delivery queue:
 * the fast lane where the stage has a slow lane (`ENV.SLOW_DELIVERY_QUEUE_URL` set), else the only one
 * (docs/behaviour.md#delivery-lanes); `slow-dispatcher.ts` is the slow lane's. Its batches and
 * their settlement are lambdas/pipeline/sqs-settlement.ts (docs/architecture.md#retries-and-visibility).
 */
import {
  adapterTimeScale,
  defaultRuntime,
  delayerFromEnv,
  invocationMetrics,
  logger,
  queueFromEnv,
  secretSealerFromEnv,
} from '../composition/runtime';
import { ENV } from '../contract/deployment';
import type { LaneRole } from '../domain/delivery-lanes';
import { systemResolver, type DispatchDeps } from '../pipeline/dispatcher';
import { httpSender } from '../pipeline/http-sender';
import { sqsBatchHandler, type SqsBatchHandler } from '../pipeline/sqs-batch';
import { dispatcherBatch } from '../pipeline/sqs-settlement';

/** The adapters of one record's dispatch (its batch adds its endpoint reader). */
function dispatchDeps(): Omit<DispatchDeps, 'endpoint'> {
  const { table, now, urlPolicy } = defaultRuntime().deps;
  return {
    table,
    now,
    urlPolicy,
    secrets: secretSealerFromEnv(),
    sender: httpSender,
    resolve: systemResolver,
    log: logger,
    timeScale: adapterTimeScale(),
  };
}

/**
 * The SQS handler of a dispatcher in `lane`. Its queue (for the backoff's visibility changes) is
 * the slow lane's for `slow`, else the delivery queue.
 */
export function dispatcherHandler(lane: LaneRole): SqsBatchHandler {
  const ownQueue = lane === 'slow' ? ENV.SLOW_DELIVERY_QUEUE_URL : ENV.DELIVERY_QUEUE_URL;
  const queues = {
    delayer: delayerFromEnv(process.env, ownQueue),
    ownLane: queueFromEnv(process.env, ownQueue),
    slowLane: queueFromEnv(process.env, ENV.SLOW_DELIVERY_QUEUE_URL),
    deadLetters: queueFromEnv(process.env, ENV.DEAD_LETTER_QUEUE_URL),
  };
  const table = () => defaultRuntime().deps.table;
  const batch = dispatcherBatch(lane, { queues, log: logger, table, dispatch: dispatchDeps });
  return sqsBatchHandler({ table, metrics: invocationMetrics, log: logger }, batch);
}

/** The delivery queue's dispatcher: the fast lane where the stage has a slow lane, else the only lane. */
export const handler = dispatcherHandler(process.env[ENV.SLOW_DELIVERY_QUEUE_URL] ? 'fast' : 'only');
