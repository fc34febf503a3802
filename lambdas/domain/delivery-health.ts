/**
 * The rule of endpoint health (docs/behaviour.md#endpoint-health), pure: which recorded
 * observations count and how, the hour a batch's counts land in, the latency histogram and its
 * percentiles, the `timeout` / `network_error` / protocol-failure keys, the windows and their buckets,
 * and the counters' lifetime. The dispatcher and the dead-letter consumer feed it one batch at
 * a time; the store adds its increments; the health operation reads the hours back through it.
 */
import { LATENCY_BUCKET_BOUNDS_MS, type EndpointHealth, type HealthWindow } from '../contract/health';
import { INVALID_STATUS, PROTOCOL_UPGRADE } from '../contract/delivery-statuses';
import type { EndpointHealthSummary } from '../contract/schemas';

/** One observation that recordObservation stored, as health sees it. */
export interface HealthObservation {
  readonly workspace: string;
  readonly endpointId: string;
  /** True for an HTTP attempt (a URL refused at dispatch included); false for bookkeeping. */
  readonly http: boolean;
  readonly outcome: 'delivered' | 'failed' | 'failed_permanent' | 'dead_lettered';
  /** When the attempt (or the bookkeeping) started, ISO 8601. */
  readonly timestamp: string;
  readonly durationMs: number | null;
  readonly responseStatus: number | null;
  readonly failureReason: string | null;
}

/** The scalar counts, kept per (endpoint, hour) and per (workspace, hour). */
export interface ScalarCounts {
  attempts: number;
  delivered: number;
  /** Failed attempts, retryable and permanent. */
  failed: number;
  /** Of `failed`, the permanent ones. */
  failedPermanent: number;
  deadLettered: number;
}

/** What one (endpoint, hour) counter holds. */
export interface EndpointCounts extends ScalarCounts {
  /** Attempts by response key: a status code as a string, `protocol_upgrade`, `invalid_status`, `timeout` or `network_error`. */
  byResponseStatus: Record<string, number>;
  /** Attempts per histogram bucket, by bucket index (see {@link latencyBucket}); absent = 0. */
  latency: Record<number, number>;
  /** The latest attempt start counted; null when none (only bookkeeping). */
  lastAttemptAt: string | null;
}

/** The response key of an attempt without a response that timed out. */
const TIMEOUT_KEY = 'timeout';
/** The response key of every other attempt without a response (refused, reset, TLS, DNS, refused URL). */
const NETWORK_ERROR_KEY = 'network_error';

/** The UTC hour an instant falls in, as counters are keyed: `YYYY-MM-DDTHH`. */
export function hourOf(instant: string | Date): string {
  return (typeof instant === 'string' ? new Date(instant) : instant).toISOString().slice(0, 13);
}

/** The start of an hour key, as a Date. */
function hourStart(hour: string): Date {
  return new Date(`${hour}:00:00.000Z`);
}

/**
 * The `byResponseStatus` key of an HTTP attempt: its status, or for a receiver that broke the
 * protocol (a protocol switch, a status outside 100–599) that failure reason, so nonsense statuses
 * never mint keys of their own.
 */
export function responseKey(obs: Pick<HealthObservation, 'responseStatus' | 'failureReason'>): string {
  if (obs.failureReason === PROTOCOL_UPGRADE || obs.failureReason === INVALID_STATUS) return obs.failureReason;
  if (obs.responseStatus !== null) return String(obs.responseStatus);
  return obs.failureReason === 'timeout' ? TIMEOUT_KEY : NETWORK_ERROR_KEY;
}

/** The histogram bucket of a duration: the first bound it does not exceed; the overflow bucket past the last. */
export function latencyBucket(durationMs: number): number {
  const i = LATENCY_BUCKET_BOUNDS_MS.findIndex((bound) => durationMs <= bound);
  return i === -1 ? LATENCY_BUCKET_BOUNDS_MS.length : i;
}

/** Number of histogram buckets (the bounds and the overflow). */
const LATENCY_BUCKETS = LATENCY_BUCKET_BOUNDS_MS.length + 1;

/**
 * The nearest-rank percentile `p` (0 < p ≤ 1) of a histogram, as the upper bound of the bucket
 * holding that rank (the last bound for the overflow bucket); null when the histogram is empty.
 */
export function percentile(histogram: Readonly<Record<number, number>>, p: number): number | null {
  let total = 0;
  for (let i = 0; i < LATENCY_BUCKETS; i++) total += histogram[i] ?? 0;
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(p * total));
  let seen = 0;
  for (let i = 0; i < LATENCY_BUCKETS; i++) {
    seen += histogram[i] ?? 0;
    if (seen >= rank) return LATENCY_BUCKET_BOUNDS_MS[Math.min(i, LATENCY_BUCKET_BOUNDS_MS.length - 1)]!;
  }
  return LATENCY_BUCKET_BOUNDS_MS[LATENCY_BUCKET_BOUNDS_MS.length - 1]!;
}

