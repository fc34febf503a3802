/**
 * The delivery pipeline (docs/architecture.md#delivery-pipeline): the domain-events bus and its rule, the
 * publisher, the SQS delivery queue with its dead-letter queue, the dispatcher
 * and the dead-letter consumer. Every function gets exactly the grants its
 * code uses.
 */
import { Duration, Stack, Validations } from 'aws-cdk-lib';
import { EventBus, Rule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { Queue, QueueEncryption, type QueueProps } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { SQS_MESSAGE_BYTES } from '#lambdas/contract/aws-limits';
import {
  DEAD_LETTER_CONSUMER,
  DEFAULT_PUBLISHER_RESERVED_CONCURRENCY,
  DISPATCHER_CONSUMER,
  dispatcherConsumer,
  ENV,
  MAX_RECEIVES,
  SLOW_LANE_CONSUMER,
} from '#lambdas/contract/deployment';
import { functionTableAccess, grantSend, pollQueue, sendOnlyDestination } from './function-access';
import { functionEntry, ServiceFunction, type LogProps } from './service-function';
import type { SecretsKey } from './secrets-key';
import type { ServiceTable } from './table';

/**
 * The delivery queue's visibility timeout: six times the dispatcher's timeout,
 * as Lambda's SQS guide asks, so a batch still being processed (or retried after
 * a throttle) is not handed out twice. A retryable failure sets its own, shorter,
 * visibility (the backoff) before it is reported.
 */
const DELIVERY_VISIBILITY_TIMEOUT = Duration.seconds(DISPATCHER_CONSUMER.visibilityTimeoutSeconds);

/** How long a dead letter is kept if the consumer cannot handle it: SQS's longest. */
export const DEAD_LETTER_RETENTION = Duration.days(14);

/** The dead-letter consumer's timeout (one DynamoDB transaction and a notification per record). */
const DEAD_LETTER_TIMEOUT = Duration.seconds(10);

/** The publisher's timeout: a workspace may have many subscribed endpoints (one row and one message each). */
const PUBLISHER_TIMEOUT = Duration.seconds(30);

/** How long EventBridge, then Lambda, keep trying to hand an event to the publisher before it is dead-lettered. */
const PUBLISH_MAX_EVENT_AGE = Duration.hours(2);

/** Every queue: SQS-managed encryption at rest, TLS only. */
export const QUEUE_DEFAULTS = {
  encryption: QueueEncryption.SQS_MANAGED,
  enforceSSL: true,
  // Stated, not left to SQS's default (which has grown since): the local queues refuse at this size too.
  maxMessageSizeBytes: SQS_MESSAGE_BYTES,
} as const satisfies QueueProps;

/** Properties of a {@link DeliveryPipeline}. */
export interface DeliveryPipelineProps extends LogProps {
  /** The service table. */
  readonly table: ServiceTable;
  /** Name of the domain-events bus. @default - a unique name CDK derives from the construct path */
  readonly eventBusName?: string;
  /**
   * The key sealing signing secrets: the dispatcher, which signs every delivery, is the one
   * function allowed to open them (docs/architecture.md#secrets).
   * @default - none: the dispatcher signs with plaintext secrets only
   */
  readonly secretsKey?: SecretsKey;
  /**
   * Records per batch of the delivery queue's dispatcher; over 10 it gets Lambda's 1 s batching
   * window (stage setting `dispatcherBatchSize`). @default 25
   */
  readonly dispatcherBatchSize?: number;
  /** Batches of the delivery queue at once (stage setting `dispatcherMaxConcurrency`). @default 4 */
  readonly dispatcherMaxConcurrency?: number;
  /** Batches of the dead-letter queue at once (stage setting `deadLetterMaxConcurrency`). @default DEAD_LETTER_CONSUMER.maxConcurrency (2) */
  readonly deadLetterMaxConcurrency?: number;
  /**
   * The publisher's reserved concurrency, `null` for none (stage setting `publisherReservedConcurrency`).
   * @default DEFAULT_PUBLISHER_RESERVED_CONCURRENCY (50)
   */
  readonly publisherReservedConcurrency?: number | null;
}

/** The bus, the queues and the functions that turn domain events into signed deliveries. */
export class DeliveryPipeline extends Construct {
  /** The domain-events bus: producers (and the service itself) put events here. */
  readonly eventBus: EventBus;
  /** The rule that hands every event of the bus to the publisher. */
  readonly rule: Rule;
  /** The delivery queue: one message (a delivery id) per delivery row. */
  readonly queue: Queue;
  /**
   * The slow lane's queue (docs/behaviour.md#delivery-lanes): deliveries of endpoints that are
   * failing or slow, so they never hold a batch of the delivery queue.
   */
  readonly slowQueue: Queue;
  /** The dead-letter queue of both delivery queues: spent deliveries (sent by the dispatchers, or after {@link MAX_RECEIVES} receives). */
  readonly deadLetterQueue: Queue;
  /** Events the publisher could not take (EventBridge or Lambda gave up); nothing consumes it: alarmed on. */
  readonly publishFailures: Queue;
  /** Turns a bus event into pending delivery rows and queue messages. */
  readonly publisher: ServiceFunction;
  /** Consumes the delivery queue (the fast lane): signs and POSTs, records the attempt, backs off, moves failing or slow endpoints' deliveries to the slow lane. */
  readonly dispatcher: ServiceFunction;
  /** Consumes the slow lane's queue, with its own concurrency and per-endpoint / per-workspace caps per batch. */
  readonly slowDispatcher: ServiceFunction;
  /** Consumes the dead-letter queue: marks the delivery `dead_lettered` and notifies the workspace. */
  readonly deadLetterConsumer: ServiceFunction;

  constructor(scope: Construct, id: string, props: DeliveryPipelineProps) {
    super(scope, id);
    const { table } = props;
    const fastConsumer = dispatcherConsumer(
      props.dispatcherBatchSize ?? DISPATCHER_CONSUMER.batchSize,
      props.dispatcherMaxConcurrency ?? DISPATCHER_CONSUMER.maxConcurrency,
    );
    const tableName = table.table.tableName;
    const logs = { logRetention: props.logRetention, logRemovalPolicy: props.logRemovalPolicy };

    this.deadLetterQueue = new Queue(this, 'DeadLetterQueue', {
      ...QUEUE_DEFAULTS,
      // A moved message keeps its first enqueue time, so the DLQ must keep messages longer than the queue does.
      retentionPeriod: DEAD_LETTER_RETENTION,
      visibilityTimeout: Duration.seconds(6 * DEAD_LETTER_TIMEOUT.toSeconds()),
    });
    this.queue = new Queue(this, 'DeliveryQueue', {
      ...QUEUE_DEFAULTS,
      visibilityTimeout: DELIVERY_VISIBILITY_TIMEOUT,
      // SQS's default: far longer than all retries take (the backoff sums to 630 s); the age alarm fires long before a message could expire.
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: MAX_RECEIVES },
    });
    this.slowQueue = new Queue(this, 'SlowDeliveryQueue', {
      ...QUEUE_DEFAULTS,
      visibilityTimeout: Duration.seconds(SLOW_LANE_CONSUMER.visibilityTimeoutSeconds),
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: MAX_RECEIVES },
    });
    this.publishFailures = new Queue(this, 'PublishFailures', { ...QUEUE_DEFAULTS, retentionPeriod: DEAD_LETTER_RETENTION });
    for (const dlq of [this.deadLetterQueue, this.publishFailures]) {
      Validations.of(dlq).acknowledge({
        id: 'AwsSolutions-SQS3',
        reason:
          "This queue is itself a dead-letter queue (of the delivery queue, or of the publisher's bus rule and asynchronous invocations); a dead-letter queue of a dead-letter queue would only move the same messages once more. Its depth is alarmed on (lib/constructs/monitoring.ts) and it keeps messages for 14 days.",
      });
    }

    this.eventBus = new EventBus(this, 'EventBus', {
      eventBusName: props.eventBusName,
      description: 'Domain events to deliver as webhooks',
    });

    // ---- dispatchers: the delivery queue's (the fast lane) and the slow lane's
    const dispatcherEnvironment = {
      [ENV.TABLE_NAME]: tableName,
      // Moves (fast lane), deferrals and the slow lane's backoff (ChangeMessageVisibility) use this queue.
      [ENV.SLOW_DELIVERY_QUEUE_URL]: this.slowQueue.queueUrl,
      // A spent delivery is sent to the dead-letter queue by the dispatcher.
      [ENV.DEAD_LETTER_QUEUE_URL]: this.deadLetterQueue.queueUrl,
      ...props.secretsKey?.environment,
    };
    const lanes = [
      // The fast lane's backoff is a ChangeMessageVisibility on the delivery queue; a retry due past its last receive is a new message there.
      {
        id: 'Dispatcher',
        entry: 'dispatcher',
        queue: this.queue,
        environment: { [ENV.DELIVERY_QUEUE_URL]: this.queue.queueUrl },
        consumer: fastConsumer,
        description:
          'Delivers queued webhooks: signs, POSTs, records the attempt, backs off; moves failing or slow endpoints to the slow lane',
      },
      {
        id: 'SlowDispatcher',
        entry: 'slow-dispatcher',
        queue: this.slowQueue,
        environment: {},
        consumer: SLOW_LANE_CONSUMER,
        description: 'Delivers the slow lane: endpoints that are failing or slow, a few per endpoint and workspace per batch',
      },
    ] as const;
    const [fast, slow] = lanes.map((lane) => {
      const fn = new ServiceFunction(this, lane.id, {
        entry: functionEntry(lane.entry),
        description: lane.description,
        environment: { ...dispatcherEnvironment, ...lane.environment },
        // A batch is dispatched concurrently, so it takes about as long as its slowest record: the 10 s
        // deadline, the 2 s body read, DNS and a few DynamoDB calls, with room to spare.
        timeout: Duration.seconds(lane.consumer.timeoutSeconds),
        // Concurrent TLS requests and HMAC signatures per invocation: more memory is more CPU.
        memorySize: 512,
        ...logs,
      });
      table.grantAccess(fn.role, functionTableAccess(lane.entry));
      props.secretsKey?.grantOpen(fn.role);
      // Each lane re-sends to its own queue what is due past the last receive (the slow lane's grant is the one below).
      if (lane.queue !== this.slowQueue) grantSend(lane.queue, fn.role);
      grantSend(this.slowQueue, fn.role);
      grantSend(this.deadLetterQueue, fn.role);
      pollQueue(fn.function, lane.queue, {
        batchSize: lane.consumer.batchSize,
        maxBatchingWindow:
          lane.consumer.maxBatchingWindowSeconds > 0 ? Duration.seconds(lane.consumer.maxBatchingWindowSeconds) : undefined,
        // Caps the lane's concurrency (and so the load on receivers and the table); no reserved concurrency needed.
        maxConcurrency: lane.consumer.maxConcurrency,
        reportBatchItemFailures: true,
        // The backoff of a failed attempt.
        changesVisibility: true,
      });
      return fn;
    });
    this.dispatcher = fast!;
    this.slowDispatcher = slow!;

    // ---- dead-letter consumer
    this.deadLetterConsumer = new ServiceFunction(this, 'DeadLetterConsumer', {
      entry: functionEntry('dead-letter'),
      description:
        'Marks deliveries whose retries are exhausted dead_lettered and notifies the workspace; sends back (bounded) those the queue gave up with retries left',
      // A dead letter with retries left goes back to the delivery queue (docs/behaviour.md#dead-lettering).
      environment: { [ENV.TABLE_NAME]: tableName, [ENV.DELIVERY_QUEUE_URL]: this.queue.queueUrl },
      timeout: DEAD_LETTER_TIMEOUT,
      ...logs,
    });
    table.grantAccess(this.deadLetterConsumer.role, functionTableAccess('dead-letter'));
    grantSend(this.queue, this.deadLetterConsumer.role);
    pollQueue(this.deadLetterConsumer.function, this.deadLetterQueue, {
      batchSize: DEAD_LETTER_CONSUMER.batchSize,
      // A flood of dead letters (a receiver down for hours) is worked off a few batches at a time,
      // leaving the account's concurrency to the API; a cap on the event source reserves nothing.
      maxConcurrency: props.deadLetterMaxConcurrency ?? DEAD_LETTER_CONSUMER.maxConcurrency,
      reportBatchItemFailures: true,
      changesVisibility: false,
    });

    // ---- publisher: every event of the bus
    const publisherReserved =
      props.publisherReservedConcurrency === undefined ? DEFAULT_PUBLISHER_RESERVED_CONCURRENCY : props.publisherReservedConcurrency;
    this.publisher = new ServiceFunction(this, 'Publisher', {
      entry: functionEntry('publisher'),
      description: 'Turns a domain event into one pending delivery and one queue message per subscribed endpoint',
      // A failing or slow endpoint's deliveries are queued in the slow lane directly.
      environment: {
        [ENV.TABLE_NAME]: tableName,
        [ENV.DELIVERY_QUEUE_URL]: this.queue.queueUrl,
      },
      timeout: PUBLISHER_TIMEOUT,
      ...logs,
    });
    // Invoked asynchronously, so no event source can cap it: the reservation does. Events over it are
    // throttled and retried by Lambda's asynchronous queue (up to PUBLISH_MAX_EVENT_AGE), not lost.
    if (publisherReserved !== null)
      (this.publisher.function.node.defaultChild as CfnFunction).reservedConcurrentExecutions = publisherReserved;
    table.grantAccess(this.publisher.role, functionTableAccess('publisher'));
    grantSend(this.queue, this.publisher.role);
    // EventBridge invokes asynchronously: its retry policy covers failures to invoke, Lambda's covers the function's own errors.
    this.publisher.function.configureAsyncInvoke({
      retryAttempts: 2,
      maxEventAge: PUBLISH_MAX_EVENT_AGE,
      onFailure: sendOnlyDestination(this.publishFailures),
    });
    this.rule = new Rule(this, 'PublishRule', {
      eventBus: this.eventBus,
      description:
        "Every event of the bus, the service's own (source webhooks.service) included, goes to the publisher; it ignores types outside the catalogue",
      // EventBridge needs one field to match: every event of this bus comes from this account (the bus has no cross-account policy).
      eventPattern: { account: [Stack.of(this).account] },
      targets: [
        new LambdaFunction(this.publisher.function, {
          retryAttempts: 10,
          maxEventAge: PUBLISH_MAX_EVENT_AGE,
          deadLetterQueue: this.publishFailures,
        }),
      ],
    });
  }
}
