/**
 * The scheduled jobs of lambdas/domain/scheduled-jobs.ts (history retention,
 * grace-window expiry of replaced secrets, the stuck-pending repair), deployed:
 * each is an EventBridge schedule rule invoking its
 * own function; each pass is bounded and idempotent, so a failed pass is
 * simply done again by the next tick.
 */
import { Duration } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ENV } from '#lambdas/contract/deployment';
import { SCHEDULED_JOBS } from '#lambdas/domain/scheduled-jobs';
import { functionTableAccess, grantSend } from './function-access';
import { functionEntry, ServiceFunction, type LogProps } from './service-function';
import type { ServiceTable } from './table';

/** Properties of {@link Schedules}. */
export interface SchedulesProps extends LogProps {
  /** The service table. */
  readonly table: ServiceTable;
  /** The delivery queue (for the jobs that send deliveries). */
  readonly deliveryQueue: IQueue;
}

/** The scheduled functions and their rules. */
export class Schedules extends Construct {
  /** The function of each job, by the job's `id` (lambdas/domain/scheduled-jobs.ts). */
  readonly functions: ReadonlyMap<string, ServiceFunction>;
  /** The schedule rule of each job, by the job's `id` (lambdas/domain/scheduled-jobs.ts). */
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
          [ENV.TABLE_NAME]: props.table.table.tableName,
          ...(job.sendsDeliveries ? { [ENV.DELIVERY_QUEUE_URL]: props.deliveryQueue.queueUrl } : {}),
        },
        timeout: Duration.seconds(job.timeoutSeconds),
        logRetention: props.logRetention,
        logRemovalPolicy: props.logRemovalPolicy,
      });
      props.table.grantAccess(fn.role, functionTableAccess(job.entry));
      if (job.sendsDeliveries) grantSend(props.deliveryQueue, fn.role);
      // The next tick is the retry: no asynchronous retries that could overlap it.
      fn.function.configureAsyncInvoke({ retryAttempts: 0 });
      const rule = new Rule(this, `${job.id}Schedule`, {
        description: job.description,
        schedule: Schedule.rate(Duration.minutes(job.everyMinutes)),
        // A tick EventBridge could not hand over before the next one is due is dropped, not piled up.
        targets: [new LambdaFunction(fn.function, { maxEventAge: maxEventAgeOf(Duration.minutes(job.everyMinutes)) })],
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
