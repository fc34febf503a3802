/**
 * Which deliveries have spent their retries, and what the dead-letter consumer does with one
 * (docs/behaviour.md#dead-lettering): only attempts spend retries, never receives.
 */
import { describe, expect, it } from 'vitest';
import { MAX_RETRIES } from '../../lambdas/domain/backoff';
import {
  deadLetterVerdict,
  MAX_REQUEUES,
  QUEUE_RECEIVES_EXHAUSTED,
  RETRIES_EXHAUSTED,
  retriesExhausted,
} from '../../lambdas/domain/delivery-lifecycle';

describe('retry budget', () => {
  it('is spent by the 7th attempt, and by nothing else', () => {
    expect([1, 2, 3, 4, 5, 6].map(retriesExhausted)).toEqual(Array(MAX_RETRIES).fill(false));
    expect(retriesExhausted(MAX_RETRIES + 1)).toBe(true);
  });
});

describe('dead-letter verdict', () => {
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
