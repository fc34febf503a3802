/** The health rule, pure (docs/behaviour.md#endpoint-health): what counts, where, and how it reads back. */
import { describe, expect, it } from 'vitest';
import { LATENCY_BUCKET_BOUNDS_MS } from '../../lambdas/contract/health';
import {
  aggregateBatch,
  counterExpiresAtEpoch,
  emptyCounts,
  latencyBucket,
  percentile,
  responseKey,
  summarizeEndpoint,
  summarizeHealth,
  windowBuckets,
  workspaceLast24h,
  type HealthObservation,
} from '../../lambdas/domain/delivery-health';

const at = (iso: string) => new Date(iso);

function attempt(overrides: Partial<HealthObservation> = {}): HealthObservation {
  return {
    workspace: 'acme',
    endpointId: 'whe_A',
    http: true,
    outcome: 'delivered',
    timestamp: '2026-11-25T12:00:00.000Z',
    durationMs: 40,
    responseStatus: 200,
    failureReason: null,
    ...overrides,
  };
}

describe('classification', () => {
  it('keys an attempt by its status, else timeout or network_error', () => {
    expect(responseKey({ responseStatus: 200, failureReason: null })).toBe('200');
    expect(responseKey({ responseStatus: 503, failureReason: 'http_503' })).toBe('503');
    expect(responseKey({ responseStatus: 302, failureReason: 'redirect_not_followed_302' })).toBe('302');
    expect(responseKey({ responseStatus: null, failureReason: 'timeout' })).toBe('timeout');
    for (const reason of [
      'connection_refused',
      'connection_reset',
      'tls_error: CERT_HAS_EXPIRED',
      'dns_failure',
      'network_error',
      'network_error: EHOSTUNREACH',
      'invalid_url: 10.0.0.1 is private',
    ]) {
      expect(responseKey({ responseStatus: null, failureReason: reason }), reason).toBe('network_error');
    }
  });

  it('puts a duration in the first bucket whose bound it does not exceed, and past the last in the overflow', () => {
    expect(latencyBucket(0)).toBe(0);
    expect(latencyBucket(5)).toBe(0);
    expect(latencyBucket(6)).toBe(1);
    expect(latencyBucket(100)).toBe(LATENCY_BUCKET_BOUNDS_MS.indexOf(100));
    expect(latencyBucket(101)).toBe(LATENCY_BUCKET_BOUNDS_MS.indexOf(200));
    expect(latencyBucket(15_000)).toBe(LATENCY_BUCKET_BOUNDS_MS.length - 1);
    expect(latencyBucket(15_001)).toBe(LATENCY_BUCKET_BOUNDS_MS.length);
  });

  it('reads p50 and p95 as the bound of the bucket holding the nearest rank', () => {
    expect(percentile({}, 0.5)).toBeNull();
    const b100 = latencyBucket(100);
    const b1000 = latencyBucket(1000);
    // 19 fast and 1 slow: rank 19 of 20 is still fast.
    expect(percentile({ [b100]: 19, [b1000]: 1 }, 0.95)).toBe(100);
    // 18 fast and 2 slow: rank 19 is slow.
    expect(percentile({ [b100]: 18, [b1000]: 2 }, 0.95)).toBe(1000);
    expect(percentile({ [b100]: 18, [b1000]: 2 }, 0.5)).toBe(100);
    expect(percentile({ [LATENCY_BUCKET_BOUNDS_MS.length]: 1 }, 0.5)).toBe(15_000);
  });
});

