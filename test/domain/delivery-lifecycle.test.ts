/**
 * The life of a delivery as pure rules (docs/behaviour.md#delivery-statuses): how an attempt's
 * outcome is classified, how it moves the endpoint's failure streak and when that disables the
 * endpoint, which statuses are open, terminal and replayable, which deliveries have spent their
 * retries and what the dead-letter consumer does with one (only attempts spend retries, never
 * receives), and what a new delivery and a bookkeeping entry look like.
 */
import { describe, expect, it } from 'vitest';
import { MAX_RETRIES } from '../../lambdas/domain/backoff';
import {
  awaitsDeadLetter,
  bookkeepingEntry,
  classify,
  deadLetterVerdict,
  DESTINATION_NOT_PUBLIC,
  DISABLE_THRESHOLD,
  ENDPOINT_DISABLED,
  isReplayable,
  isServiceFault,
  isTerminal,
  MAX_REQUEUES,
  newHeldDelivery,
  newPendingDelivery,
  nextStreak,
  QUEUE_RECEIVES_EXHAUSTED,
  refusedAtDispatch,
  RETRIES_EXHAUSTED,
  retriesExhausted,
  serviceFaultReason,
} from '../../lambdas/domain/delivery-lifecycle';
import { DELIVERY_STATUSES } from '../../lambdas/contract/delivery-statuses';

describe('classify', () => {
  const status = (s: number) => classify({ kind: 'response', status: s });

  it('delivers every 2xx and resets the streak, with no reason', () => {
    for (const s of [200, 201, 204, 299]) expect(status(s)).toEqual({ status: 'delivered', streak: 'reset', reason: null });
  });

  it('retries 5xx, 408 and 429, counting each in the streak', () => {
    for (const s of [500, 502, 503, 599, 408, 429])
      expect(status(s)).toEqual({ status: 'failed', streak: 'increment', reason: `http_${s}` });
  });

  it('fails a 3xx for good as a redirect not followed, at both edges of the class', () => {
    for (const s of [300, 301, 302, 307, 308, 399])
      expect(status(s)).toEqual({ status: 'failed_permanent', streak: 'increment', reason: `redirect_not_followed_${s}` });
  });

  it('fails any other 4xx and a 1xx for good with its own status as the reason, never the redirect reason', () => {
    for (const s of [100, 102, 199, 400, 401, 403, 404, 407, 409, 410, 422, 428, 430, 499])
      expect(status(s)).toEqual({ status: 'failed_permanent', streak: 'increment', reason: `http_${s}` });
  });

  it('fails a 101 or any upgrade for good as protocol_upgrade', () => {
    expect(status(101)).toEqual({ status: 'failed_permanent', streak: 'increment', reason: 'protocol_upgrade' });
    expect(classify({ kind: 'response', status: 200, upgrade: true })).toEqual({
      status: 'failed_permanent',
      streak: 'increment',
      reason: 'protocol_upgrade',
    });
  });

  it('fails a status outside 100–599 for good as invalid_status, never retried as a 5xx', () => {
    for (const s of [0, 99, 600, 999, 1000])
      expect(status(s)).toEqual({ status: 'failed_permanent', streak: 'increment', reason: 'invalid_status' });
  });

  it('retries a network error or timeout and counts it; a service fault is retried without moving the streak', () => {
    expect(classify({ kind: 'error', reason: 'timeout' })).toEqual({ status: 'failed', streak: 'increment', reason: 'timeout' });
    expect(classify({ kind: 'error', reason: 'connection_refused' })).toEqual({
      status: 'failed',
      streak: 'increment',
      reason: 'connection_refused',
    });
    const fault = serviceFaultReason('dns_timeout');
    expect(fault).toBe('service_error: dns_timeout');
    expect(classify({ kind: 'error', reason: fault })).toEqual({ status: 'failed', streak: 'none', reason: fault });
  });

  it('a URL refused at dispatch fails for good and counts in the streak', () => {
    // Tenant-visible evidence reasons: part of the published behaviour.
    expect(DESTINATION_NOT_PUBLIC).toBe('destination_not_public');
    expect(refusedAtDispatch('destination_not_public')).toEqual({
      status: 'failed_permanent',
      streak: 'increment',
      reason: 'destination_not_public',
    });
  });
});

