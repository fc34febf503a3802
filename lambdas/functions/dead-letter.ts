/**
 * Lambda entry of the dead-letter consumer (the DLQ's event source). A delivery that still has
 * retries (its message was given up by the queue, not spent) is sent back to the delivery queue
 * as a new message with its requeue count raised, a bounded number of times
 * (docs/behaviour.md#dead-lettering); lambdas/pipeline/dead-letter.ts decides and marks.
 */
import { adapterTimeScale, defaultRuntime, invocationMetrics, logger, queueFromEnv } from '../composition/runtime';
import { ENV } from '../contract/deployment';
import { deadLetterBatch } from '../pipeline/dead-letter';
import { sqsBatchHandler } from '../pipeline/sqs-batch';

/** The SQS handler. */
export const handler = sqsBatchHandler(
  { table: () => defaultRuntime().deps.table, metrics: invocationMetrics, log: logger },
  deadLetterBatch({
    deps: () => {
      const { deps } = defaultRuntime();
      return { table: deps.table, now: deps.now, timeScale: adapterTimeScale() };
    },
    deliveries: queueFromEnv(process.env, ENV.DELIVERY_QUEUE_URL),
    log: logger,
  }),
);
