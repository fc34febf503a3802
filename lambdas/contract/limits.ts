/**
 * The numbers the contract publishes, defined once (docs/behaviour.md#limits):
 * the rules that apply them, the CDK constructs, the local stack and the
 * OpenAPI prose all read them here, and the console may import them (this file imports
 * only `aws-limits.ts`, which imports nothing). The receive limit lives with its rule in
 * lambdas/domain/delivery-lifecycle.ts, the backoff's numbers in lambdas/domain/backoff.ts.
 */
import {
  EVENTBRIDGE_DETAIL_TYPE_MAX_CHARS,
  EVENTBRIDGE_ENTRY_BYTES,
  EVENTBRIDGE_SOURCE_MAX_CHARS,
  EVENTBRIDGE_TIME_BYTES,
} from './aws-limits';

/** Limits of one outbound POST: the request deadline, and the response body read as a bounded prefix under its own deadline. */
export const SEND_LIMITS = { deadlineMs: 10_000, bodyReadMs: 2_000, bodyCapBytes: 2048 } as const;

/** Sent as `user-agent` on every delivery. */
export const USER_AGENT = 'webhook-delivery-service/1.0 (Standard Webhooks)';

/** How long a replaced signing secret keeps signing after a rotation. */
export const SECRET_GRACE_HOURS = 24;

/** The longest workspace slug, in characters (ASCII: one byte each). */
export const WORKSPACE_SLUG_MAX_CHARS = 63;

/**
 * The `Detail` of a producer's PutEvents entry around the payload, at its largest:
 * `{"workspace":"<longest slug>","payload":…}` less the payload.
 */
const DETAIL_ENVELOPE_BYTES = JSON.stringify({ workspace: 'w'.repeat(WORKSPACE_SLUG_MAX_CHARS), payload: null }).length - 'null'.length;

/**
 * Largest event payload accepted, in bytes of its JSON (docs/behaviour.md#event-publishing): what
 * an EventBridge entry holds whatever else it carries, so any payload at most this size reaches
 * the publisher. The entry's limit less `Time` (set or not), the longest `Source` and `DetailType`
 * EventBridge allows (an ASCII source: one byte a character; event type names are ASCII) and the
 * `{workspace, payload}` envelope with the longest slug; no `Resources`.
 */
export const MAX_PAYLOAD_BYTES =
  EVENTBRIDGE_ENTRY_BYTES -
  EVENTBRIDGE_TIME_BYTES -
  EVENTBRIDGE_SOURCE_MAX_CHARS -
  EVENTBRIDGE_DETAIL_TYPE_MAX_CHARS -
  DETAIL_ENVELOPE_BYTES;

/**
 * Deepest nesting of an event payload accepted (docs/behaviour.md#limits): arrays and objects
 * within one another, a payload that is one counting as level 1. Kept well under the recursion
 * limits of receivers' JSON parsers (serde_json's is 128; the request body adds a level), and
 * checked before anything is written, so an event is either stored and delivered whole or refused.
 */
export const MAX_PAYLOAD_DEPTH = 64;

/** Consecutive failed attempts that disable an endpoint (docs/behaviour.md#failure-streak-and-auto-disable). */
export const DISABLE_THRESHOLD = 20;

/**
 * Per-workspace limits (docs/behaviour.md#rate-limits), shared by every token of a workspace,
 * REST and MCP alike: interactive test sends and replays per minute (recovery jobs are paced by
 * their own setting instead), and how many endpoints and API tokens a workspace may have.
 */
export interface WorkspaceLimits {
  /** Test events sent per minute. */
  readonly testSendsPerMinute: number;
  /** Interactive (single) replays per minute. */
  readonly replaysPerMinute: number;
  /** Webhook endpoints a workspace may have. */
  readonly endpoints: number;
  /** API tokens a workspace may have (revoking one frees its slot). */
  readonly apiTokens: number;
}

/** The names of {@link WorkspaceLimits}, in the order they are documented. */
export const WORKSPACE_LIMIT_NAMES = [
  'testSendsPerMinute',
  'replaysPerMinute',
  'endpoints',
  'apiTokens',
] as const satisfies readonly (keyof WorkspaceLimits)[];

/** The limits of a workspace unless the stage's `workspaceLimits` setting overrides them: generous, so only a runaway client meets them. */
export const DEFAULT_WORKSPACE_LIMITS: WorkspaceLimits = { testSendsPerMinute: 60, replaysPerMinute: 600, endpoints: 1000, apiTokens: 100 };

/** The bounds of each workspace limit setting (an integer). */
export const WORKSPACE_LIMIT_BOUNDS = { min: 1, max: 100_000 } as const;

/** The environment variable that carries the complete limits (JSON) to the functions running operations. */
export const WORKSPACE_LIMITS_ENV = 'WORKSPACE_LIMITS';

/**
 * Merges partial overrides (e.g. parsed from {@link WORKSPACE_LIMITS_ENV}) over the defaults;
 * entries that are not integers within {@link WORKSPACE_LIMIT_BOUNDS} are ignored (the stage
 * configuration refuses them at synth).
 */
export function resolveWorkspaceLimits(overrides: unknown): WorkspaceLimits {
  const out: Record<keyof WorkspaceLimits, number> = { ...DEFAULT_WORKSPACE_LIMITS };
  if (overrides && typeof overrides === 'object') {
    for (const name of WORKSPACE_LIMIT_NAMES) {
      const n = (overrides as Record<string, unknown>)[name];
      if (typeof n === 'number' && Number.isInteger(n) && n >= WORKSPACE_LIMIT_BOUNDS.min && n <= WORKSPACE_LIMIT_BOUNDS.max) out[name] = n;
    }
  }
  return out;
}

/**
 * Custom headers of an endpoint (docs/behaviour.md#custom-headers): at most this many, and at most
 * this many bytes of names and values together (UTF-8), so a request's header block stays small.
 */
export const CUSTOM_HEADER_LIMITS = { maxHeaders: 20, maxTotalBytes: 8192 } as const;

/** The bounds of an endpoint's `rateLimitPerSecond` (docs/behaviour.md#delivery-rate-per-endpoint), an integer; unset: no limit. */
export const RATE_LIMIT_PER_SECOND_BOUNDS = { min: 1, max: 1000 } as const;

/**
 * The token request of OAuth 2.0 client credentials (docs/behaviour.md#oauth-20-client-credentials):
 * its own deadline inside the attempt's {@link SEND_LIMITS} `deadlineMs` (name resolution included),
 * the response read as at most `bodyCapBytes`, and a token dropped `refreshBeforeExpirySeconds`
 * before its `expires_in` runs out.
 */
export const OAUTH_TOKEN_LIMITS = { deadlineMs: 3_000, bodyCapBytes: 16_384, refreshBeforeExpirySeconds: 30 } as const;

/** What is shown instead of a secret value: a secret header's, in reads and in an attempt's recorded request headers. */
export const REDACTED = '<redacted>';