describe('isServiceFault', () => {
  it('is the bare prefix or the prefix and a colon, nothing else', () => {
    expect(isServiceFault('service_error')).toBe(true);
    expect(isServiceFault('service_error: emfile')).toBe(true);
    expect(isServiceFault('service_error:emfile')).toBe(true);
    expect(isServiceFault('service_errors')).toBe(false);
    expect(isServiceFault('timeout')).toBe(false);
    expect(isServiceFault('')).toBe(false);
    expect(isServiceFault(null)).toBe(false);
  });
});

describe('nextStreak', () => {
  it('writes nothing when the attempt does not move the streak', () => {
    expect(nextStreak({ enabled: true, consecutiveFailures: 5 }, 'none')).toBeNull();
    expect(nextStreak({ enabled: true, consecutiveFailures: DISABLE_THRESHOLD - 1 }, 'none')).toBeNull();
  });

  it('resets a streak to 0 and never disables, however long the streak was; a streak at 0 needs no write', () => {
    expect(nextStreak({ enabled: true, consecutiveFailures: 0 }, 'reset')).toBeNull();
    for (const consecutiveFailures of [1, DISABLE_THRESHOLD - 1, DISABLE_THRESHOLD, DISABLE_THRESHOLD + 5])
      expect(nextStreak({ enabled: true, consecutiveFailures }, 'reset')).toEqual({ consecutiveFailures: 0, disables: false });
  });

  it('counts a failure, and disables an enabled endpoint from the threshold on', () => {
    expect(DISABLE_THRESHOLD).toBe(20);
    expect(nextStreak({ enabled: true, consecutiveFailures: 0 }, 'increment')).toEqual({ consecutiveFailures: 1, disables: false });
    expect(nextStreak({ enabled: true, consecutiveFailures: DISABLE_THRESHOLD - 2 }, 'increment')).toEqual({
      consecutiveFailures: DISABLE_THRESHOLD - 1,
      disables: false,
    });
    expect(nextStreak({ enabled: true, consecutiveFailures: DISABLE_THRESHOLD - 1 }, 'increment')).toEqual({
      consecutiveFailures: DISABLE_THRESHOLD,
      disables: true,
    });
    expect(nextStreak({ enabled: true, consecutiveFailures: DISABLE_THRESHOLD + 3 }, 'increment')).toEqual({
      consecutiveFailures: DISABLE_THRESHOLD + 4,
      disables: true,
    });
  });

  it('never disables an endpoint that is already disabled (an operator re-enable stands)', () => {
    expect(nextStreak({ enabled: false, consecutiveFailures: DISABLE_THRESHOLD - 1 }, 'increment')).toEqual({
      consecutiveFailures: DISABLE_THRESHOLD,
      disables: false,
    });
  });
});

describe('statuses', () => {
  it('only pending and failed are open; failed, failed_permanent and dead_lettered are replayable', () => {
    expect(DELIVERY_STATUSES.filter((s) => !isTerminal(s))).toEqual(['pending', 'failed']);
    expect(DELIVERY_STATUSES.filter(isReplayable)).toEqual(['failed', 'failed_permanent', 'dead_lettered']);
  });

  it('a failed delivery awaits the dead-letter queue only once it has no next attempt', () => {
    expect(awaitsDeadLetter({ status: 'failed', nextAttemptAt: null })).toBe(true);
    expect(awaitsDeadLetter({ status: 'failed', nextAttemptAt: '2026-11-26T10:00:00.000Z' })).toBe(false);
    expect(awaitsDeadLetter({ status: 'pending', nextAttemptAt: null })).toBe(false);
    expect(awaitsDeadLetter({ status: 'failed_permanent', nextAttemptAt: null })).toBe(false);
  });
});