/** True for an observation the counters count: an HTTP attempt or a dead-lettering. */
function counts(obs: HealthObservation): boolean {
  return obs.http || obs.outcome === 'dead_lettered';
}

/** Zero counts. */
export function emptyCounts(): EndpointCounts {
  return {
    attempts: 0,
    delivered: 0,
    failed: 0,
    failedPermanent: 0,
    deadLettered: 0,
    byResponseStatus: {},
    latency: {},
    lastAttemptAt: null,
  };
}

function addObservation(c: EndpointCounts, obs: HealthObservation): void {
  if (!obs.http) {
    // Only dead-lettering reaches here (see `counts`); `endpoint_disabled` bookkeeping is no attempt.
    c.deadLettered++;
    return;
  }
  c.attempts++;
  if (obs.outcome === 'delivered') c.delivered++;
  else c.failed++;
  if (obs.outcome === 'failed_permanent') c.failedPermanent++;
  const key = responseKey(obs);
  c.byResponseStatus[key] = (c.byResponseStatus[key] ?? 0) + 1;
  const bucket = latencyBucket(obs.durationMs ?? 0);
  c.latency[bucket] = (c.latency[bucket] ?? 0) + 1;
  if (c.lastAttemptAt === null || obs.timestamp > c.lastAttemptAt) c.lastAttemptAt = obs.timestamp;
}

/** The increments of one batch: at most one per endpoint and one per workspace, all in one hour. */
export interface BatchIncrements {
  /** The hour every increment of the batch lands in. */
  readonly hour: string;
  readonly endpoints: readonly { readonly workspace: string; readonly endpointId: string; readonly counts: EndpointCounts }[];
  readonly workspaces: readonly { readonly workspace: string; readonly counts: ScalarCounts }[];
}

/**
 * Sums a batch's recorded observations into one increment per endpoint and one per workspace.
 * The whole batch lands in the hour of its earliest counted observation, so each counter key
 * takes at most one write per batch, even for a batch that straddles an hour (its records start
 * within the same few seconds; docs/architecture.md#health-counters). Null when nothing counts.
 */
export function aggregateBatch(observations: readonly HealthObservation[]): BatchIncrements | null {
  const counted = observations.filter(counts);
  if (counted.length === 0) return null;
  const earliest = counted.reduce((min, o) => (o.timestamp < min ? o.timestamp : min), counted[0]!.timestamp);
  const endpoints = new Map<string, { workspace: string; endpointId: string; counts: EndpointCounts }>();
  const workspaces = new Map<string, EndpointCounts>();
  for (const obs of counted) {
    let ep = endpoints.get(obs.endpointId);
    if (!ep) endpoints.set(obs.endpointId, (ep = { workspace: obs.workspace, endpointId: obs.endpointId, counts: emptyCounts() }));
    addObservation(ep.counts, obs);
    let ws = workspaces.get(obs.workspace);
    if (!ws) workspaces.set(obs.workspace, (ws = emptyCounts()));
    addObservation(ws, obs);
  }
  return {
    hour: hourOf(earliest),
    endpoints: [...endpoints.values()],
    workspaces: [...workspaces.entries()].map(([workspace, c]) => ({ workspace, counts: scalars(c) })),
  };
}

