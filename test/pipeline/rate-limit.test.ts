/**
 * The delivery rate per endpoint (docs/behaviour.md#delivery-rate-per-endpoint) held across both
 * lanes and two dispatchers at once: 200 events to an endpoint limited to 5 a second, half queued
 * in each lane, each lane consumed by its own dispatcher with concurrent batches (in-process queues
 * with SQS semantics, DynamoDB Local, a real loopback receiver). The receiver never sees a second
 * with more than 5; all 200 arrive, each with one attempt (a delivery held back spends nothing and
 * records nothing).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InProcessQueue } from '../../bin/local/in-process-queue';
import { lambdaContext } from '../../bin/local/lambda-loader';
import type { LaneRole } from '../../lambdas/domain/delivery-lanes';
import { createHttpSender } from '../../lambdas/pipeline/http-sender';
import { publishEvent } from '../../lambdas/pipeline/publisher';
import { sqsBatchHandler } from '../../lambdas/pipeline/sqs-batch';
import { dispatcherBatch } from '../../lambdas/pipeline/sqs-settlement';
import { getDelivery } from '../../lambdas/store/deliveries';
import { seedEndpoint, testCatalogue, testSealer } from '../helpers/pipeline';
import { scriptedReceiver } from '../helpers/scripted-receiver';
import { freshTable } from '../helpers/table';

let table: Awaited<ReturnType<typeof freshTable>>;
beforeAll(async () => {
  table = await freshTable();
});
afterAll(async () => {
  await table?.drop();
});

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
const noMetrics = () => ({ add: () => undefined, flush: () => undefined });

describe('an endpoint limited to 5 a second', () => {
  it('receives 200 events through two dispatchers, both lanes, never more than 5 in a second', { timeout: 180_000 }, async () => {
    const arrivals: number[] = [];
    const receiver = await scriptedReceiver((_req, res) => {
      arrivals.push(Date.now());
      res.writeHead(204).end();
    });
    const deadLetters = new InProcessQueue({ name: 'dlq' });
    const lanes = {
      fast: new InProcessQueue({ name: 'fast', maxConcurrency: 2, deadLetterQueue: deadLetters }),
      // Small slow-lane batches: its per-endpoint cap (2 a batch, the rest deferred 20 s) would otherwise, not the rate, set the pace.
      slow: new InProcessQueue({ name: 'slow', batchSize: 2, maxConcurrency: 2, deadLetterQueue: deadLetters }),
    };
    try {
      const endpoint = await seedEndpoint(table, { workspace: 'rate', url: receiver.url, options: { rateLimitPerSecond: 5 } });
      const ids: string[] = [];
      for (let i = 0; i < 200; i++) {
        const queue = i % 2 === 0 ? lanes.fast : lanes.slow;
        const { deliveryIds } = await publishEvent(
          { table, queue, eventTypes: testCatalogue, now: () => new Date() },
          { workspace: 'rate', type: 'order.shipped', payload: { orderId: `o-${i}` } },
        );
        ids.push(...deliveryIds);
      }
      expect(ids).toHaveLength(200);

      const dispatcher = (lane: Exclude<LaneRole, 'only'>) => {
        const own = lanes[lane];
        const handler = sqsBatchHandler(
          { table: () => table, metrics: noMetrics, log: quiet },
          dispatcherBatch(lane, {
            queues: { ownLane: own, delayer: own, slowLane: lanes.slow, deadLetters },
            log: quiet,
            table: () => table,
            dispatch: () => ({
              table,
              now: () => new Date(),
              sender: createHttpSender(),
              resolve: async () => [{ address: '127.0.0.1', family: 4 }],
              urlPolicy: { allowLoopback: true },
              secrets: testSealer,
            }),
          }),
        );
        own.consume((event) => handler(event, lambdaContext(`${lane}-dispatcher`, randomUUID())));
      };
      dispatcher('fast');
      dispatcher('slow');

      const started = Date.now();
      while (arrivals.length < 200 && Date.now() - started < 150_000) await new Promise((resolve) => setTimeout(resolve, 250));
      expect(arrivals).toHaveLength(200);

      const perSecond = new Map<number, number>();
      for (const at of arrivals) perSecond.set(Math.floor(at / 1000), (perSecond.get(Math.floor(at / 1000)) ?? 0) + 1);
      expect(Math.max(...perSecond.values())).toBeLessThanOrEqual(5);
      // Each arrived once, after one attempt: the waits cost no attempt and left no evidence.
      expect(new Set(receiver.seen.map((r) => r.headers['webhook-id'])).size).toBe(200);
      const states = await Promise.all(ids.map((id) => getDelivery(table, id)));
      expect(states.every((d) => d?.status === 'delivered' && d.attempts === 1 && d.endpointId === endpoint.endpointId)).toBe(true);
      expect(deadLetters.depth).toBe(0);
    } finally {
      await Promise.all([lanes.fast.stop(), lanes.slow.stop(), deadLetters.stop()]);
      await receiver.stop();
    }
  });
});
