/**
 * The dispatcher's decision (lambdas/pipeline/delivery-decision.ts) as a pure function of what a
 * dispatch observed: no table, no receiver, no clock. Each rule of
 * docs/architecture.md#dispatcher and docs/behaviour.md#retries-and-backoff on its own: what the
 * queue does with the message, and what the batch counts.
 */
import { describe, expect, it } from 'vitest';
import type { LaneRole } from '../../lambdas/domain/delivery-lanes';
import type { HealthObservation } from '../../lambdas/domain/delivery-health';
import { newPendingDelivery, type Classified, type DeliveryRecord } from '../../lambdas/domain/delivery-lifecycle';
import { decideDispatch, secondsUntil, type DispatchObservation, type RecordedObservation } from '../../lambdas/pipeline/delivery-decision';

const NOW = new Date('2026-03-01T12:00:00.000Z');
const inSeconds = (s: number) => new Date(NOW.getTime() + s * 1000).toISOString();

function delivery(overrides: Partial<DeliveryRecord> = {}): DeliveryRecord {
  return {
    ...newPendingDelivery(
      { workspace: 'acme', endpointId: 'whe_01J0000000000000000000000A', eventType: 'order.shipped', payload: {} },
      NOW,
    ),
    ...overrides,
  };
}

const observation = (outcome: HealthObservation['outcome']): HealthObservation => ({
  workspace: 'acme',
  endpointId: 'whe_01J0000000000000000000000A',
  http: true,
  outcome,
  timestamp: NOW.toISOString(),
  durationMs: 12,
  responseStatus: outcome === 'delivered' ? 204 : 500,
  failureReason: outcome === 'delivered' ? null : 'http_500',
});

function recorded(outcome: HealthObservation['outcome'], after: Partial<DeliveryRecord> = {}, disabled = false): RecordedObservation {
  return { delivery: delivery(after), observation: observation(outcome), disabled };
}

const DELIVERED: Classified = { status: 'delivered', streak: 'reset', reason: null };
const SERVER_ERROR: Classified = { status: 'failed', streak: 'increment', reason: 'http_500' };
const SERVICE_FAULT: Classified = { status: 'failed', streak: 'none', reason: 'service_error: EMFILE' };
const GONE_410: Classified = { status: 'failed_permanent', streak: 'increment', reason: 'http_410' };

function attempted(
  classified: Classified,
  options: { lane?: LaneRole; attempts?: number; exhausted?: boolean; slowMarked?: boolean; disabled?: boolean } = {},
): DispatchObservation {
  const outcome = classified.status;
  return {
    kind: 'attempted',
    lane: options.lane ?? 'only',
    classified,
    attempts: options.attempts ?? 1,
    exhausted: options.exhausted ?? false,
    slowMarked: options.slowMarked ?? false,
    recorded: recorded(outcome, { status: outcome, attempts: options.attempts ?? 1 }, options.disabled ?? false),
  };
}

describe('secondsUntil', () => {
  it('rounds up to whole seconds, never below 0, and is 0 with no time', () => {
    expect(secondsUntil(inSeconds(29.2), NOW)).toBe(30);
    expect(secondsUntil(inSeconds(30), NOW)).toBe(30);
    expect(secondsUntil(inSeconds(-90), NOW)).toBe(0);
    expect(secondsUntil(null, NOW)).toBe(0);
  });

  it("under the local stack's time scale, is the queue delay the scaled queue waits until that moment", () => {
    // Due in 0.5 s on a stack at ×60: the queue is given 30 s, which it waits as 0.5 s.
    expect(secondsUntil(inSeconds(0.5), NOW, 60)).toBe(30);
    expect(secondsUntil(inSeconds(0.51), NOW, 60)).toBe(31);
    expect(secondsUntil(inSeconds(-1), NOW, 60)).toBe(0);
  });
});

