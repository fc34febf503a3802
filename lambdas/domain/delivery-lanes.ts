/**
 * Delivery lanes (docs/behaviour.md#delivery-lanes): one slow receiver must not slow the service.
 * An endpoint that is failing or slow has its deliveries in the slow lane, a queue of its own
 * with its own dispatcher and concurrency; everything else is in the fast lane, whose batches
 * then finish in about the time of a healthy receiver. Inside the slow lane, a batch attempts
 * only a few deliveries per endpoint and per workspace and defers the rest, so one black-hole
 * receiver cannot fill the lane either. Pure: the dispatcher and the publisher do the I/O.
 */

/** A lane: the queue a delivery waits in. */
export type Lane = 'fast' | 'slow';

/**
 * Where the dispatcher runs: in one of the two lanes, or `only` when the stage has a single
 * queue (no slow lane wired): then nothing moves, as before lanes existed.
 */
export type LaneRole = Lane | 'only';

/** The slow lane's numbers, defined once (the CDK wiring, the local stack and the docs read them here). */
export const SLOW_LANE = {
  /** An attempt that took at least this long (whatever its outcome) marks its endpoint slow. */
  slowAttemptMs: 3_000,
  /** How long a slow mark lasts after the slow attempt: later deliveries wait in the slow lane meanwhile. */
  markMinutes: 15,
  /** A mark with more than this left is not written again (at most one write per endpoint per few minutes). */
  remarkMinutes: 10,
  /** Deliveries of one endpoint a slow-lane batch attempts; the rest of that endpoint's are deferred. */
  perEndpointPerBatch: 2,
  /** Deliveries of one workspace a slow-lane batch attempts; the rest of that workspace's are deferred. */
  perWorkspacePerBatch: 4,
  /** How long a deferred delivery waits before it is received again. */
  deferSeconds: 20,
} as const;

/** What the lane rule reads of an endpoint. */
export interface LaneState {
  readonly consecutiveFailures: number;
  /** Until when the endpoint counts as slow (ISO 8601); absent: not marked. */
  readonly slowUntil?: string | null;
}

/** The lane of an endpoint's deliveries now: slow while it has a failure streak or a live slow mark. */
export function laneOf(endpoint: LaneState, now: Date): Lane {
  if (endpoint.consecutiveFailures > 0) return 'slow';
  const until = endpoint.slowUntil ? Date.parse(endpoint.slowUntil) : Number.NaN;
  return Number.isFinite(until) && until > now.getTime() ? 'slow' : 'fast';
}

/**
 * The slow mark to write after an attempt that took `durationMs`, or null: none when the attempt
 * was quick, or when the endpoint's mark already lasts long enough.
 */
export function slowMarkAfter(endpoint: LaneState, durationMs: number | null, now: Date): string | null {
  if (durationMs === null || durationMs < SLOW_LANE.slowAttemptMs) return null;
  const until = endpoint.slowUntil ? Date.parse(endpoint.slowUntil) : Number.NaN;
  if (Number.isFinite(until) && until - now.getTime() > SLOW_LANE.remarkMinutes * 60_000) return null;
  return new Date(now.getTime() + SLOW_LANE.markMinutes * 60_000).toISOString();
}

/** What a batch knows of a message before reading anything: its endpoint and workspace, when the message says. */
export interface Addressed {
  readonly endpointId?: string;
  readonly workspace?: string;
}

/**
 * Splits a slow-lane batch into the messages to attempt now and those to defer: in message order,
 * at most {@link SLOW_LANE.perEndpointPerBatch} per endpoint and {@link SLOW_LANE.perWorkspacePerBatch}
 * per workspace. A message that does not name its endpoint and workspace is always attempted.
 * As the slow lane runs a fixed number of batches at once, this caps every endpoint and every
 * workspace in flight in the whole lane, not just in one batch.
 */
export function selectForAttempt<T extends Addressed>(messages: readonly T[]): { attempt: T[]; defer: T[] } {
  const perEndpoint = new Map<string, number>();
  const perWorkspace = new Map<string, number>();
  const attempt: T[] = [];
  const defer: T[] = [];
  for (const m of messages) {
    if (!m.endpointId || !m.workspace) {
      attempt.push(m);
      continue;
    }
    const endpoint = `${m.workspace}/${m.endpointId}`;
    const ep = perEndpoint.get(endpoint) ?? 0;
    const ws = perWorkspace.get(m.workspace) ?? 0;
    if (ep >= SLOW_LANE.perEndpointPerBatch || ws >= SLOW_LANE.perWorkspacePerBatch) {
      defer.push(m);
      continue;
    }
    perEndpoint.set(endpoint, ep + 1);
    perWorkspace.set(m.workspace, ws + 1);
    attempt.push(m);
  }
  return { attempt, defer };
}
