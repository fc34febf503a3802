/**
 * The dispatcher's last phase (docs/architecture.md#dispatcher): what the queue does with a
 * delivery's message, decided from what the earlier phases observed. Pure: no read, no write, no
 * clock (the observation carries the time it needs), so each rule is testable on its own.
 */
import { retryDelaySeconds } from '../domain/backoff';
import type { LaneRole } from '../domain/delivery-lanes';
import { awaitsDeadLetter, isTerminal, ENDPOINT_DISABLED, type Classified, type DeliveryRecord } from '../domain/delivery-lifecycle';
import type { HealthObservation } from '../domain/delivery-health';
import type { AttemptEffect } from '../store/deliveries';

/**
 * What the queue should do with the message, and what this dispatch recorded (absent when it
 * recorded nothing: a duplicate, a gone or terminal row), for the batch's health counts:
 * - `ack`: delete it;
 * - `retry`: receive it again in `delaySeconds` (the backoff), in the same lane;
 * - `move`: send it to the slow lane, due in `delaySeconds`, and delete this one
 *   (docs/behaviour.md#delivery-lanes): a move is no receive of the new message, so it uses up
 *   neither a retry nor a step toward the dead-letter queue;
 * - `dead_letter`: its retries are spent: send it to the dead-letter queue and delete this one.
 *
 * `disabled` is set when the attempt recorded disabled the endpoint (its failure streak reached the
 * threshold), for the auto-disable metric.
 */
export type DispatchResult =
  | { kind: 'ack'; reason: string; delivery?: DeliveryRecord; recorded?: HealthObservation; disabled?: true }
  | { kind: 'retry'; delaySeconds: number; delivery: DeliveryRecord; recorded?: HealthObservation; disabled?: true }
  | { kind: 'move'; delaySeconds: number; delivery: DeliveryRecord; recorded?: HealthObservation; disabled?: true }
  | { kind: 'dead_letter'; delivery: DeliveryRecord; recorded?: HealthObservation; disabled?: true };

/** An observation this dispatch recorded: the delivery as it left it, and what health counts of it. */
export interface RecordedObservation {
  readonly delivery: DeliveryRecord;
  readonly observation: HealthObservation;
  /** The recording disabled the endpoint (its streak reached the threshold). */
  readonly disabled: boolean;
}

/** Why a dispatch stopped before sending or recording anything (the prepare phase's verdicts). */
export type HaltedDispatch =
  | { readonly kind: 'delivery_gone' }
  | { readonly kind: 'already_terminal'; readonly delivery: DeliveryRecord }
  /** Spent, but not marked yet (its dead-letter send failed): never an eighth attempt. */
  | { readonly kind: 'awaits_dead_letter'; readonly delivery: DeliveryRecord }
  | { readonly kind: 'endpoint_gone'; readonly delivery: DeliveryRecord }
  /** A fast-lane delivery whose endpoint is in the slow lane, seen at `now`. */
  | { readonly kind: 'slow_endpoint'; readonly delivery: DeliveryRecord; readonly now: Date }
  /** Over its endpoint's delivery rate (docs/behaviour.md#delivery-rate-per-endpoint): nothing sent, nothing recorded. */
  | { readonly kind: 'over_rate'; readonly delivery: DeliveryRecord };

/** What a dispatch observed, the decision's only input. */
export type DispatchObservation =
  | HaltedDispatch
  /** The `endpoint_disabled` bookkeeping entry: recorded, or null when another receive recorded first. */
  | { readonly kind: 'endpoint_disabled'; readonly recorded: RecordedObservation | null }
  /** An attempt (a POST, or a URL refused at dispatch) this receive recorded. */
  | {
      readonly kind: 'attempted';
      readonly lane: LaneRole;
      readonly classified: Classified;
      /** The delivery's HTTP attempts, this one included. */
      readonly attempts: number;
      /** A retryable failure with no retry left. */
      readonly exhausted: boolean;
      /** The endpoint is marked slow by this attempt (during the POST or after it). */
      readonly slowMarked: boolean;
      readonly recorded: RecordedObservation;
    }
  /** An attempt stored by an earlier receive whose state never caught up, now applied with its stored effect. */
  | { readonly kind: 'rolled_forward'; readonly applies: AttemptEffect; readonly now: Date; readonly recorded: RecordedObservation }
  /**
   * Another receive recorded first: the delivery as it now stands (null: gone), whether that
   * receive is still applying its attempt, at `now`.
   */
  | { readonly kind: 'duplicate'; readonly current: DeliveryRecord | null; readonly stillApplying: boolean; readonly now: Date };

/**
 * How long a delivery over its endpoint's rate waits in its queue: SQS's smallest delay, so it
 * comes back for the next seconds' budgets (docs/behaviour.md#delivery-rate-per-endpoint).
 */
