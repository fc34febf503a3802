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
/** Retention: at most this many summaries per pass (a backlog drains over several passes). */
export const RETENTION_MAX_PER_PASS = 100;
/** Repair: a pending row with no evidence older than this is queued again. */
export const REPAIR_AFTER_MINUTES = 5;
/** Repair: how far back the hourly buckets are searched. */
export const REPAIR_LOOKBACK_HOURS = 48;

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
