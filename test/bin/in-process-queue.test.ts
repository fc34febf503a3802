/** The local queue keeps the SQS semantics the pipeline relies on. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { memoryQueueStore } from '../../bin/local/durable-queue-store';
import { InProcessQueue } from '../../bin/local/in-process-queue';

const queues: InProcessQueue[] = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(queues.splice(0).map((q) => q.stop()));
});
function queue(options: ConstructorParameters<typeof InProcessQueue>[0]) {
  const q = new InProcessQueue(options);
  queues.push(q);
  return q;
}
const id = (i: number) => `whd_01JD2Y9P0R6S8T1V3W5X7Y${String(i).padStart(4, '0')}`;
/** Up to 4 s, looked at every 10 ms. */
const EVENTUALLY = { timeout: 4_000, interval: 10 };

it('batches of at most 25, at most 4 in flight, partial failures stay, others are deleted', async () => {
  const q = queue({ name: 'q', timeScale: 1000 });
  let inFlight = 0;
  let maxInFlight = 0;
  const sizes: number[] = [];
  const seen = new Map<string, number>();
  q.consume(async (event) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    sizes.push(event.Records.length);
    await new Promise((r) => setTimeout(r, 20));
    inFlight--;
    const failures = event.Records.filter((r) => {
      const n = (seen.get(r.body) ?? 0) + 1;
      seen.set(r.body, n);
      return r.body.includes('0007') && n < 3;
    });
    // As the dispatcher does: a failed record is made visible again after its backoff (here 0).
    for (const r of failures) await q.delay(r.receiptHandle, 0);
    return { batchItemFailures: failures.map((r) => ({ itemIdentifier: r.messageId })) };
  });
  await q.send(Array.from({ length: 120 }, (_, i) => ({ deliveryId: id(i) })));
  await expect.poll(() => q.depth, EVENTUALLY).toBe(0);
  expect(Math.max(...sizes)).toBeLessThanOrEqual(25);
  expect(maxInFlight).toBeLessThanOrEqual(4);
  expect(seen.get(JSON.stringify({ deliveryId: id(7) }))).toBe(3);
});

it('redrives to the dead-letter queue after 7 receives, with the ApproximateReceiveCount SQS would give', async () => {
  const dlq = queue({ name: 'dlq', timeScale: 1000 });
  const dead: string[] = [];
  dlq.consume(async (e) => (dead.push(...e.Records.map((r) => r.body)), { batchItemFailures: [] }));
  const q = queue({ name: 'q', timeScale: 1000, deadLetterQueue: dlq, maxReceiveCount: 7 });
  const counts: number[] = [];
  q.consume(async (e) => {
    counts.push(...e.Records.map((r) => Number(r.attributes.ApproximateReceiveCount)));
    for (const r of e.Records) await q.delay(r.receiptHandle, 30);
    return { batchItemFailures: e.Records.map((r) => ({ itemIdentifier: r.messageId })) };
  });
  await q.send([{ deliveryId: id(1) }]);
  await expect.poll(() => dead.length, EVENTUALLY).toBe(1);
  expect(counts).toEqual([1, 2, 3, 4, 5, 6, 7]);
  expect(JSON.parse(dead[0]!)).toEqual({ deliveryId: id(1) });
});

it('holds a message sent with a delay until the delay (divided by the time scale) is over, as SQS DelaySeconds does', async () => {
  const q = queue({ name: 'jobs', timeScale: 10, batchSize: 1 });
  const received: { body: string; at: number }[] = [];
  q.consume(async (e) => (received.push(...e.Records.map((r) => ({ body: r.body, at: Date.now() }))), { batchItemFailures: [] }));
  const sentAt = Date.now();
  await q.sendBody('{"jobId":"later"}', 3);
  await q.sendBody('{"jobId":"now"}');
  await expect.poll(() => received.length, EVENTUALLY).toBe(2);
  expect(received.map((r) => r.body)).toEqual(['{"jobId":"now"}', '{"jobId":"later"}']);
  // 3 s at time scale 10: not before 300 ms.
  expect(received[1]!.at - sentAt).toBeGreaterThanOrEqual(300);
});