function scalars(c: ScalarCounts): ScalarCounts {
  return {
    attempts: c.attempts,
    delivered: c.delivered,
    failed: c.failed,
    failedPermanent: c.failedPermanent,
    deadLettered: c.deadLettered,
  };
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** How each window is bucketed. */
const HEALTH_WINDOWS: Readonly<Record<HealthWindow, { readonly bucketMs: number; readonly buckets: number }>> = {
  '24h': { bucketMs: HOUR_MS, buckets: 24 },
  '7d': { bucketMs: DAY_MS, buckets: 7 },
};

/** The longest window's reach, in days; counters older than it are never read. */
const LONGEST_WINDOW_DAYS = Math.max(...Object.values(HEALTH_WINDOWS).map((w) => Math.ceil((w.bucketMs * w.buckets) / DAY_MS)));

/** Margin past the longest window before a counter may expire. */
const EXPIRY_MARGIN_DAYS = 1;

/** The TTL (Unix seconds) of an hour's counter: the longest window plus a margin after the hour starts. */
export function counterExpiresAtEpoch(hour: string): number {
  return Math.ceil((hourStart(hour).getTime() + (LONGEST_WINDOW_DAYS + EXPIRY_MARGIN_DAYS) * DAY_MS) / 1000);
}

/** A window's buckets at `now`: the current (partial) bucket and the ones before it, oldest first. */
export function windowBuckets(
  window: HealthWindow,
  now: Date,
): { from: Date; to: Date; starts: Date[]; firstHour: string; lastHour: string } {
  const { bucketMs, buckets } = HEALTH_WINDOWS[window];
  const current = Math.floor(now.getTime() / bucketMs) * bucketMs;
  const starts = Array.from({ length: buckets }, (_, i) => new Date(current - (buckets - 1 - i) * bucketMs));
  return { from: starts[0]!, to: now, starts, firstHour: hourOf(starts[0]!), lastHour: hourOf(now) };
}

/** `delivered` / `attempts`, rounded to 4 decimals; null with no attempt. */
function successRate(delivered: number, attempts: number): number | null {
  return attempts === 0 ? null : Math.round((delivered / attempts) * 10_000) / 10_000;
}

/** One hour's counter as read back. */
export interface HourCounts {
  readonly hour: string;
  readonly counts: EndpointCounts;
}

/** An endpoint's health over `window` at `now`, from its hour counters (those outside the window are ignored). */
export function summarizeHealth(endpointId: string, window: HealthWindow, now: Date, hours: readonly HourCounts[]): EndpointHealth {
  const w = windowBuckets(window, now);
  const total = emptyCounts();
  const series = w.starts.map((start) => ({ start: start.toISOString(), delivered: 0, failed: 0 }));
  const { bucketMs } = HEALTH_WINDOWS[window];
  for (const { hour, counts: c } of hours) {
    if (hour < w.firstHour || hour > w.lastHour) continue;
    total.attempts += c.attempts;
    total.delivered += c.delivered;
    total.failed += c.failed;
    total.failedPermanent += c.failedPermanent;
    total.deadLettered += c.deadLettered;
    for (const [k, v] of Object.entries(c.byResponseStatus)) total.byResponseStatus[k] = (total.byResponseStatus[k] ?? 0) + v;
    for (const [k, v] of Object.entries(c.latency)) total.latency[Number(k)] = (total.latency[Number(k)] ?? 0) + v;
    const bucket = series[Math.floor((hourStart(hour).getTime() - w.from.getTime()) / bucketMs)]!;
    bucket.delivered += c.delivered;
    bucket.failed += c.failed;
  }
  return {
    endpointId,
    window,
    from: w.from.toISOString(),
    to: w.to.toISOString(),
    attempts: total.attempts,
    delivered: total.delivered,
    failed: total.failed,
    failedPermanent: total.failedPermanent,
    deadLettered: total.deadLettered,
    successRate: successRate(total.delivered, total.attempts),
    latencyMs: { p50: percentile(total.latency, 0.5), p95: percentile(total.latency, 0.95) },
    byResponseStatus: total.byResponseStatus,
    series,
  };
}

/**
 * The summary shown on an endpoint: the 24 h success rate and the latest attempt in the 7-day
 * window, from its most recent hour counters (at least every one of the last 24 hours).
 */
export function summarizeEndpoint(now: Date, hours: readonly HourCounts[]): EndpointHealthSummary {
  const { firstHour } = windowBuckets('24h', now);
  const oldestHour = summaryFirstHour(now);
  const lastHour = hourOf(now);
  let attempts = 0;
  let delivered = 0;
  let lastAttemptAt: string | null = null;
  for (const { hour, counts: c } of hours) {
    if (hour > lastHour || hour < oldestHour) continue;
    if (hour >= firstHour) {
      attempts += c.attempts;
      delivered += c.delivered;
    }
    if (c.lastAttemptAt !== null && (lastAttemptAt === null || c.lastAttemptAt > lastAttemptAt)) lastAttemptAt = c.lastAttemptAt;
  }
  return { successRate24h: successRate(delivered, attempts), lastAttemptAt };
}

/** The oldest hour whose counters {@link summarizeEndpoint} looks at: the start of the 7-day window. */
export function summaryFirstHour(now: Date): string {
  return windowBuckets('7d', now).firstHour;
}

/** Sums a workspace's hour counters within the 24 h window at `now`. */
export function workspaceLast24h(
  now: Date,
  hours: readonly { hour: string; counts: ScalarCounts }[],
): { delivered: number; failed: number; deadLettered: number } {
  const { firstHour } = windowBuckets('24h', now);
  const lastHour = hourOf(now);
  const out = { delivered: 0, failed: 0, deadLettered: 0 };
  for (const { hour, counts: c } of hours) {
    if (hour < firstHour || hour > lastHour) continue;
    out.delivered += c.delivered;
    out.failed += c.failed;
    out.deadLettered += c.deadLettered;
  }
  return out;
}