describe('new deliveries and bookkeeping', () => {
  const now = new Date('2026-11-26T10:00:00.000Z');
  const input = { workspace: 'acme', endpointId: 'ep_1', eventType: 'order.created', payload: { id: 1 } };

  it('a new pending delivery is due now, with no attempt and no evidence', () => {
    const d = newPendingDelivery(input, now);
    expect(d.deliveryId).toMatch(/^whd_01[0-9A-HJKMNP-TV-Z]{24}$/);
    expect(d).toEqual({
      deliveryId: d.deliveryId,
      workspace: 'acme',
      endpointId: 'ep_1',
      status: 'pending',
      attempts: 0,
      evidenceCount: 0,
      nextAttemptAt: '2026-11-26T10:00:00.000Z',
      eventType: 'order.created',
      eventId: null,
      payload: { id: 1 },
      replayedFrom: null,
      lastResponseStatus: null,
      lastError: null,
      createdAt: '2026-11-26T10:00:00.000Z',
      updatedAt: '2026-11-26T10:00:00.000Z',
    });
    expect(newPendingDelivery({ ...input, replayedFrom: 'whd_source' }, now).replayedFrom).toBe('whd_source');
    expect(newPendingDelivery({ ...input, eventId: 'evt-1' }, now).eventId).toBe('evt-1');
  });

  it('a held delivery is failed_permanent for its disabled endpoint and never due', () => {
    const d = newHeldDelivery(input, now);
    expect(d).toMatchObject({ status: 'failed_permanent', nextAttemptAt: null, lastError: ENDPOINT_DISABLED, attempts: 0 });
    expect(ENDPOINT_DISABLED).toBe('endpoint_disabled');
  });

  it('a bookkeeping entry has a reason and nothing of an HTTP attempt', () => {
    expect(bookkeepingEntry(now, 'dead_lettered', RETRIES_EXHAUSTED)).toEqual({
      outcome: 'dead_lettered',
      timestamp: '2026-11-26T10:00:00.000Z',
      durationMs: null,
      failureReason: 'retries_exhausted',
      requestHeaders: {},
      responseStatus: null,
      responseBody: null,
    });
  });
});

describe('retry budget', () => {
  it('is spent by the 7th attempt, and by nothing else', () => {
    expect([1, 2, 3, 4, 5, 6].map(retriesExhausted)).toEqual(Array(MAX_RETRIES).fill(false));
    expect(retriesExhausted(MAX_RETRIES + 1)).toBe(true);
  });
});

describe('dead-letter verdict', () => {
  it('names its two reasons as the evidence shows them', () => {
    expect(RETRIES_EXHAUSTED).toBe('retries_exhausted');
    expect(QUEUE_RECEIVES_EXHAUSTED).toBe('queue_receives_exhausted');
  });

  const due = new Date(Date.now() + 30_000).toISOString();
  it('marks a spent delivery for its retries, however often it was requeued', () => {
    for (const requeues of [0, MAX_REQUEUES]) {
      expect(deadLetterVerdict({ status: 'failed', nextAttemptAt: null, attempts: 7 }, requeues)).toEqual({
        kind: 'mark',
        reason: RETRIES_EXHAUSTED,
      });
      expect(deadLetterVerdict({ status: 'failed', nextAttemptAt: null, attempts: 3 }, requeues)).toEqual({
        kind: 'mark',
        reason: RETRIES_EXHAUSTED,
      });
    }
  });

  it('sends back a delivery with retries left, up to the bound, then marks it as given up by the queue', () => {
    for (const delivery of [
      { status: 'pending', nextAttemptAt: due, attempts: 0 },
      { status: 'failed', nextAttemptAt: due, attempts: 6 },
    ] as const) {
      for (let requeues = 0; requeues < MAX_REQUEUES; requeues++)
        expect(deadLetterVerdict(delivery, requeues)).toEqual({ kind: 'requeue' });
      expect(deadLetterVerdict(delivery, MAX_REQUEUES)).toEqual({ kind: 'mark', reason: QUEUE_RECEIVES_EXHAUSTED });
    }
  });
});
