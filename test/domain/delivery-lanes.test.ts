/** The lane rule, the slow mark and the slow lane's per-batch caps (docs/behaviour.md#delivery-lanes). */
import { describe, expect, it } from 'vitest';
import { laneOf, selectForAttempt, SLOW_LANE, slowMarkAfter } from '../../lambdas/domain/delivery-lanes';

const now = new Date('2026-11-26T10:00:00Z');
const inMinutes = (m: number) => new Date(now.getTime() + m * 60_000).toISOString();

describe('laneOf', () => {
  it('is fast for an endpoint with no streak and no live mark', () => {
    expect(laneOf({ consecutiveFailures: 0 }, now)).toBe('fast');
    expect(laneOf({ consecutiveFailures: 0, slowUntil: null }, now)).toBe('fast');
    expect(laneOf({ consecutiveFailures: 0, slowUntil: inMinutes(-1) }, now)).toBe('fast');
    // A mark ends at its instant.
    expect(laneOf({ consecutiveFailures: 0, slowUntil: now.toISOString() }, now)).toBe('fast');
  });

  it('is slow while the endpoint has a failure streak, or a slow mark in the future', () => {
    expect(laneOf({ consecutiveFailures: 1 }, now)).toBe('slow');
    expect(laneOf({ consecutiveFailures: 0, slowUntil: inMinutes(1) }, now)).toBe('slow');
  });
});

describe('slowMarkAfter', () => {
  it('marks after an attempt of at least slowAttemptMs, whatever its outcome, for markMinutes', () => {
    expect(slowMarkAfter({ consecutiveFailures: 0 }, SLOW_LANE.slowAttemptMs - 1, now)).toBeNull();
    expect(slowMarkAfter({ consecutiveFailures: 0 }, null, now)).toBeNull();
    expect(slowMarkAfter({ consecutiveFailures: 0 }, SLOW_LANE.slowAttemptMs, now)).toBe(inMinutes(SLOW_LANE.markMinutes));
  });

  it('does not write a mark that still lasts more than remarkMinutes (one write per endpoint per few minutes)', () => {
    expect(slowMarkAfter({ consecutiveFailures: 0, slowUntil: inMinutes(SLOW_LANE.remarkMinutes + 1) }, 10_000, now)).toBeNull();
    expect(slowMarkAfter({ consecutiveFailures: 0, slowUntil: inMinutes(SLOW_LANE.remarkMinutes - 1) }, 10_000, now)).toBe(
      inMinutes(SLOW_LANE.markMinutes),
    );
    // A mark with exactly remarkMinutes left is written again.
    expect(slowMarkAfter({ consecutiveFailures: 0, slowUntil: inMinutes(SLOW_LANE.remarkMinutes) }, 10_000, now)).toBe(
      inMinutes(SLOW_LANE.markMinutes),
    );
  });
});

describe('selectForAttempt', () => {
  const m = (id: number, endpointId?: string, workspace?: string) => ({ id, endpointId, workspace });

  it('attempts at most perEndpointPerBatch per endpoint and perWorkspacePerBatch per workspace, in message order, deferring the rest', () => {
    const batch = [
      m(1, 'a', 'w1'),
      m(2, 'a', 'w1'),
      m(3, 'a', 'w1'),
      m(4, 'b', 'w1'),
      m(5, 'c', 'w1'),
      m(6, 'd', 'w1'),
      m(7, 'e', 'w2'),
      m(8, 'e', 'w2'),
    ];
    const { attempt, defer } = selectForAttempt(batch);
    expect(SLOW_LANE.perEndpointPerBatch).toBe(2);
    expect(SLOW_LANE.perWorkspacePerBatch).toBe(4);
    // a: 2 of 3; w1: 4 in all (a, a, b, c), so d waits too; w2 has its own share.
    expect(attempt.map((x) => x.id)).toEqual([1, 2, 4, 5, 7, 8]);
    expect(defer.map((x) => x.id)).toEqual([3, 6]);
  });

  it('keys endpoints by workspace too, and always attempts a message that does not name its endpoint', () => {
    const { attempt, defer } = selectForAttempt([m(1, 'a', 'w1'), m(2, 'a', 'w2'), m(3, 'a', 'w1'), m(4, 'a', 'w1'), m(5), m(6), m(7)]);
    expect(attempt.map((x) => x.id)).toEqual([1, 2, 3, 5, 6, 7]);
    expect(defer.map((x) => x.id)).toEqual([4]);
  });

  it('always attempts a message that names only one of its endpoint and workspace', () => {
    const batch = [
      m(1, 'a'),
      m(2, 'a'),
      m(3, 'a'),
      m(4, undefined, 'w1'),
      m(5, undefined, 'w1'),
      m(6, undefined, 'w1'),
      m(7, undefined, 'w1'),
      m(8, undefined, 'w1'),
    ];
    expect(selectForAttempt(batch)).toEqual({ attempt: batch, defer: [] });
  });

  it('defers on either cap alone: the endpoint cap in a quiet workspace, the workspace cap for fresh endpoints', () => {
    // Endpoint cap: a's third message waits although w1 has room.
    expect(selectForAttempt([m(1, 'a', 'w1'), m(2, 'a', 'w1'), m(3, 'a', 'w1')]).defer.map((x) => x.id)).toEqual([3]);
    // Workspace cap: a fifth endpoint of w1 waits although it has sent nothing yet.
    const { attempt, defer } = selectForAttempt([m(1, 'a', 'w1'), m(2, 'b', 'w1'), m(3, 'c', 'w1'), m(4, 'd', 'w1'), m(5, 'e', 'w1')]);
    expect(attempt.map((x) => x.id)).toEqual([1, 2, 3, 4]);
    expect(defer.map((x) => x.id)).toEqual([5]);
  });
});
