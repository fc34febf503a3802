/**
 * The outbox of the service's own domain events (docs/architecture.md#outbox): a small table of
 * its own (a transaction spans tables, so a change writes its event there atomically), its stream
 * of new images, and the relay that puts each event on the bus: an event source mapping filtered
 * to inserts, reporting partial batch failures, bisecting a failed batch, retrying, and sending
 * what it gives up to an on-failure queue that is alarmed on. The hot table carries no stream.
 */
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { AttributeType, BillingMode, StreamViewType, Table } from 'aws-cdk-lib/aws-dynamodb';
import type { IEventBus } from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import { FilterCriteria, FilterRule, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ENV, OUTBOX } from '#lambdas/contract/deployment';
import { DEAD_LETTER_RETENTION, QUEUE_DEFAULTS } from './delivery-pipeline';
import { sendOnlyEventSourceDlq } from './function-access';
import { functionEntry, ServiceFunction, type LogProps } from './service-function';

/** Properties of an {@link Outbox}. */
export interface OutboxProps extends LogProps {
  /** The domain-events bus the relay puts the events on. */
  readonly eventBus: IEventBus;
  /** The stage, in the alarm's name (`webhooks-<stage>-outbox-relay-failures`). */
  readonly stage: string;
  /**
   * What happens to the outbox table when the stack is deleted; RETAIN also turns on deletion protection.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
}

/** The outbox table, its relay, the relay's on-failure queue and its alarm. */
export class Outbox extends Construct {
  /** One item per domain event, keyed by its id; items expire after `OUTBOX.retentionHours`. */
  readonly table: Table;
  /** Puts each inserted outbox item on the bus (lambdas/functions/outbox-relay.ts). */
  readonly relay: ServiceFunction;
  /** Where the relay's event source mapping sends the positions of the records it gave up. */
  readonly failures: Queue;
  /** Any message in {@link failures}: domain events that did not reach the bus. */
  readonly failuresAlarm: Alarm;

  constructor(scope: Construct, id: string, props: OutboxProps) {
    super(scope, id);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    this.table = new Table(this, 'Table', {
      partitionKey: { name: OUTBOX.table.partitionKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      stream: StreamViewType[OUTBOX.table.streamViewType],
      timeToLiveAttribute: OUTBOX.table.ttlAttribute,
      // An unrelayed event lives only here: restorable like the service table.
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      removalPolicy,
      deletionProtection: removalPolicy === RemovalPolicy.RETAIN,
    });

    this.failures = new Queue(this, 'RelayFailures', { ...QUEUE_DEFAULTS, retentionPeriod: DEAD_LETTER_RETENTION });
    Validations.of(this.failures).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        "This queue is itself the on-failure destination of the outbox relay's event source mapping; a dead-letter queue of it would only move the same records once more. It is alarmed on its first message and keeps messages for 14 days.",
    });

    const { relay } = OUTBOX;
    this.relay = new ServiceFunction(this, 'Relay', {
      entry: functionEntry('outbox-relay'),
      description: "Puts the service's own domain events, from the outbox table's stream, on the domain-events bus",
      environment: { [ENV.EVENT_BUS_NAME]: props.eventBus.eventBusName },
      timeout: Duration.seconds(relay.timeoutSeconds),
      logRetention: props.logRetention,
      logRemovalPolicy: props.logRemovalPolicy,
    });
    props.eventBus.grantPutEventsTo(this.relay.role);
    // The event source grants the stream reads (DescribeStream, GetShardIterator, GetRecords, ListStreams) and the send to the on-failure queue.
    this.relay.function.addEventSource(
      new DynamoEventSource(this.table, {
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: relay.batchSize,
        maxBatchingWindow: relay.maxBatchingWindowSeconds > 0 ? Duration.seconds(relay.maxBatchingWindowSeconds) : undefined,
        reportBatchItemFailures: true,
        bisectBatchOnError: true,
        retryAttempts: relay.retryAttempts,
        maxRecordAge: Duration.seconds(relay.maximumRecordAgeSeconds),
        onFailure: sendOnlyEventSourceDlq(this.failures),
        // Inserts only: the TTL's removals (and any other change) are no event.
        filters: [FilterCriteria.filter({ eventName: FilterRule.isEqual('INSERT') as unknown })],
      }),
    );

    this.failuresAlarm = new Alarm(this, 'RelayFailuresAlarm', {
      alarmName: `webhooks-${props.stage}-outbox-relay-failures`,
      alarmDescription:
        "Domain events of the service itself reached the outbox relay's failure queue: they did not reach the bus. Each message names the stream positions given up; the items are in the outbox table until their TTL. Runbook: docs/architecture.md#outbox",
      // Alarmed on its first message: each one is events no subscriber got.
      metric: this.failures.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: 'Maximum' }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
  }

  /** Notifies `topic` (the service's alarm topic) of the relay-failures alarm, on ALARM and on OK. */
  notify(topic: ITopic): void {
    const action = new SnsAction(topic);
    this.failuresAlarm.addAlarmAction(action);
    this.failuresAlarm.addOkAction(action);
  }

  /** The environment of a function that writes domain events: the outbox table's name. */
  get environment(): Readonly<Record<string, string>> {
    return { [ENV.OUTBOX_TABLE_NAME]: this.table.tableName };
  }

  /**
   * Lets `grantee` write outbox items, inside its transactions: PutItem on the outbox table and
   * nothing else (it never reads, updates or deletes one).
   */
  grantWriteEvents(grantee: iam.IGrantable): void {
    iam.Grant.addToPrincipal({ grantee, actions: ['dynamodb:PutItem'], resourceArns: [this.table.tableArn] });
  }

  /** Binds a function that writes domain events (the dispatchers' auto-disable): its environment and its grant. */
  addWriter(fn: ServiceFunction): void {
    for (const [name, value] of Object.entries(this.environment)) fn.function.addEnvironment(name, value);
    this.grantWriteEvents(fn.role);
  }
}
