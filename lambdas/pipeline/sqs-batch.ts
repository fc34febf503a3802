/**
 * The SQS batch handler of the pipeline's queue consumers (the dispatchers of both lanes and the
 * dead-letter consumer): a batch's records are handled concurrently (Powertools batch) and
 * reported failed one by one (ReportBatchItemFailures); after them, what they recorded is added
 * to the health counters in one write per key (docs/architecture.md#health-counters), and the
 * invocation's metrics are written in one flush (docs/operations.md).
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { MetricsRecorder } from '../contract/metrics';
import type { TableContext } from '../store/client';
import { BatchHealth } from './batch-health';

/** An SQS-triggered Lambda handler reporting partial batch failures. */
export type SqsBatchHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/** Where the pipeline's consumers log (Powertools' logger fits). */
export interface ConsumerLog {
  info(message: string, attributes: Record<string, unknown>): void;
  warn(message: string, attributes: Record<string, unknown>): void;
  error(message: string, attributes: Record<string, unknown>): void;
}

/** One invocation's state, shared by its records: its health tally and its metrics. */
export interface BatchRun {
  readonly health: BatchHealth;
  readonly metrics: MetricsRecorder;
}

/** Handles one record; a throw reports it failed (the queue hands it out again). */
type RecordHandler = (record: SQSRecord) => Promise<void>;

/** Starts a batch (whatever its records share is prepared here) and gives the handler of its records. */
export type BatchConsumer = (records: readonly SQSRecord[], run: BatchRun) => Promise<RecordHandler>;

/** Adapters of a consumer's batches. */
export interface SqsBatchAdapters {
  /** The table of the health counters. */
  readonly table: () => TableContext;
  /** One invocation's metrics, written by `flush`. */
  readonly metrics: () => MetricsRecorder & { flush(): void };
  readonly log: Pick<ConsumerLog, 'error'>;
}

/** The SQS handler of `consumer`. */
export function sqsBatchHandler(adapters: SqsBatchAdapters, consumer: BatchConsumer): SqsBatchHandler {
  return async function handler(event: SQSEvent, context: Context): Promise<SQSBatchResponse> {
    // One processor, health tally and metrics buffer per invocation: they hold the batch's state.
    const metrics = adapters.metrics();
    const run: BatchRun = { health: new BatchHealth(), metrics };
    try {
      const handle = await consumer(event.Records, run);
      const response = await processPartialResponse(event, (record: SQSRecord) => handle(record), new BatchProcessor(EventType.SQS), {
        context,
        processInParallel: true,
        throwOnFullBatchFailure: false,
      });
      await flushHealth(adapters, run.health);
      return response;
    } finally {
      metrics.flush();
    }
  };
}

/** Counts are best effort: a failed write loses this batch's counts, never a delivery (docs/behaviour.md#endpoint-health). */
async function flushHealth(adapters: SqsBatchAdapters, health: BatchHealth): Promise<void> {
  const observations = health.size;
  try {
    await health.flush(adapters.table());
  } catch (error) {
    adapters.log.error('Health counts of a batch were not written', { observations, error });
  }
}
