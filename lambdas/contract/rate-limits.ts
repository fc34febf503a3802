/**
 * Rate-limit buckets (docs/behaviour.md#rate-limits). Each route declares one; quotas are
 * configuration (cdk context `rateLimits`, env `RATE_LIMITS`) over these defaults. The per-workspace
 * quotas' numbers are in lambdas/contract/limits.ts (`workspaceLimits`).
 */
import { DEFAULT_WORKSPACE_LIMITS, type WorkspaceLimits } from './limits';

/** The buckets a route can declare. */
export const RATE_LIMIT_BUCKETS = ['rest_read', 'rest_write', 'assistant', 'mcp'] as const;
export type RateLimitBucket = (typeof RATE_LIMIT_BUCKETS)[number];

/** A quota: at most `limit` requests per client per `windowSeconds`. */
export interface Quota {
  readonly limit: number;
  readonly windowSeconds: number;
}

/** Default quotas per client (API token). */
export const DEFAULT_QUOTAS: Readonly<Record<RateLimitBucket, Quota>> = {
  rest_read: { limit: 600, windowSeconds: 60 },
  rest_write: { limit: 120, windowSeconds: 60 },
  assistant: { limit: 30, windowSeconds: 60 },
  mcp: { limit: 300, windowSeconds: 60 },
};

/** Merges partial overrides (e.g. from JSON configuration) over the defaults; invalid entries are ignored. */
export function resolveQuotas(overrides: unknown): Record<RateLimitBucket, Quota> {
  const out = { ...DEFAULT_QUOTAS };
  if (overrides && typeof overrides === 'object') {
    for (const bucket of RATE_LIMIT_BUCKETS) {
      const o = (overrides as Record<string, unknown>)[bucket] as Partial<Quota> | undefined;
      if (!o || typeof o !== 'object') continue;
      const limit = Number(o.limit ?? out[bucket].limit);
      const windowSeconds = Number(o.windowSeconds ?? out[bucket].windowSeconds);
      if (Number.isInteger(limit) && limit > 0 && Number.isInteger(windowSeconds) && windowSeconds > 0) {
        out[bucket] = { limit, windowSeconds };
      }
    }
  }
  return out;
}

/**
 * Quotas counted per workspace rather than per token (every token of the workspace, REST and MCP
 * alike, shares them): interactive test sends and single replays. Recovery jobs are not charged:
 * the stage's `recoveryRatePerSecond` paces them.
 */
export type WorkspaceQuotaBucket = 'workspace_test_send' | 'workspace_replay';

/** What each workspace quota counts, as its refusal names it (singular; an `s` makes the plural). */
export const WORKSPACE_QUOTA_NOUNS: Readonly<Record<WorkspaceQuotaBucket, string>> = {
  workspace_test_send: 'test send',
  workspace_replay: 'replay',
};

/** The per-minute workspace quotas of a workspace's limits. */
export function workspaceQuotas(limits: WorkspaceLimits): Record<WorkspaceQuotaBucket, Quota> {
  return {
    workspace_test_send: { limit: limits.testSendsPerMinute, windowSeconds: 60 },
    workspace_replay: { limit: limits.replaysPerMinute, windowSeconds: 60 },
  };
}

/** The quota bucket of each per-minute workspace limit. */
export const WORKSPACE_QUOTA_BUCKET: Readonly<Partial<Record<keyof WorkspaceLimits, WorkspaceQuotaBucket>>> = {
  testSendsPerMinute: 'workspace_test_send',
  replaysPerMinute: 'workspace_replay',
};

/** What a workspace count limit counts, as its refusal and the descriptions name it. */
export const WORKSPACE_COUNTED: Readonly<
  Record<'endpoints' | 'apiTokens', { readonly noun: string; readonly one: string; readonly free: string; readonly freeing: string }>
> = {
  endpoints: { noun: 'webhook endpoints', one: 'webhook endpoint', free: 'delete', freeing: 'deleting' },
  apiTokens: { noun: 'API tokens', one: 'API token', free: 'revoke', freeing: 'revoking' },
};

/**
 * The `detail` of the refusal at a workspace limit, as the operations word it (with `limits`, and
 * for a quota the seconds to wait): the OpenAPI examples show it with the default limits.
 */
export function workspaceLimitRefusal(
  limit: keyof WorkspaceLimits,
  limits: WorkspaceLimits = DEFAULT_WORKSPACE_LIMITS,
  retryAfterSeconds = 12,
): string {
  const n = limits[limit];
  const bucket = WORKSPACE_QUOTA_BUCKET[limit];
  return bucket ? workspaceQuotaRefusal(bucket, n, retryAfterSeconds) : workspaceCountRefusal(limit as keyof typeof WORKSPACE_COUNTED, n);
}

/** The detail of a 429 from a workspace's per-minute quota of `n`: the one wording, sent by the operations. */
export function workspaceQuotaRefusal(bucket: WorkspaceQuotaBucket, n: number, retryAfterSeconds: number): string {
  return `This workspace's quota of ${n} ${WORKSPACE_QUOTA_NOUNS[bucket]}${n === 1 ? '' : 's'} per minute, shared by all its tokens, is used up; retry after ${retryAfterSeconds} s`;
}

/** The detail of a 409 from a workspace's count limit of `n` endpoints or tokens: the one wording, sent by the operations. */
export function workspaceCountRefusal(counted: keyof typeof WORKSPACE_COUNTED, n: number): string {
  const c = WORKSPACE_COUNTED[counted];
  return `This workspace has ${n} ${n === 1 ? c.one : c.noun}, the most it may have; ${c.free} one first`;
}
