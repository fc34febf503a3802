/**
 * The numbers the contract publishes, defined once (docs/behaviour.md#limits):
 * the rules that apply them, the CDK constructs, the local stack and the
 * OpenAPI prose all read them here, and the console may import them (this file imports
 * nothing). The receive limit lives with its rule in lambdas/domain/delivery-lifecycle.ts,
 * the backoff's numbers in lambdas/domain/backoff.ts.
 */

/** Limits of one outbound POST: the request deadline, and the response body read as a bounded prefix under its own deadline. */
export const SEND_LIMITS = { deadlineMs: 10_000, bodyReadMs: 2_000, bodyCapBytes: 2048 } as const;

/** Sent as `user-agent` on every delivery. */
export const USER_AGENT = 'webhook-delivery-service/1.0 (Standard Webhooks)';

/** How long a replaced signing secret keeps signing after a rotation. */
export const SECRET_GRACE_HOURS = 24;

/** Largest event payload accepted: an EventBridge event's limit. */
export const MAX_PAYLOAD_BYTES = 256 * 1024;

/** Consecutive failed attempts that disable an endpoint (docs/behaviour.md#failure-streak-and-auto-disable). */
export const DISABLE_THRESHOLD = 20;
