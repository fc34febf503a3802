/**
 * Rate limiting (docs/behaviour.md#rate-limits): per client (API token), a DynamoDB fixed-window
 * counter when a table is bound, an in-process token bucket when it is not; per workspace (test
 * sends, replays), always the fixed window in the operations' table, since every container of
 * every function shares the quota.
 */
import { AppError } from '../contract/errors';
import { DEFAULT_WORKSPACE_LIMITS, type WorkspaceLimits } from '../contract/limits';
import type { MetricsRecorder } from '../contract/metrics';
import {
  resolveQuotas,
  workspaceQuotaRefusal,
  workspaceQuotas,
  type Quota,
  type RateLimitBucket,
  type WorkspaceQuotaBucket,
} from '../contract/rate-limits';
import type { TableContext } from '../store/client';
import { hitWindow, type RateDecision } from '../store/rate-limits';
import type { OperationDeps } from './context';

/** Checks one request of a client against a bucket. */
export interface RateLimiter {
  hit(bucket: RateLimitBucket, clientKey: string): Promise<RateDecision>;
}

/**
 * Counts one request of `clientKey` in `bucket` and throws `RateLimited` (429, with the seconds to
 * wait) when it is over the quota: the one refusal every surface gives (the MCP gate, each MCP tool call).
 */
export async function chargeRateLimit(limiter: RateLimiter, bucket: RateLimitBucket, clientKey: string): Promise<void> {
  const decision = await limiter.hit(bucket, clientKey);
  if (!decision.allowed)
    throw rateLimited(
      `Too many ${bucket} requests for this token; retry after ${decision.retryAfterSeconds} s`,
      decision.retryAfterSeconds,
    );
}

/** The one refusal of every quota, per token or per workspace: 429 `RateLimited` with `Retry-After`. */
function rateLimited(detail: string, retryAfterSeconds: number): AppError {
  return new AppError('RateLimited', detail, {}, retryAfterSeconds);
}

/** The workspace limits an operation runs with: its deps' own, else the defaults. */
export function workspaceLimitsOf(deps: Pick<OperationDeps, 'workspaceLimits'>): WorkspaceLimits {
  return deps.workspaceLimits ?? DEFAULT_WORKSPACE_LIMITS;
}

/**
 * Counts one test send or interactive replay of `workspace` against the workspace's per-minute
 * quota and throws `RateLimited` when it is used up. Charged by the operation just before it writes
 * anything, so a refused call changes nothing and a call refused for another reason (404, 409)
 * costs no quota; an idempotent repeat never reaches the operation, so it is not charged either.
 */
export async function chargeWorkspaceQuota(
  deps: Pick<OperationDeps, 'table' | 'now' | 'workspaceLimits' | 'metrics'>,
  bucket: WorkspaceQuotaBucket,
  workspace: string,
): Promise<void> {
  const quota = workspaceQuotas(workspaceLimitsOf(deps))[bucket];
  const decision = await hitWindow(deps.table, bucket, workspace, quota, deps.now());
  if (!decision.allowed) {
    deps.metrics?.add('rateLimitRefusals', 1, { bucket });
    throw rateLimited(workspaceQuotaRefusal(bucket, quota.limit, decision.retryAfterSeconds), decision.retryAfterSeconds);
  }
}

/**
 * `limiter`, counting each refusal in `metrics` by bucket (docs/operations.md): every surface asks
 * the runtime's limiter (the REST guard, the MCP gate and tools), so one wrapper counts them all.
 */
export function countingRefusals(limiter: RateLimiter, metrics: MetricsRecorder): RateLimiter {
  return {
    async hit(bucket, clientKey) {
      const decision = await limiter.hit(bucket, clientKey);
      if (!decision.allowed) metrics.add('rateLimitRefusals', 1, { bucket });
      return decision;
    },
  };
}

/** The DynamoDB fixed-window limiter. */
export function tableRateLimiter(
  table: TableContext,
  quotas: Record<RateLimitBucket, Quota>,
  now: () => Date = () => new Date(),
): RateLimiter {
  return { hit: (bucket, key) => hitWindow(table, bucket, key, quotas[bucket], now()) };
}

/** The in-process token bucket: `limit` tokens refilled evenly over the window. */
export function memoryRateLimiter(quotas: Record<RateLimitBucket, Quota>, now: () => number = Date.now): RateLimiter {
  const buckets = new Map<string, { tokens: number; at: number }>();
  return {
    async hit(bucket, key) {
      const quota = quotas[bucket];
      const ratePerMs = quota.limit / (quota.windowSeconds * 1000);
      const id = `${bucket}#${key}`;
      const t = now();
      const state = buckets.get(id) ?? { tokens: quota.limit, at: t };
      state.tokens = Math.min(quota.limit, state.tokens + (t - state.at) * ratePerMs);
      state.at = t;
      buckets.set(id, state);
      if (state.tokens >= 1) {
        state.tokens -= 1;
        return { allowed: true, retryAfterSeconds: 0 };
      }
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - state.tokens) / ratePerMs / 1000)) };
    },
  };
}

/** The limiter for an environment: table-backed when `RATE_LIMIT_TABLE_NAME` is bound. */
export function rateLimiterFor(table: TableContext | undefined, quotasJson: string | undefined): RateLimiter {
  let overrides: unknown;
  try {
    overrides = quotasJson ? JSON.parse(quotasJson) : undefined;
  } catch {
    overrides = undefined;
  }
  const quotas = resolveQuotas(overrides);
  return table ? tableRateLimiter(table, quotas) : memoryRateLimiter(quotas);
}