export const OVER_RATE_DELAY_SECONDS = 1;

/**
 * The queue delay, in whole seconds (SQS's unit), that makes a message due at `at` (ISO 8601), at
 * least 0. Under the local stack's `timeScale` the queue divides the delay it is given, so the
 * wait until `at` is multiplied by it here: the message is then due at `at`, not scaled twice.
 */
export function secondsUntil(at: string | null, now: Date, timeScale = 1): number {
  return at ? Math.max(0, Math.ceil(((Date.parse(at) - now.getTime()) * timeScale) / 1000)) : 0;
}

/** The result's part of a recorded observation. */
function reported(recorded: RecordedObservation): { delivery: DeliveryRecord; recorded: HealthObservation; disabled?: true } {
  return { delivery: recorded.delivery, recorded: recorded.observation, ...(recorded.disabled ? { disabled: true as const } : {}) };
}

/**
 * Decides what the queue does with a dispatched delivery's message (see {@link DispatchResult}).
 * `timeScale`: the local stack's, by which its queues divide delays (deployed: 1).
 */
export function decideDispatch(observed: DispatchObservation, timeScale = 1): DispatchResult {
  switch (observed.kind) {
    case 'delivery_gone':
      return { kind: 'ack', reason: 'delivery_gone' };
    case 'already_terminal':
      return { kind: 'ack', reason: 'already_terminal', delivery: observed.delivery };
    case 'awaits_dead_letter':
      return { kind: 'dead_letter', delivery: observed.delivery };
    case 'endpoint_gone':
      return { kind: 'ack', reason: 'endpoint_gone', delivery: observed.delivery };
    case 'slow_endpoint':
      return {
        kind: 'move',
        delaySeconds: secondsUntil(observed.delivery.nextAttemptAt, observed.now, timeScale),
        delivery: observed.delivery,
      };
    case 'over_rate':
      // Back in a second, in the same lane: no attempt spent, no evidence.
      return { kind: 'retry', delaySeconds: OVER_RATE_DELAY_SECONDS, delivery: observed.delivery };
    case 'endpoint_disabled': {
      const { recorded } = observed;
      // Bookkeeping moves no streak: it never disables.
      return recorded
        ? { kind: 'ack', reason: ENDPOINT_DISABLED, delivery: recorded.delivery, recorded: recorded.observation }
        : { kind: 'ack', reason: 'duplicate' };
    }
    case 'attempted':
      return afterAttempt(observed);
    case 'rolled_forward': {
      // What the receive that stored the attempt would have done: its stored effect decides.
      const { applies } = observed;
      if (applies.status !== 'failed') return { kind: 'ack', reason: applies.status, ...reported(observed.recorded) };
      if (applies.nextAttemptAt === null) return { kind: 'dead_letter', ...reported(observed.recorded) };
      return { kind: 'retry', delaySeconds: secondsUntil(applies.nextAttemptAt, observed.now, timeScale), ...reported(observed.recorded) };
    }
    case 'duplicate':
      return afterDuplicate(observed, timeScale);
  }
}

/** After an attempt this receive recorded: done, spent, or its backoff, in the slow lane if its endpoint just failed or was slow. */
function afterAttempt(observed: Extract<DispatchObservation, { kind: 'attempted' }>): DispatchResult {
  const { classified, recorded } = observed;
  if (classified.status !== 'failed') return { kind: 'ack', reason: classified.status, ...reported(recorded) };
  if (observed.exhausted) return { kind: 'dead_letter', ...reported(recorded) };
  const delaySeconds = retryDelaySeconds(observed.attempts);
  // The retry of an endpoint that just failed (its streak moved) or was slow waits in the slow lane.
  if (observed.lane === 'fast' && (classified.streak === 'increment' || observed.slowMarked))
    return { kind: 'move', delaySeconds, ...reported(recorded) };
  return { kind: 'retry', delaySeconds, ...reported(recorded) };
}

/**
 * Another receive of the same message recorded first. Ack only if that left the delivery
 * terminal; if it is still open, keep the message for its next attempt, so a duplicate can never
 * delete a retry.
 */
function afterDuplicate(observed: Extract<DispatchObservation, { kind: 'duplicate' }>, timeScale: number): DispatchResult {
  const { current } = observed;
  if (!current) return { kind: 'ack', reason: 'duplicate' };
  // The receive that won is still applying its attempt (or ended first): look again in a moment; the next receive completes it if need be.
  if (observed.stillApplying) return { kind: 'retry', delaySeconds: 1, delivery: current };
  if (isTerminal(current.status)) return { kind: 'ack', reason: 'duplicate' };
  if (awaitsDeadLetter(current)) return { kind: 'dead_letter', delivery: current };
  return { kind: 'retry', delaySeconds: secondsUntil(current.nextAttemptAt, observed.now, timeScale), delivery: current };
}