describe('before anything is sent', () => {
  it('acks a delivery that is gone, terminal, or whose endpoint is gone, counting nothing', () => {
    const done = delivery({ status: 'delivered' });
    expect(decideDispatch({ kind: 'delivery_gone' })).toEqual({ kind: 'ack', reason: 'delivery_gone' });
    expect(decideDispatch({ kind: 'already_terminal', delivery: done })).toEqual({
      kind: 'ack',
      reason: 'already_terminal',
      delivery: done,
    });
    expect(decideDispatch({ kind: 'endpoint_gone', delivery: done })).toEqual({ kind: 'ack', reason: 'endpoint_gone', delivery: done });
  });

  it('sends a spent delivery the dead-letter queue missed there again, never attempting it', () => {
    const spent = delivery({ status: 'failed', attempts: 7, nextAttemptAt: null });
    expect(decideDispatch({ kind: 'awaits_dead_letter', delivery: spent })).toEqual({ kind: 'dead_letter', delivery: spent });
  });

  it('moves a fast-lane delivery of a slow endpoint, due when it was due (now when overdue)', () => {
    const due = delivery({ nextAttemptAt: inSeconds(45) });
    expect(decideDispatch({ kind: 'slow_endpoint', delivery: due, now: NOW })).toEqual({ kind: 'move', delaySeconds: 45, delivery: due });
    const overdue = delivery({ nextAttemptAt: inSeconds(-5) });
    expect(decideDispatch({ kind: 'slow_endpoint', delivery: overdue, now: NOW })).toMatchObject({ kind: 'move', delaySeconds: 0 });
  });

  it('acks the bookkeeping of a disabled endpoint, counting it; a duplicate of it counts nothing', () => {
    const entry = recorded('failed_permanent', { status: 'failed_permanent' });
    expect(decideDispatch({ kind: 'endpoint_disabled', recorded: entry })).toEqual({
      kind: 'ack',
      reason: 'endpoint_disabled',
      delivery: entry.delivery,
      recorded: entry.observation,
    });
    expect(decideDispatch({ kind: 'endpoint_disabled', recorded: null })).toEqual({ kind: 'ack', reason: 'duplicate' });
  });
});

describe('after an attempt this receive recorded', () => {
  it('acks a 2xx and a permanent failure, with what the batch counts', () => {
    const ok = attempted(DELIVERED);
    expect(decideDispatch(ok)).toEqual({
      kind: 'ack',
      reason: 'delivered',
      delivery: expect.objectContaining({ status: 'delivered' }),
      recorded: expect.objectContaining({ outcome: 'delivered' }),
    });
    expect(decideDispatch(attempted(GONE_410))).toMatchObject({ kind: 'ack', reason: 'failed_permanent' });
  });

  it('retries a retryable failure after the backoff of its attempt count: min(attempts, 6) × 30 s', () => {
    const delays = [1, 2, 3, 4, 5, 6].map((attempts) => decideDispatch(attempted(SERVER_ERROR, { attempts })));
    expect(delays.map((d) => d.kind)).toEqual(Array(6).fill('retry'));
    expect(delays.map((d) => (d.kind === 'retry' ? d.delaySeconds : null))).toEqual([30, 60, 90, 120, 150, 180]);
  });

  it('sends a retryable failure with no retry left to the dead-letter queue, in any lane', () => {
    for (const lane of ['only', 'fast', 'slow'] as const)
      expect(decideDispatch(attempted(SERVER_ERROR, { lane, attempts: 7, exhausted: true }))).toMatchObject({ kind: 'dead_letter' });
  });

  it('moves the retry of a fast-lane endpoint that just failed or was marked slow; a service fault or another lane retries in place', () => {
    expect(decideDispatch(attempted(SERVER_ERROR, { lane: 'fast', attempts: 2 }))).toMatchObject({ kind: 'move', delaySeconds: 60 });
    expect(decideDispatch(attempted(SERVICE_FAULT, { lane: 'fast', slowMarked: true }))).toMatchObject({ kind: 'move', delaySeconds: 30 });
    expect(decideDispatch(attempted(SERVICE_FAULT, { lane: 'fast' }))).toMatchObject({ kind: 'retry', delaySeconds: 30 });
    expect(decideDispatch(attempted(SERVER_ERROR, { lane: 'slow', slowMarked: true }))).toMatchObject({ kind: 'retry', delaySeconds: 30 });
    expect(decideDispatch(attempted(SERVER_ERROR, { lane: 'only' }))).toMatchObject({ kind: 'retry', delaySeconds: 30 });
  });

  it('a delivered attempt on a slow endpoint is acked, not moved', () => {
    expect(decideDispatch(attempted(DELIVERED, { lane: 'fast', slowMarked: true }))).toMatchObject({ kind: 'ack', reason: 'delivered' });
  });

  it('reports an auto-disable only when the recording disabled the endpoint', () => {
    expect(decideDispatch(attempted(GONE_410, { disabled: true }))).toMatchObject({ kind: 'ack', disabled: true });
    expect(decideDispatch(attempted(SERVER_ERROR, { lane: 'fast', disabled: true }))).toMatchObject({ kind: 'move', disabled: true });
    expect(decideDispatch(attempted(SERVER_ERROR, { exhausted: true, attempts: 7, disabled: true }))).toMatchObject({ disabled: true });
    expect(decideDispatch(attempted(SERVER_ERROR))).not.toHaveProperty('disabled');
  });
});

