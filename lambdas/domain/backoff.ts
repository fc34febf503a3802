/** Retry schedule (docs/behaviour.md#retries-and-backoff): min(attempts, 6) × 30 s. */

/** Base retry delay. */
export const RETRY_DELAY_SECONDS = 30;
/** Automatic retries after the first attempt. */
export const MAX_RETRIES = 6;

/** Seconds to wait after the `attempts`-th failed attempt. */
export function retryDelaySeconds(attempts: number): number {
  return Math.min(Math.max(attempts, 1), MAX_RETRIES) * RETRY_DELAY_SECONDS;
}

/**
 * When the next attempt happens after the `attempts`-th failure at `now`. `timeScale` is the local
 * stack's (docs/architecture.md#the-local-stack): its queues wait every delay divided by it, so the
 * retry really comes that much sooner. Deployed stacks: 1.
 */
export function nextAttemptAt(attempts: number, now: Date, timeScale = 1): Date {
  return new Date(now.getTime() + (retryDelaySeconds(attempts) * 1000) / timeScale);
}
