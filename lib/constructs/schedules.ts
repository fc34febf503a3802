/**
 * The scheduled jobs (spec §8, DESIGN §5): history retention (daily),
 * grace-window expiry of replaced secrets (hourly) and the stuck-pending
 * repair (every 5 minutes). Each is an EventBridge schedule rule invoking its
 * own function; each pass is bounded and idempotent, so a failed pass is
 * simply done again by the next tick.
 */
import { Duration } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { functionEntry, ServiceFunction, type LogProps } from './service-function';
import type { ServiceTable } from './table';

/** One scheduled job. */
export interface ScheduledJob {
  /** Construct id. */
  readonly id: string;
  /** Entry `lambdas/functions/<entry>.ts`. */
  readonly entry: string;
  readonly description: string;
  /** How often it runs. */
  readonly rate: Duration;
  /** The function's timeout: well under the rate, so passes never overlap. */
  readonly timeout: Duration;
  /** True when it sends delivery messages (gets DELIVERY_QUEUE_URL and sqs:SendMessage). */
  readonly sendsDeliveries: boolean;
}

/** The jobs, with their rates. */
export const SCHEDULED_JOBS: readonly ScheduledJob[] = [
  {
    id: 'Retention',
    entry: 'retention',
    description: 'Daily: deletes at most 100 delivery summaries older than 30 days, with their attempts',
    rate: Duration.days(1),
    timeout: Duration.minutes(5),
    sendsDeliveries: false,
  },
  {
    id: 'SecretExpiry',
    entry: 'secret-expiry',
    description: 'Hourly: drops replaced signing secrets whose 24-hour grace window ended',
    rate: Duration.hours(1),
    timeout: Duration.minutes(1),
    sendsDeliveries: false,
  },
  {
    id: 'PendingRepair',
    entry: 'pending-repair',
    description: 'Every 5 minutes: queues again pending deliveries whose message was never sent',
    rate: Duration.minutes(5),
    timeout: Duration.minutes(1),
    sendsDeliveries: true,
  },
];

/** Properties of {@link Schedules}. */
export interface SchedulesProps extends LogProps {
  /** The service table. */
  readonly table: ServiceTable;
  /** The delivery queue (for the jobs that send deliveries). */
  readonly deliveryQueue: IQueue;
}

/** The scheduled functions and their rules. */
export class Schedules extends Construct {
  /** The function of each job, by {@link ScheduledJob.id}. */
  readonly functions: ReadonlyMap<string, ServiceFunction>;
  /** The schedule rule of each job, by {@link ScheduledJob.id}. */
  readonly rules: ReadonlyMap<string, Rule>;

  constructor(scope: Construct, id: string, props: SchedulesProps) {
    super(scope, id);
    const functions = new Map<string, ServiceFunction>();
    const rules = new Map<string, Rule>();
    for (const job of SCHEDULED_JOBS) {
      const fn = new ServiceFunction(this, job.id, {
        entry: functionEntry(job.entry),
        description: job.description,
        environment: {
          TABLE_NAME: props.table.table.tableName,
          ...(job.sendsDeliveries ? { DELIVERY_QUEUE_URL: props.deliveryQueue.queueUrl } : {}),
        },
        timeout: job.timeout,
        logRetention: props.logRetention,
        logRemovalPolicy: props.logRemovalPolicy,
      });
      props.table.grantReadWriteItems(fn.role);
      if (job.sendsDeliveries) props.deliveryQueue.grantSendMessages(fn.role);
      // The next tick is the retry: no asynchronous retries that could overlap it.
      fn.function.configureAsyncInvoke({ retryAttempts: 0 });
      const rule = new Rule(this, `${job.id}Schedule`, {
        description: job.description,
        schedule: Schedule.rate(job.rate),
        // A tick EventBridge could not hand over before the next one is due is dropped, not piled up.
        targets: [new LambdaFunction(fn.function, { maxEventAge: maxEventAgeOf(job.rate) })],
      });
      functions.set(job.id, fn);
      rules.set(job.id, rule);
    }
    this.functions = functions;
    this.rules = rules;
  }
}

/** EventBridge accepts 60 s to 24 h. */
function maxEventAgeOf(rate: Duration): Duration {
  return Duration.seconds(Math.min(Math.max(rate.toSeconds(), 60), 24 * 3600));
}
