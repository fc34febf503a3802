/**
 * Recovery jobs, deployed (docs/architecture.md#recovery-jobs): the jobs queue
 * (encrypted, TLS only) with its dead-letter queue, and the job worker it
 * feeds (recoveries, endpoint purges and workspace erasures alike). The worker
 * reads and writes table items, sends each replay's message to the delivery
 * queue and re-enqueues its job on the jobs queue: exactly those grants. The operations that start jobs get the jobs queue's send
 * grant from the contract (`uses: ['jobQueue']`, lib/constructs/operation-resources.ts).
 */
import { Duration, Validations } from 'aws-cdk-lib';
import { Queue, type IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { DEFAULT_RECOVERY_RATE_PER_SECOND, ENV, JOB_WORKER_CONSUMER } from '#lambdas/contract/deployment';
import { DEAD_LETTER_RETENTION, QUEUE_DEFAULTS } from './delivery-pipeline';
import { functionTableAccess, grantSend, pollQueue } from './function-access';
import { functionEntry, ServiceFunction, type LogProps } from './service-function';
import type { ServiceTable } from './table';

/**
 * How long a job message waits for the worker. A running job has exactly one message (each slice
 * sends the next), normally taken within seconds; it waits only while the worker cannot run (a
 * broken deploy, throttling, a disabled event source). Were it to expire, its job would stay
 * `running` with nothing to run it, holding its endpoint's recovery lock, so it waits as long as
 * SQS allows (SQS's own default is 4 days): the time there is to fix the worker.
 */
export const JOB_MESSAGE_RETENTION = Duration.days(14);

/** Properties of {@link RecoveryJobs}. */
export interface RecoveryJobsProps extends LogProps {
  /** The service table (jobs, locks, markers, deliveries, audit). */
  readonly table: ServiceTable;
  /** The delivery queue: each replay's message. */
  readonly deliveryQueue: IQueue;
  /** Replays per second a job writes at most (the stage's `recoveryRatePerSecond`). @default DEFAULT_RECOVERY_RATE_PER_SECOND (20) */
  readonly ratePerSecond?: number;
}

/** The jobs queue, its dead-letter queue and the job worker. */
export class RecoveryJobs extends Construct {
  /** One message per job slice (`{jobId}`), delayed between slices. */
  readonly queue: Queue;
  /** Job messages whose slice failed on every receive (the job is then marked failed). */
  readonly deadLetterQueue: Queue;
  /** Runs one paced slice of a job per message. */
  readonly worker: ServiceFunction;

  constructor(scope: Construct, id: string, props: RecoveryJobsProps) {
    super(scope, id);
    const logs = { logRetention: props.logRetention, logRemovalPolicy: props.logRemovalPolicy };

    // Kept as long as SQS allows, for inspection and the runbook (docs/operations.md#recovery-job-failures). A moved message
    // keeps its first enqueue time, but a job message reaches this queue within about half an hour of being sent.
    this.deadLetterQueue = new Queue(this, 'DeadLetterQueue', { ...QUEUE_DEFAULTS, retentionPeriod: DEAD_LETTER_RETENTION });
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        'This queue is itself the dead-letter queue of the jobs queue: a job message lands here only after its slice failed on every receive, and the worker has then marked the job failed (its endpoint free for a new recovery). A dead-letter queue of it would only move the same messages once more; it keeps them 14 days for inspection.',
    });
    this.queue = new Queue(this, 'JobQueue', {
      ...QUEUE_DEFAULTS,
      visibilityTimeout: Duration.seconds(JOB_WORKER_CONSUMER.visibilityTimeoutSeconds),
      retentionPeriod: JOB_MESSAGE_RETENTION,
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: JOB_WORKER_CONSUMER.maxReceives },
    });

    this.worker = new ServiceFunction(this, 'Worker', {
      entry: functionEntry('recovery-worker'),
      description: 'Runs background jobs (recoveries, endpoint purges, workspace erasures): one paced slice per jobs-queue message',
      environment: {
        [ENV.TABLE_NAME]: props.table.table.tableName,
        [ENV.DELIVERY_QUEUE_URL]: props.deliveryQueue.queueUrl,
        [ENV.JOB_QUEUE_URL]: this.queue.queueUrl,
        [ENV.RECOVERY_RATE_PER_SECOND]: String(props.ratePerSecond ?? DEFAULT_RECOVERY_RATE_PER_SECOND),
      },
      timeout: Duration.seconds(JOB_WORKER_CONSUMER.timeoutSeconds),
      ...logs,
    });
    props.table.grantAccess(this.worker.role, functionTableAccess('recovery-worker'));
    grantSend(props.deliveryQueue, this.worker.role);
    // The next slice: the worker re-enqueues its job with a delay.
    grantSend(this.queue, this.worker.role);
    pollQueue(this.worker.function, this.queue, {
      batchSize: JOB_WORKER_CONSUMER.batchSize,
      maxConcurrency: JOB_WORKER_CONSUMER.maxConcurrency,
      reportBatchItemFailures: true,
      changesVisibility: false,
    });
  }
}
