/**
 * The pipeline consumers' shared SQS batch handler (lambdas/pipeline/sqs-batch.ts), with
 * Powertools batch and DynamoDB Local: a batch is planned once, its records run concurrently and
 * fail one by one (ReportBatchItemFailures), their health counts are written once after them
 * (docs/architecture.md#health-counters), best effort, and the invocation's metrics are flushed
 * once, whatever happens.
 */
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lambdaContext } from '../../bin/local/lambda-loader';
import type { HealthObservation } from '../../lambdas/domain/delivery-health';
import type { MetricDimensionValues, MetricKey } from '../../lambdas/contract/metrics';
import { sqsBatchHandler, type BatchConsumer, type SqsBatchAdapters } from '../../lambdas/pipeline/sqs-batch';
import type { TableContext } from '../../lambdas/store/client';
import { readEndpointHours } from '../../lambdas/store/health-counters';
import { freshTable } from '../helpers/table';

let table: Awaited<ReturnType<typeof freshTable>>;

beforeAll(async () => {
  table = await freshTable();
});
afterAll(async () => {
  await table?.drop();
});

function event(...ids: string[]): SQSEvent {
  return {
    Records: ids.map((id): SQSRecord => ({
      messageId: id,
      receiptHandle: `rh-${id}`,
      body: JSON.stringify({ id }),
      attributes: { ApproximateReceiveCount: '1', SentTimestamp: '0', SenderId: 'x', ApproximateFirstReceiveTimestamp: '0' },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:local:0:q',
      awsRegion: 'local',
    })),
  };
}

/** Adapters writing to `tableOf()`, counting metric flushes and logging errors. */
function adapters(tableOf: () => TableContext = () => table) {
  const flushes: { key: MetricKey; value: number }[][] = [];
  const errors: { message: string; attributes: Record<string, unknown> }[] = [];
  const made: SqsBatchAdapters = {
    table: tableOf,
    metrics: () => {
      const added: { key: MetricKey; value: number }[] = [];
      return {
        add<K extends MetricKey>(key: K, value: number, _dimensions: MetricDimensionValues<K>) {
          added.push({ key, value });
        },
        flush: () => void flushes.push(added),
      };
    },
    log: { error: (message, attributes) => void errors.push({ message, attributes }) },
  };
  return { adapters: made, flushes, errors };
}

const observed = (endpointId: string): HealthObservation => ({
  workspace: 'batch-ws',
  endpointId,
  http: true,
  outcome: 'delivered',
  timestamp: new Date().toISOString(),
  durationMs: 40,
  responseStatus: 204,
  failureReason: null,
});

describe('sqsBatchHandler', () => {
  it('plans once with every record, runs the records concurrently and reports only the ones that threw', async () => {
    const a = adapters();
    const planned: string[][] = [];
    const started: string[] = [];
    let release!: () => void;
    const allStarted = new Promise<void>((resolve) => (release = resolve));
    const consumer: BatchConsumer = async (records) => {
      planned.push(records.map((r) => r.messageId));
      return async (record) => {
        started.push(record.messageId);
        if (started.length === 3) release();
        // Each record waits for all three to have started: a sequential batch would never get here.
        await allStarted;
        if (record.messageId === 'b') throw new Error('b fails');
      };
    };
    const response = await sqsBatchHandler(a.adapters, consumer)(event('a', 'b', 'c'), lambdaContext('test', 'req-1'));
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'b' }] });
    expect(planned).toEqual([['a', 'b', 'c']]);
    expect(a.flushes).toHaveLength(1);
  });

  it('writes what the records recorded to the health counters after them, and flushes their metrics once', async () => {
    const a = adapters();
    const endpointId = 'whe_01J0000000000000000000HB01';
    const consumer: BatchConsumer = async (_records, run) => async () => {
      run.health.add(observed(endpointId));
      run.metrics.add('attempts', 1, { outcome: 'delivered' });
    };
    await sqsBatchHandler(a.adapters, consumer)(event('a', 'b'), lambdaContext('test', 'req-2'));
    const hours = await readEndpointHours(table, endpointId, '0', '~');
    expect(hours.map((h) => [h.counts.attempts, h.counts.delivered])).toEqual([[2, 2]]);
    expect(a.flushes).toEqual([
      [
        { key: 'attempts', value: 1 },
        { key: 'attempts', value: 1 },
      ],
    ]);
  });

  it('a failed health write loses the counts, never the batch: logged, and the response stands', async () => {
    const failing = { ...table, tableName: 'no-such-table' };
    const a = adapters(() => failing);
    const consumer: BatchConsumer = async (_records, run) => async (record) => {
      run.health.add(observed('whe_01J0000000000000000000HB02'));
      if (record.messageId === 'b') throw new Error('b fails');
    };
    const response = await sqsBatchHandler(a.adapters, consumer)(event('a', 'b'), lambdaContext('test', 'req-3'));
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'b' }] });
    expect(a.errors).toEqual([
      { message: 'Health counts of a batch were not written', attributes: { observations: 2, error: expect.any(Error) } },
    ]);
    expect(a.flushes).toHaveLength(1);
  });

  it('a batch whose planning throws fails the invocation (every record comes back), its metrics still flushed', async () => {
    const a = adapters();
    const consumer: BatchConsumer = async (_records, run) => {
      run.metrics.add('laneDeferrals', 1, {});
      throw new Error('planning failed');
    };
    await expect(sqsBatchHandler(a.adapters, consumer)(event('a'), lambdaContext('test', 'req-4'))).rejects.toThrow('planning failed');
    expect(a.flushes).toEqual([[{ key: 'laneDeferrals', value: 1 }]]);
  });
});
