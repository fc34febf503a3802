/** The local queues' DynamoDB Local store: what a queue keeps there is what a restarted queue takes up. */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it, inject } from 'vitest';
import { createTableContext, type TableContext } from '#lambdas/composition/tools';
import { dynamoDbQueueStore, ensureQueueTable, memoryQueueStore, type QueueStore } from '../../bin/local/durable-queue-store';
import { InProcessQueue } from '../../bin/local/in-process-queue';

let table: TableContext;
beforeAll(async () => {
  table = createTableContext({ tableName: 'unused', endpoint: inject('dynamoDbEndpoint') });
  await ensureQueueTable(table.doc);
  // A second call finds the table.
  await ensureQueueTable(table.doc);
});
afterAll(() => table.doc.destroy());

it('keeps the latest state of each message, in the order written, and forgets deleted ones', async () => {
  const store = dynamoDbQueueStore(table.doc, `ns-${randomUUID()}`);
  const message = { messageId: 'm1', body: '{"deliveryId":"x"}', sentAt: 1, receiveCount: 0, visibleAt: 10, receiptHandle: null };
  // Written in one turn: put, received, visibility changed; another message put then deleted.
  await Promise.all([
    store.put('q', message),
    store.put('q', { ...message, receiveCount: 1, visibleAt: 20, receiptHandle: 'r1' }),
    store.put('q', { ...message, receiveCount: 1, visibleAt: 30, receiptHandle: 'r1' }),
    store.put('q', { ...message, messageId: 'm2' }),
    store.delete('q', 'm2'),
    store.put('other', { ...message, messageId: 'm3' }),
  ]);
  expect(await store.load('q')).toEqual([{ ...message, receiveCount: 1, visibleAt: 30, receiptHandle: 'r1' }]);
  expect((await store.load('other')).map((m) => m.messageId)).toEqual(['m3']);
  // Another stack's namespace sees none of them.
  expect(await dynamoDbQueueStore(table.doc, `ns-${randomUUID()}`).load('q')).toEqual([]);
});

it('a restarted queue takes up more than one page of kept messages', async () => {
  const namespace = `ns-${randomUUID()}`;
  const body = 'x'.repeat(20_000);
  const first = new InProcessQueue({ name: 'q', store: dynamoDbQueueStore(table.doc, namespace) });
  await Promise.all(Array.from({ length: 120 }, () => first.sendBody(body)));
  const second = new InProcessQueue({ name: 'q', store: dynamoDbQueueStore(table.doc, namespace) });
  // 120 items of 20 kB: more than one 1 MB Query page.
  expect(await second.restore()).toBe(120);
  expect(second.depth).toBe(120);
});

/** Pushes `n` messages through a queue with a no-op consumer; returns the milliseconds it took. */
async function throughput(store: QueueStore, n: number): Promise<number> {
  const q = new InProcessQueue({ name: 'bench', store, timeScale: 1000 });
  let received = 0;
  q.consume(async (e) => ((received += e.Records.length), { batchItemFailures: [] }));
  const started = performance.now();
  await Promise.all(Array.from({ length: n }, (_, i) => q.send([{ deliveryId: `whd_${i}` }])));
  await expect.poll(() => q.depth, { timeout: 60_000, interval: 5 }).toBe(0);
  const ms = performance.now() - started;
  await q.stop();
  expect(received).toBeGreaterThanOrEqual(n);
  return ms;
}

it('pushes 2,000 messages through with a no-op consumer, every one received and none left kept (time logged, not asserted)', async () => {
  const memory = await throughput(memoryQueueStore(), 2_000);
  const store = dynamoDbQueueStore(table.doc, `ns-${randomUUID()}`);
  const dynamo = await throughput(store, 2_000);
  console.log(`2,000 messages, no-op consumer: memory store ${memory.toFixed(0)} ms, DynamoDB Local store ${dynamo.toFixed(0)} ms`);
  expect(await store.load('bench')).toEqual([]);
}, 120_000);