describe('aggregating a batch', () => {
  it('sums a batch into one increment per endpoint and per workspace', () => {
    const inc = aggregateBatch([
      attempt({ durationMs: 40 }),
      attempt({
        outcome: 'failed',
        responseStatus: 503,
        failureReason: 'http_503',
        durationMs: 300,
        timestamp: '2026-11-25T12:00:02.000Z',
      }),
      attempt({ outcome: 'failed_permanent', responseStatus: 302, failureReason: 'redirect_not_followed_302', durationMs: 20 }),
      attempt({ outcome: 'failed', responseStatus: null, failureReason: 'timeout', durationMs: 10_000 }),
      attempt({ outcome: 'failed', responseStatus: null, failureReason: 'connection_refused', durationMs: 1 }),
      attempt({ endpointId: 'whe_B', workspace: 'other', durationMs: 7 }),
      attempt({ http: false, outcome: 'dead_lettered', durationMs: null, responseStatus: null, failureReason: 'retries_exhausted' }),
      // Bookkeeping of a disabled endpoint is no attempt: not counted.
      attempt({
        endpointId: 'whe_C',
        http: false,
        outcome: 'failed_permanent',
        durationMs: null,
        responseStatus: null,
        failureReason: 'endpoint_disabled',
      }),
    ])!;
    expect(inc.hour).toBe('2026-11-25T12');
    expect(inc.endpoints.map((e) => e.endpointId).sort()).toEqual(['whe_A', 'whe_B']);
    const a = inc.endpoints.find((e) => e.endpointId === 'whe_A')!.counts;
    expect(a).toMatchObject({
      attempts: 5,
      delivered: 1,
      failed: 4,
      failedPermanent: 1,
      deadLettered: 1,
      lastAttemptAt: '2026-11-25T12:00:02.000Z',
    });
    expect(a.byResponseStatus).toEqual({ '200': 1, '503': 1, '302': 1, timeout: 1, network_error: 1 });
    expect(Object.values(a.latency).reduce((x, y) => x + y, 0)).toBe(5);
    expect(a.latency[latencyBucket(10_000)]).toBe(1);
    expect(inc.workspaces).toEqual([
      { workspace: 'acme', counts: { attempts: 5, delivered: 1, failed: 4, failedPermanent: 1, deadLettered: 1 } },
      { workspace: 'other', counts: { attempts: 1, delivered: 1, failed: 0, failedPermanent: 0, deadLettered: 0 } },
    ]);
  });

  it('puts a batch that straddles an hour in the hour of its earliest observation (one write per key)', () => {
    const inc = aggregateBatch([attempt({ timestamp: '2026-11-25T13:00:00.100Z' }), attempt({ timestamp: '2026-11-25T12:59:59.900Z' })])!;
    expect(inc.hour).toBe('2026-11-25T12');
    expect(inc.endpoints).toHaveLength(1);
    expect(inc.endpoints[0]!.counts.lastAttemptAt).toBe('2026-11-25T13:00:00.100Z');
  });

  it('has nothing to write when nothing counts', () => {
    expect(aggregateBatch([])).toBeNull();
    expect(
      aggregateBatch([attempt({ http: false, outcome: 'failed_permanent', responseStatus: null, failureReason: 'endpoint_disabled' })]),
    ).toBeNull();
  });

  it('expires a counter 8 days (the 7-day window and a day) after its hour starts', () => {
    expect(counterExpiresAtEpoch('2026-11-25T12')).toBe(Date.parse('2026-12-03T12:00:00.000Z') / 1000);
  });
});