describe('after rolling forward an attempt an earlier receive stored', () => {
  const rolled = (applies: { status: 'delivered' | 'failed' | 'failed_permanent'; nextAttemptAt: string | null }): DispatchObservation => ({
    kind: 'rolled_forward',
    applies: { ...applies, http: true, streak: 'increment' },
    now: NOW,
    recorded: recorded(applies.status === 'delivered' ? 'delivered' : 'failed', { status: applies.status }),
  });

  it('does what that receive decided: ack a final status, retry when its stored next attempt is due, dead-letter with none', () => {
    expect(decideDispatch(rolled({ status: 'delivered', nextAttemptAt: null }))).toMatchObject({ kind: 'ack', reason: 'delivered' });
    expect(decideDispatch(rolled({ status: 'failed_permanent', nextAttemptAt: null }))).toMatchObject({
      kind: 'ack',
      reason: 'failed_permanent',
    });
    expect(decideDispatch(rolled({ status: 'failed', nextAttemptAt: inSeconds(42) }))).toMatchObject({ kind: 'retry', delaySeconds: 42 });
    expect(decideDispatch(rolled({ status: 'failed', nextAttemptAt: inSeconds(-3) }))).toMatchObject({ kind: 'retry', delaySeconds: 0 });
    expect(decideDispatch(rolled({ status: 'failed', nextAttemptAt: null }))).toMatchObject({ kind: 'dead_letter' });
  });
});

describe('when another receive recorded first', () => {
  const duplicate = (current: DeliveryRecord | null, stillApplying = false): DispatchObservation => ({
    kind: 'duplicate',
    current,
    stillApplying,
    now: NOW,
  });

  it('acks only when the delivery is gone or now terminal, counting nothing', () => {
    expect(decideDispatch(duplicate(null))).toEqual({ kind: 'ack', reason: 'duplicate' });
    expect(decideDispatch(duplicate(delivery({ status: 'delivered', nextAttemptAt: null })))).toEqual({ kind: 'ack', reason: 'duplicate' });
  });

  it('keeps the message of an open delivery until its next attempt is due: a duplicate never deletes a retry', () => {
    const open = delivery({ status: 'failed', attempts: 1, nextAttemptAt: inSeconds(30) });
    expect(decideDispatch(duplicate(open))).toEqual({ kind: 'retry', delaySeconds: 30, delivery: open });
  });

  it('keeps it until the time-scaled next attempt on a local stack, scaling the wait once', () => {
    const open = delivery({ status: 'failed', attempts: 1, nextAttemptAt: inSeconds(0.5) });
    expect(decideDispatch(duplicate(open), 60)).toEqual({ kind: 'retry', delaySeconds: 30, delivery: open });
  });

  it('looks again in a second while the winner is still applying its attempt', () => {
    const open = delivery({ status: 'pending' });
    expect(decideDispatch(duplicate(open, true))).toEqual({ kind: 'retry', delaySeconds: 1, delivery: open });
  });

  it('sends a delivery the winner left spent to the dead-letter queue', () => {
    const spent = delivery({ status: 'failed', attempts: 7, nextAttemptAt: null });
    expect(decideDispatch(duplicate(spent))).toEqual({ kind: 'dead_letter', delivery: spent });
  });
});
