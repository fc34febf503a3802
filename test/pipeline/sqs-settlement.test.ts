/**
 * The dispatchers' queue policy (lambdas/pipeline/sqs-settlement.ts,
 * docs/architecture.md#retries-and-visibility) against in-memory queues: what each dispatch result
 * does to its message (ack, visibility delay, a new message in the slow lane, the dead-letter queue
 * or its own lane), the re-send on the last receive, what happens when a send fails, and what a
 * dispatch adds to the metrics.
 */
import type { SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import type { MetricDimensionValues, MetricKey, MetricsRecorder } from '../../lambdas/contract/metrics';
import { MAX_RECEIVES } from '../../lambdas/contract/deployment';
import { newPendingDelivery, type DeliveryRecord } from '../../lambdas/domain/delivery-lifecycle';
import type { HealthObservation } from '../../lambdas/domain/delivery-health';
import type { DispatchResult } from '../../lambdas/pipeline/delivery-decision';
import {
  countDispatch,
  laneSettler,
  receiveCountOf,
  RetryLater,
  settlementOf,
  type LaneQueues,
  type Settlement,
} from '../../lambdas/pipeline/sqs-settlement';
import type { DeliveryMessage } from '../../lambdas/queue/delivery-queue';

const NOW = new Date('2026-03-01T12:00:00.000Z');
const ENDPOINT = 'whe_01J0000000000000000000000A';

function delivery(overrides: Partial<DeliveryRecord> = {}): DeliveryRecord {
  return { ...newPendingDelivery({ workspace: 'acme', endpointId: ENDPOINT, eventType: 'order.shipped', payload: {} }, NOW), ...overrides };
}

/** A record as SQS hands it out, on its `receive`-th receive. */
function record(receive: number): SQSRecord {
  return {
    messageId: `m-${receive}`,
    receiptHandle: `rh-${receive}`,
    body: '{}',
    attributes: {
      ApproximateReceiveCount: String(receive),
      SentTimestamp: '0',
      SenderId: 'x',
      ApproximateFirstReceiveTimestamp: '0',
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:local:0:deliveries',
    awsRegion: 'local',
  };
}

/** In-memory queues that record what is sent and delayed; a queue named in `failing` refuses every send. */
function queues(failing: ('ownLane' | 'slowLane' | 'deadLetters')[] = []) {
  const sent: Record<'ownLane' | 'slowLane' | 'deadLetters', DeliveryMessage[]> = { ownLane: [], slowLane: [], deadLetters: [] };
  const delayed: { receiptHandle: string; seconds: number }[] = [];
  const queue = (name: keyof typeof sent) => ({
    async send(messages: readonly DeliveryMessage[]) {
      if (failing.includes(name)) throw new Error(`injected ${name} failure`);
      sent[name].push(...messages);
    },
  });
  const lanes: LaneQueues = {
    ownLane: queue('ownLane'),
    slowLane: queue('slowLane'),
    deadLetters: queue('deadLetters'),
    delayer: { delay: async (receiptHandle, seconds) => void delayed.push({ receiptHandle, seconds }) },
  };
  return { lanes, sent, delayed };
}

function recorder() {
  const added: { key: MetricKey; value: number; dimensions: unknown }[] = [];
  const metrics: MetricsRecorder = {
    add<K extends MetricKey>(key: K, value: number, dimensions: MetricDimensionValues<K>) {
      added.push({ key, value, dimensions });
    },
  };
  return { metrics, added };
}

function logged() {
  const warnings: { message: string; attributes: Record<string, unknown> }[] = [];
  return { log: { warn: (message: string, attributes: Record<string, unknown>) => void warnings.push({ message, attributes }) }, warnings };
}

const message: DeliveryMessage = { deliveryId: 'whd_01J0000000000000000000000A', requeues: 2 };

describe('settlementOf', () => {
  const d = delivery();
  const addressed = { deliveryId: message.deliveryId, endpointId: d.endpointId, workspace: d.workspace, requeues: 2 };

  it('maps each result to what the queue does, every re-send addressed and carrying the requeue count', () => {
    expect(settlementOf(message, { kind: 'ack', reason: 'delivered', delivery: d })).toEqual({ kind: 'ack' });
    expect(settlementOf(message, { kind: 'retry', delaySeconds: 60, delivery: d })).toEqual({
      kind: 'come_back',
      message: addressed,
      delaySeconds: 60,
    });
    expect(settlementOf(message, { kind: 'move', delaySeconds: 30, delivery: d })).toEqual({
      kind: 'move',
      message: addressed,
      delaySeconds: 30,
    });
    expect(settlementOf(message, { kind: 'dead_letter', delivery: d })).toEqual({ kind: 'dead_letter', message: addressed });
  });

  it('adds no requeue count to a message that had none', () => {
    const settled = settlementOf({ deliveryId: message.deliveryId }, { kind: 'dead_letter', delivery: d });
    expect(settled).toEqual({
      kind: 'dead_letter',
      message: { deliveryId: message.deliveryId, endpointId: d.endpointId, workspace: d.workspace },
    });
  });
});

describe('receiveCountOf', () => {
  it('reads the approximate receive count; 1 when SQS gave none', () => {
    expect(receiveCountOf(record(4))).toBe(4);
    expect(receiveCountOf({ attributes: {} as SQSRecord['attributes'] })).toBe(1);
  });
});

describe('laneSettler', () => {
  const comeBack = (delaySeconds: number): Settlement => ({ kind: 'come_back', message, delaySeconds });

  it('an ack touches no queue', async () => {
    const q = queues();
    await laneSettler(q.lanes, logged().log).settle(record(1), { kind: 'ack' }, recorder().metrics);
    expect([q.sent, q.delayed]).toEqual([{ ownLane: [], slowLane: [], deadLetters: [] }, []]);
  });

  it('a retry before the last receive delays the message by the backoff and reports the record failed', async () => {
    const q = queues();
    await expect(laneSettler(q.lanes, logged().log).settle(record(3), comeBack(90), recorder().metrics)).rejects.toBeInstanceOf(RetryLater);
    expect(q.delayed).toEqual([{ receiptHandle: 'rh-3', seconds: 90 }]);
    expect(q.sent.ownLane).toEqual([]);
  });

  it('a retry on the last receive is a new message on its own lane, due after the backoff, and the record succeeds', async () => {
    const q = queues();
    await laneSettler(q.lanes, logged().log).settle(record(MAX_RECEIVES), comeBack(90), recorder().metrics);
    expect(q.sent.ownLane).toEqual([{ ...message, delaySeconds: 90 }]);
    expect(q.delayed).toEqual([]);
  });

  it('a failed re-send on the last receive falls back to the visibility delay, logged', async () => {
    const q = queues(['ownLane']);
    const { log, warnings } = logged();
    await expect(laneSettler(q.lanes, log).settle(record(MAX_RECEIVES), comeBack(90), recorder().metrics)).rejects.toBeInstanceOf(
      RetryLater,
    );
    expect(q.delayed).toEqual([{ receiptHandle: `rh-${MAX_RECEIVES}`, seconds: 90 }]);
    expect(warnings).toEqual([
      expect.objectContaining({ attributes: expect.objectContaining({ deliveryId: message.deliveryId, error: expect.any(Error) }) }),
    ]);
  });

  it('a move is a new message in the slow lane, counted; the record succeeds', async () => {
    const q = queues();
    const m = recorder();
    await laneSettler(q.lanes, logged().log).settle(record(1), { kind: 'move', message, delaySeconds: 30 }, m.metrics);
    expect(q.sent.slowLane).toEqual([{ ...message, delaySeconds: 30 }]);
    expect(m.added).toEqual([{ key: 'laneMoves', value: 1, dimensions: {} }]);
    expect(q.delayed).toEqual([]);
  });

  it('a failed move comes back in this lane when due, counted as no move (on the last receive: re-sent there)', async () => {
    const q = queues(['slowLane']);
    const m = recorder();
    const { log, warnings } = logged();
    const settler = laneSettler(q.lanes, log);
    await expect(settler.settle(record(2), { kind: 'move', message, delaySeconds: 30 }, m.metrics)).rejects.toBeInstanceOf(RetryLater);
    expect(q.delayed).toEqual([{ receiptHandle: 'rh-2', seconds: 30 }]);
    await settler.settle(record(MAX_RECEIVES), { kind: 'move', message, delaySeconds: 30 }, m.metrics);
    expect(q.sent.ownLane).toEqual([{ ...message, delaySeconds: 30 }]);
    expect(m.added).toEqual([]);
    expect(warnings.map((w) => w.message)).toEqual([
      'Could not move a delivery to the slow lane',
      'Could not move a delivery to the slow lane',
    ]);
  });

  it('a spent delivery goes to the dead-letter queue; if that send fails, its message is visible again at once and the record fails', async () => {
    const ok = queues();
    await laneSettler(ok.lanes, logged().log).settle(record(1), { kind: 'dead_letter', message }, recorder().metrics);
    expect(ok.sent.deadLetters).toEqual([message]);

    const failing = queues(['deadLetters']);
    const { log, warnings } = logged();
    await expect(
      laneSettler(failing.lanes, log).settle(record(MAX_RECEIVES), { kind: 'dead_letter', message }, recorder().metrics),
    ).rejects.toThrow(`${message.deliveryId}: dead_letter failed`);
    // Past the last receive, SQS's own redrive takes it to the dead-letter queue: never re-sent to its lane.
    expect(failing.delayed).toEqual([{ receiptHandle: `rh-${MAX_RECEIVES}`, seconds: 0 }]);
    expect(failing.sent.ownLane).toEqual([]);
    expect(warnings.map((w) => w.message)).toEqual(['Could not send a spent delivery to the dead-letter queue']);
  });
});

describe('countDispatch', () => {
  const seen = (outcome: HealthObservation['outcome'], http = true): HealthObservation => ({
    workspace: 'acme',
    endpointId: ENDPOINT,
    http,
    outcome,
    timestamp: NOW.toISOString(),
    durationMs: http ? 120 : null,
    responseStatus: null,
    failureReason: null,
  });
  const later = new Date(NOW.getTime() + 2500);

  it('a first attempt: its outcome, its duration by lane and the time from publishing', () => {
    const m = recorder();
    const result: DispatchResult = { kind: 'ack', reason: 'delivered', delivery: delivery({ attempts: 1 }), recorded: seen('delivered') };
    countDispatch(m.metrics, result, 'fast', later);
    expect(m.added).toEqual([
      { key: 'attempts', value: 1, dimensions: { outcome: 'delivered' } },
      { key: 'attemptDuration', value: 120, dimensions: { lane: 'fast' } },
      { key: 'publishToFirstAttempt', value: 2500, dimensions: {} },
    ]);
  });

  it('a later attempt that disabled the endpoint: no first-attempt latency, one auto-disable', () => {
    const m = recorder();
    const d = delivery({ attempts: 3 });
    countDispatch(m.metrics, { kind: 'retry', delaySeconds: 90, delivery: d, recorded: seen('failed'), disabled: true }, 'slow', later);
    expect(m.added.map((a) => a.key)).toEqual(['attempts', 'attemptDuration', 'autoDisables']);
  });

  it('bookkeeping counts as an entry, without a duration; a dispatch that recorded nothing counts nothing', () => {
    const m = recorder();
    countDispatch(
      m.metrics,
      { kind: 'ack', reason: 'endpoint_disabled', delivery: delivery(), recorded: seen('failed_permanent', false) },
      'only',
      later,
    );
    countDispatch(m.metrics, { kind: 'move', delaySeconds: 0, delivery: delivery() }, 'fast', later);
    countDispatch(m.metrics, { kind: 'ack', reason: 'duplicate' }, 'fast', later);
    expect(m.added).toEqual([{ key: 'attempts', value: 1, dimensions: { outcome: 'failed_permanent' } }]);
  });
});