describe('windows', () => {
  const now = at('2026-11-25T12:34:56.000Z');

  it('24h: the current hour and the 23 before; 7d: the current UTC day and the 6 before', () => {
    const day = windowBuckets('24h', now);
    expect(day.starts).toHaveLength(24);
    expect(day.from.toISOString()).toBe('2026-11-24T13:00:00.000Z');
    expect(day.starts.at(-1)!.toISOString()).toBe('2026-11-25T12:00:00.000Z');
    expect([day.firstHour, day.lastHour]).toEqual(['2026-11-24T13', '2026-11-25T12']);
    const week = windowBuckets('7d', now);
    expect(week.starts.map((d) => d.toISOString().slice(0, 10))).toEqual([
      '2026-11-19',
      '2026-11-20',
      '2026-11-21',
      '2026-11-22',
      '2026-11-23',
      '2026-11-24',
      '2026-11-25',
    ]);
    expect([week.firstHour, week.lastHour]).toEqual(['2026-11-19T00', '2026-11-25T12']);
  });

  function hour(h: string, c: Partial<ReturnType<typeof emptyCounts>>) {
    return { hour: h, counts: { ...emptyCounts(), ...c } };
  }
  const hours = [
    hour('2026-11-18T23', { attempts: 100, delivered: 100, byResponseStatus: { '200': 100 } }), // outside both windows
    hour('2026-11-20T08', {
      attempts: 4,
      delivered: 1,
      failed: 3,
      failedPermanent: 1,
      byResponseStatus: { '200': 1, '503': 2, '410': 1 },
      latency: { 4: 4 },
    }),
    hour('2026-11-24T12', { attempts: 9, delivered: 9, byResponseStatus: { '200': 9 }, latency: { 4: 9 } }), // 7d only: 24h starts at 13:00
    hour('2026-11-24T13', {
      attempts: 2,
      delivered: 1,
      failed: 1,
      deadLettered: 1,
      byResponseStatus: { '200': 1, timeout: 1 },
      latency: { 4: 1, 16: 1 },
    }),
    hour('2026-11-25T12', {
      attempts: 1,
      delivered: 1,
      byResponseStatus: { '200': 1 },
      latency: { 2: 1 },
      lastAttemptAt: '2026-11-25T12:30:00.000Z',
    }),
  ];

  it('24h sums the hours inside the window into hourly buckets', () => {
    const h = summarizeHealth('whe_A', '24h', now, hours);
    expect(h).toMatchObject({ endpointId: 'whe_A', window: '24h', from: '2026-11-24T13:00:00.000Z', to: now.toISOString() });
    expect(h).toMatchObject({ attempts: 3, delivered: 2, failed: 1, failedPermanent: 0, deadLettered: 1, successRate: 0.6667 });
    expect(h.byResponseStatus).toEqual({ '200': 2, timeout: 1 });
    expect(h.latencyMs).toEqual({ p50: 100, p95: 15_000 });
    expect(h.series).toHaveLength(24);
    expect(h.series[0]).toEqual({ start: '2026-11-24T13:00:00.000Z', delivered: 1, failed: 1 });
    expect(h.series[23]).toEqual({ start: '2026-11-25T12:00:00.000Z', delivered: 1, failed: 0 });
    expect(h.series.slice(1, 23).every((b) => b.delivered === 0 && b.failed === 0)).toBe(true);
  });

  it('7d sums them into daily buckets', () => {
    const h = summarizeHealth('whe_A', '7d', now, hours);
    expect(h).toMatchObject({
      from: '2026-11-19T00:00:00.000Z',
      attempts: 16,
      delivered: 12,
      failed: 4,
      failedPermanent: 1,
      deadLettered: 1,
      successRate: 0.75,
    });
    expect(h.series.map((b) => [b.start.slice(0, 10), b.delivered, b.failed])).toEqual([
      ['2026-11-19', 0, 0],
      ['2026-11-20', 1, 3],
      ['2026-11-21', 0, 0],
      ['2026-11-22', 0, 0],
      ['2026-11-23', 0, 0],
      ['2026-11-24', 10, 1],
      ['2026-11-25', 1, 0],
    ]);
  });

  it('has a null success rate and null percentiles with no attempts', () => {
    const h = summarizeHealth('whe_A', '24h', now, []);
    expect(h).toMatchObject({ attempts: 0, successRate: null, latencyMs: { p50: null, p95: null }, byResponseStatus: {} });
    expect(h.series.every((b) => b.delivered === 0 && b.failed === 0)).toBe(true);
  });

  it("summarizes an endpoint's last 24 h and latest attempt; sums a workspace's last 24 h", () => {
    expect(summarizeEndpoint(now, hours)).toEqual({ successRate24h: 0.6667, lastAttemptAt: '2026-11-25T12:30:00.000Z' });
    expect(summarizeEndpoint(now, [])).toEqual({ successRate24h: null, lastAttemptAt: null });
    expect(
      summarizeEndpoint(now, [hour('2026-11-20T08', { attempts: 1, delivered: 1, lastAttemptAt: '2026-11-20T08:15:00.000Z' })]),
    ).toEqual({
      successRate24h: null,
      lastAttemptAt: '2026-11-20T08:15:00.000Z',
    });
    expect(workspaceLast24h(now, hours)).toEqual({ delivered: 2, failed: 1, deadLettered: 1 });
  });
});