describe('a queue restored from its store after its process died', () => {
  /** A consumer that never answers: the process dies while the batch is in flight. */
  const dies = () => new Promise<never>(() => undefined);
  /** Kills a queue: it stops polling, its batch in flight never settles. */
  const kill = (q: InProcessQueue) => void q.stop();
  /** The clock jumps `ms` ahead (only Date: the queue's timers keep running). */
  const later = (ms: number) => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + ms);
  };

  it('delivers what was queued, delayed or in flight, the in-flight one after its visibility timeout with its receive count', async () => {
    const store = memoryQueueStore();
    const first = new InProcessQueue({ name: 'q', store, timeScale: 1000, batchSize: 1, maxBatchingWindowSeconds: 0 });
    const firstSeen: string[] = [];
    first.consume(async (e) => (firstSeen.push(...e.Records.map((r) => r.body)), dies()));
    await first.sendBody('in-flight');
    await expect.poll(() => firstSeen, EVENTUALLY).toEqual(['in-flight']);
    await first.sendBody('queued');
    await first.sendBody('delayed', 100);
    kill(first);

    const second = queue({ name: 'q', store, timeScale: 1000, batchSize: 1, maxBatchingWindowSeconds: 0 });
    expect(await second.restore()).toBe(3);
    const seen: { body: string; count: string }[] = [];
    second.consume(async (e) => {
      seen.push(...e.Records.map((r) => ({ body: r.body, count: r.attributes.ApproximateReceiveCount })));
      return { batchItemFailures: [] };
    });
    await expect.poll(() => seen, EVENTUALLY).toEqual([{ body: 'queued', count: '1' }]);
    // The in-flight message stays hidden for its visibility timeout (never under 10 s), the delayed one for 100 s / 1000.
    await new Promise((r) => setTimeout(r, 300));
    expect(seen.map((s) => s.body)).toEqual(['queued', 'delayed']);
    later(11_000);
    await expect.poll(() => seen.length, EVENTUALLY).toBe(3);
    expect(seen[2]).toEqual({ body: 'in-flight', count: '2' });
    await expect.poll(() => second.depth, EVENTUALLY).toBe(0);
    expect(await store.load('q')).toEqual([]);
  });

  it('redrives to the dead-letter queue after maxReceiveCount receives counted across restarts', async () => {
    const store = memoryQueueStore();
    const options = { name: 'q', store, timeScale: 1000, maxReceiveCount: 2 };
    const dlq = queue({ name: 'dlq', store, timeScale: 1000 });
    const dead: string[] = [];
    dlq.consume(async (e) => (dead.push(...e.Records.map((r) => r.body)), { batchItemFailures: [] }));
    const counts: string[] = [];
    const run = async (restore: boolean) => {
      const q = new InProcessQueue({ ...options, deadLetterQueue: dlq });
      if (restore) await q.restore();
      q.consume(async (e) => (counts.push(...e.Records.map((r) => r.attributes.ApproximateReceiveCount)), dies()));
      return q;
    };
    const first = await run(false);
    await first.sendBody('poison');
    await expect.poll(() => counts, EVENTUALLY).toEqual(['1']);
    kill(first);
    later(11_000);
    const second = await run(true);
    await expect.poll(() => counts, EVENTUALLY).toEqual(['1', '2']);
    kill(second);
    later(22_000);
    const third = await run(true);
    await expect.poll(() => dead, EVENTUALLY).toEqual(['poison']);
    expect(counts).toEqual(['1', '2']);
    expect(third.depth).toBe(0);
    kill(third);
    await expect.poll(async () => (await store.load('q')).length, EVENTUALLY).toBe(0);
  });
});

describe('the dispatcher consumer rule (deployed event source and local queue alike)', () => {
  it("gives a batch over 10 Lambda's required 1 s window, and none at 10 or less", async () => {
    const { dispatcherConsumer, DISPATCHER_CONSUMER, SLOW_LANE_CONSUMER } = await import('../../lambdas/contract/deployment');
    expect(DISPATCHER_CONSUMER).toMatchObject({ batchSize: 25, maxBatchingWindowSeconds: 1, maxConcurrency: 4 });
    expect(dispatcherConsumer(11, 4).maxBatchingWindowSeconds).toBe(1);
    expect(dispatcherConsumer(10, 4).maxBatchingWindowSeconds).toBe(0);
    expect(SLOW_LANE_CONSUMER).toMatchObject({ batchSize: 10, maxBatchingWindowSeconds: 0, maxConcurrency: 4 });
  });
});
