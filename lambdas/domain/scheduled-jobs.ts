/**
 * The scheduled jobs as data (docs/behaviour.md#retention-and-scheduled-jobs):
 * each job's cadence, its function and its bounds, read by the CDK schedules
 * (lib/constructs/schedules.ts) and the local stack's timers alike, so the two
 * can never run a job at different rates. The jobs themselves are in
 * lambdas/pipeline/schedules.ts.
 */
import { SECRET_GRACE_HOURS } from '../contract/limits';

/** Retention: summaries older than this many days are deleted with their attempts. */
export const RETENTION_DAYS = 30;
/**
 * Retention by TTL: a summary and its attempts carry `expiresAtEpoch` = creation + this many days,
 * and DynamoDB deletes them (at no write cost) some time after; the daily pass deletes, at most
 * {@link RETENTION_MAX_PER_PASS} a day, what is older than {@link RETENTION_DAYS} and still there.
 */
export const RETENTION_TTL_DAYS = RETENTION_DAYS + 1;

/** The TTL of a delivery's items (summary and attempts), epoch seconds, from its creation time. */
export function deliveryExpiresAtEpoch(createdAt: string): number {
  return Math.floor(Date.parse(createdAt) / 1000) + RETENTION_TTL_DAYS * 24 * 3600;
}

/** Retention: at most this many summaries per pass (a backlog drains over several passes). */
export const RETENTION_MAX_PER_PASS = 100;
/** Repair: a pending row with no evidence older than this is queued again. */
export const REPAIR_AFTER_MINUTES = 5;
/** Repair: how far back stuck rows are searched. */
export const REPAIR_LOOKBACK_HOURS = 48;
/** Repair: at most this many rows queued again per pass (a larger backlog drains over passes). */
export const REPAIR_MAX_PER_PASS = 1000;

/** One scheduled job. */
export interface ScheduledJob {
  /** Construct id. */
  readonly id: string;
  /** The function's entry, `lambdas/functions/<entry>.ts`. */
  readonly entry: string;
  readonly description: string;
  /** How often it runs. */
  readonly everyMinutes: number;
  /** The function's timeout: well under the cadence, so passes never overlap. */
  readonly timeoutSeconds: number;
  /** True when it sends delivery messages (it gets the delivery queue). */
  readonly sendsDeliveries: boolean;
}

/** The jobs, with their cadences. */
export const SCHEDULED_JOBS: readonly ScheduledJob[] = [
  {
    id: 'Retention',
    entry: 'retention',
    description: `Daily: deletes at most ${RETENTION_MAX_PER_PASS} delivery summaries older than ${RETENTION_DAYS} days, with their attempts`,
    everyMinutes: 24 * 60,
    timeoutSeconds: 5 * 60,
    sendsDeliveries: false,
  },
  {
    id: 'SecretExpiry',
    entry: 'secret-expiry',
    description: `Hourly: drops replaced signing secrets whose ${SECRET_GRACE_HOURS}-hour grace window ended`,
    everyMinutes: 60,
    timeoutSeconds: 60,
    sendsDeliveries: false,
  },
  {
    id: 'PendingRepair',
    entry: 'pending-repair',
    description: `Every ${REPAIR_AFTER_MINUTES} minutes: queues again pending deliveries whose message was never sent`,
    everyMinutes: REPAIR_AFTER_MINUTES,
    timeoutSeconds: 60,
    sendsDeliveries: true,
  },
];
