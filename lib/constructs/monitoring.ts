/**
 * The stack's alarms, one per failure path, each with a description that ends with its runbook
 * section (docs/operations.md, one heading per alarm), and the metrics they and the dashboard
 * (./dashboard.ts) read. Every alarm notifies the stack's SNS topic on ALARM and on OK; an
 * `alarmEmail` is subscribed to it.
 */
import { Duration } from 'aws-cdk-lib';
import type { RestApiBase } from 'aws-cdk-lib/aws-apigateway';
import { Alarm, ComparisonOperator, MathExpression, Metric, TreatMissingData, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Operation, type ITable } from 'aws-cdk-lib/aws-dynamodb';
import { FilterPattern, MetricFilter, type ILogGroup } from 'aws-cdk-lib/aws-logs';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { METRIC_DIMENSIONS, METRICS, METRICS_NAMESPACE } from '#lambdas/contract/metrics';
import { AttemptSchema } from '#lambdas/contract/schemas';
import { DEFAULT_CONFIG } from '../config';
import type { ServiceFunction } from './service-function';

/** The runbook every alarm description links to, repository-relative. */
export const RUNBOOK = 'docs/operations.md';

/**
 * Age of the oldest fast-lane delivery message that means a backlog. A healthy message is
 * gone within minutes: the whole backoff sums to 630 s, and SQS stops counting a message in
 * this metric after its third receive (90 s of backoff).
 */
const OLDEST_MESSAGE_ALARM_AGE = Duration.minutes(15);

/**
 * Age of the oldest slow-lane message that means the lane is not draining. Longer than the fast
 * lane's: the slow lane holds receivers that are failing or slow, attempts at most 2 deliveries per
 * endpoint and 4 per workspace per batch (the rest wait, deferred), and a retry waiting out its
 * backoff keeps its age (docs/behaviour.md#delivery-lanes), so an hour-old message there is normal
 * only if the lane has stopped.
 */
const SLOW_LANE_OLDEST_MESSAGE_ALARM_AGE = Duration.hours(1);

/** How long the dead-letter queue may hold messages before it alarms: its consumer normally takes seconds. */
const DEAD_LETTER_ALARM_AFTER = Duration.minutes(15);

/** API 5xx responses, in percent of requests over 5 minutes, that alarm (two 5-minute periods out of three). */
export const API_5XX_ALARM_PERCENT = 5;

/** Fewer requests than this in 5 minutes give no 5xx rate (one 500 in three requests is no outage). */
const API_5XX_MIN_REQUESTS = 20;

/** API latency p99 that alarms when it lasts three 5-minute periods (an operation is one or two DynamoDB calls; a cold start is about a second). */
const API_LATENCY_P99_ALARM = Duration.seconds(3);

/** DynamoDB throttled requests in 5 minutes that alarm (the SDK retries a few; more means a hot key or the table's ceiling). */
export const TABLE_THROTTLES_ALARM = 10;

/** The delivery success rate is measured over this period. */
const SUCCESS_RATE_PERIOD = Duration.minutes(15);

/** Fewer attempts than this in {@link SUCCESS_RATE_PERIOD} give no success rate. */
const SUCCESS_RATE_MIN_ATTEMPTS = 20;

/** The DynamoDB operations the service's code sends (lib/constructs/table.ts grants exactly these). */
const TABLE_OPERATIONS = [
  Operation.GET_ITEM,
  Operation.BATCH_GET_ITEM,
  Operation.QUERY,
  Operation.PUT_ITEM,
  Operation.UPDATE_ITEM,
  Operation.DELETE_ITEM,
  Operation.BATCH_WRITE_ITEM,
  Operation.TRANSACT_WRITE_ITEMS,
];

/** The attempt outcomes, the `outcome` values of the `Attempts` metric. */
export const ATTEMPT_OUTCOMES = AttemptSchema.shape.outcome.options;

/** The delivery lanes of a deployed stage, the `lane` values of the `AttemptDuration` metric. */
export const DEPLOYED_LANES = ['fast', 'slow'] as const;

/**
 * The namespace of the metrics this construct derives from logs. A metric filter can take a
 * dimension only from a field of the log line, so the stage goes in the namespace instead.
 */
function logMetricsNamespace(stage: string): string {
  return `${METRICS_NAMESPACE}/${stage}`;
}

/** What the alarms and the dashboard watch. */
export interface MonitoredResources {
  /** The stage name: the `stage` dimension of the service's own metrics (lib/config.ts). */
  readonly stage: string;
  /** The delivery queue (the fast lane). */
  readonly deliveryQueue: IQueue;
  /** The slow lane's queue. */
  readonly slowDeliveryQueue: IQueue;
  /** The dead-letter queue of both delivery queues (it has a consumer). */
  readonly deadLetterQueue: IQueue;
  /** Events the publisher could not take (no consumer). */
  readonly publishFailures: IQueue;
  /** The recovery jobs' dead-letter queue (no consumer): jobs whose slices failed on every receive. */
  readonly recoveryDeadLetterQueue: IQueue;
  /** The fast lane's dispatcher. */
  readonly dispatcher: ServiceFunction;
  /** The slow lane's dispatcher. */
  readonly slowDispatcher: ServiceFunction;
  /** The publisher. */
  readonly publisher: ServiceFunction;
  /** The dead-letter consumer. */
  readonly deadLetterConsumer: ServiceFunction;
  /** The REST API's token authorizer. */
  readonly authorizer: ServiceFunction;
  /** The MCP function. */
  readonly mcp: ServiceFunction;
  /** The REST operations' functions. */
  readonly operations: readonly ServiceFunction[];
  /** The scheduled jobs' functions (retention, secret expiry, stuck-pending repair). */
  readonly scheduledJobs: readonly ServiceFunction[];
  /** The recovery job worker. */
  readonly recoveryWorker: ServiceFunction;
  /** The REST API (its metrics: dimension ApiName). */
  readonly api: RestApiBase;
  /** The API stage's JSON access log group. */
  readonly accessLogs: ILogGroup;
  /** The service table. */
  readonly table: ITable;
}

/** Properties of a {@link Monitoring}. */
export interface MonitoringProps extends MonitoredResources {
  /** Success rate (percent) under which deliveries alarm. @default DEFAULT_CONFIG.deliverySuccessRateAlarmPercent (90) */
  readonly deliverySuccessRateAlarmPercent?: number;
  /** Address notified of alarm state changes. @default - no topic, no notification */
  readonly alarmEmail?: string;
}

/** The service's metrics, as the alarms and the dashboard read them. */
export class ServiceMetrics {
  constructor(private readonly resources: MonitoredResources) {}

  /** One of the service's own metrics (lambdas/contract/metrics.ts), with `stage` and the given dimensions. */
  own(
    key: keyof typeof METRICS,
    dimensions: Record<string, string> = {},
    options: { statistic?: string; period?: Duration; label?: string } = {},
  ): Metric {
    const def = METRICS[key];
    return new Metric({
      namespace: METRICS_NAMESPACE,
      metricName: def.name,
      dimensionsMap: { [METRIC_DIMENSIONS.stage]: this.resources.stage, ...dimensions },
      statistic: options.statistic ?? (def.unit === 'Count' ? 'Sum' : 'p99'),
      period: options.period ?? Duration.minutes(5),
      ...(options.label ? { label: options.label } : {}),
    });
  }

  /** Attempts with one outcome. */
  attempts(outcome: (typeof ATTEMPT_OUTCOMES)[number], period = Duration.minutes(5)): Metric {
    return this.own('attempts', { [METRIC_DIMENSIONS.outcome]: outcome }, { period, label: outcome });
  }

  /**
   * delivered / (delivered + failed + failed_permanent), in percent; 100 below
   * {@link SUCCESS_RATE_MIN_ATTEMPTS} attempts (too few to judge). Dead-lettering is bookkeeping
   * after failed attempts, not an attempt of its own, so it is not counted again.
   */
  successRate(period = SUCCESS_RATE_PERIOD): MathExpression {
    const total = '(FILL(d, 0) + FILL(f, 0) + FILL(p, 0))';
    return new MathExpression({
      expression: `IF(${total} >= ${SUCCESS_RATE_MIN_ATTEMPTS}, 100 * FILL(d, 0) / ${total}, 100)`,
      label: 'Delivery success rate (%)',
      period,
      usingMetrics: {
        d: this.attempts('delivered', period),
        f: this.attempts('failed', period),
        p: this.attempts('failed_permanent', period),
      },
    });
  }

  /** API 5xx responses in percent of requests; 0 below {@link API_5XX_MIN_REQUESTS} requests. */
  apiServerErrorRate(): MathExpression {
    const { api } = this.resources;
    const period = Duration.minutes(5);
    return new MathExpression({
      expression: `IF(FILL(requests, 0) >= ${API_5XX_MIN_REQUESTS}, 100 * FILL(errors, 0) / requests, 0)`,
      label: 'API 5xx (% of requests)',
      period,
      usingMetrics: {
        errors: api.metricServerError({ period, statistic: 'Sum' }),
        requests: api.metricCount({ period, statistic: 'SampleCount' }),
      },
    });
  }

  /**
   * DynamoDB requests throttled, summed over the operations the service uses. DynamoDB publishes a
   * series only for an operation that was throttled, and a sum of series is missing wherever any
   * one of them is: each is filled with 0, or the sum (and the alarm) would see no data when only
   * some operations are throttled.
   */
  tableThrottles(period = Duration.minutes(5)): IMetric {
    const series = TABLE_OPERATIONS.map((operation) =>
      this.resources.table.metric('ThrottledRequests', {
        dimensionsMap: { TableName: this.resources.table.tableName, Operation: operation },
        period,
        statistic: 'Sum',
      }),
    );
    return new MathExpression({
      expression: series.map((_, i) => `FILL(throttled${i}, 0)`).join(' + '),
      label: 'Throttled requests',
      period,
      usingMetrics: Object.fromEntries(series.map((metric, i) => [`throttled${i}`, metric])),
    });
  }

  /** A metric this construct derives from logs (see {@link logMetricsNamespace}). */
  fromLogs(metricName: string, label: string): Metric {
    return new Metric({
      namespace: logMetricsNamespace(this.resources.stage),
      metricName,
      statistic: 'Sum',
      period: Duration.minutes(5),
      label,
    });
  }

  /** The authorizer failing (not refusing): API Gateway answered 500 because of it. */
  authorizerFailures(): Metric {
    return this.fromLogs(AUTHORIZER_FAILURES_METRIC, 'Authorizer failures (500)');
  }

  /** MCP requests answered 500 (an unexpected error, logged at level ERROR). */
  mcpRequestFailures(): Metric {
    return this.fromLogs(MCP_REQUEST_FAILURES_METRIC, 'MCP request failures (500)');
  }
}

/** Metric (from the API access log) of requests API Gateway refused because the authorizer failed. */
export const AUTHORIZER_FAILURES_METRIC = 'AuthorizerFailures';

/** Metric (from the MCP function's log) of requests that failed with an unexpected error. */
export const MCP_REQUEST_FAILURES_METRIC = 'McpRequestFailures';

/** The gateway responses API Gateway gives when the authorizer fails (throws anything but "Unauthorized", times out, answers nonsense). */
const AUTHORIZER_FAILURE_RESPONSES = ['AUTHORIZER_FAILURE', 'AUTHORIZER_CONFIGURATION_ERROR'];

/** An alarm's runbook section (an anchor of docs/operations.md) and its description. */
interface AlarmText {
  readonly anchor: string;
  readonly description: string;
}

/** The alarms and their topic (with an e-mail address subscribed when one is configured). */
export class Monitoring extends Construct {
  /** The metrics the alarms read (the dashboard reads them too). */
  readonly metrics: ServiceMetrics;
  /** Dead letters present for {@link DEAD_LETTER_ALARM_AFTER} in a row: the dead-letter consumer is not draining them. */
  readonly deadLettersAlarm: Alarm;
  /** Any event in the publisher's failure queue: domain events that produced no deliveries. */
  readonly publishFailuresAlarm: Alarm;
  /** The publisher failed (EventBridge and Lambda retry it). */
  readonly publisherErrorsAlarm: Alarm;
  /** The oldest fast-lane message is {@link OLDEST_MESSAGE_ALARM_AGE} old: deliveries are late. */
  readonly queueAgeAlarm: Alarm;
  /** The oldest slow-lane message is {@link SLOW_LANE_OLDEST_MESSAGE_ALARM_AGE} old: the slow lane is not draining. */
  readonly slowQueueAgeAlarm: Alarm;
  /** The fast lane's dispatcher failed (crash or timeout; a failed delivery is not an error) in a 5-minute period. */
  readonly dispatcherErrorsAlarm: Alarm;
  /** The slow lane's dispatcher failed in a 5-minute period. */
  readonly slowDispatcherErrorsAlarm: Alarm;
  /** The fast lane's dispatcher was throttled (the account's concurrency is used up). */
  readonly dispatcherThrottlesAlarm: Alarm;
  /** The slow lane's dispatcher was throttled. */
  readonly slowDispatcherThrottlesAlarm: Alarm;
  /** API 5xx above {@link API_5XX_ALARM_PERCENT} % of requests. */
  readonly apiServerErrorsAlarm: Alarm;
  /** API latency p99 above {@link API_LATENCY_P99_ALARM}. */
  readonly apiLatencyAlarm: Alarm;
  /** The authorizer failed (API Gateway answered 500). */
  readonly authorizerFailuresAlarm: Alarm;
  /** The MCP function failed: a crash or timeout, or a request answered 500. */
  readonly mcpErrorsAlarm: Alarm;
  /** DynamoDB throttled at least {@link TABLE_THROTTLES_ALARM} requests in 5 minutes. */
  readonly tableThrottlesAlarm: Alarm;
  /** The delivery success rate is under the stage's `deliverySuccessRateAlarmPercent`. */
  readonly deliverySuccessRateAlarm: Alarm;
  /** A recovery job failed on every receive (its message is in the jobs DLQ). */
  readonly recoveryJobFailuresAlarm: Alarm;
  /** A scheduled job (retention, secret expiry, stuck-pending repair) failed. */
  readonly scheduledJobErrorsAlarm: Alarm;
  /** Every alarm of the construct. */
  readonly alarms: readonly Alarm[];
  /** The runbook anchor of each alarm. */
  readonly runbookAnchors: ReadonlyMap<Alarm, string>;
  /** The topic every alarm notifies on ALARM and on OK; `alarmEmail`, when set, is subscribed to it. */
  readonly topic: Topic;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    const fiveMinutes = Duration.minutes(5);
    const oneMinute = Duration.minutes(1);
    const metrics = (this.metrics = new ServiceMetrics(props));
    const anchors = new Map<Alarm, string>();
    const alarm = (alarmId: string, text: AlarmText, options: AlarmOptions): Alarm => {
      const made = newAlarm(
        this,
        alarmId,
        `webhooks-${props.stage}-${kebab(alarmId.replace(/Alarm$/, ''))}`,
        `${text.description} Runbook: ${RUNBOOK}#${text.anchor}`,
        options,
      );
      anchors.set(made, text.anchor);
      return made;
    };
    // A failure queue alarms on its first message: each one is work that was lost until someone acts.
    const holdsMessages = (queue: IQueue): AlarmOptions => ({
      metric: queue.metricApproximateNumberOfMessagesVisible({ period: fiveMinutes, statistic: 'Maximum' }),
      threshold: 1,
    });

    // ---- the delivery pipeline
    // The consumer receives a dead letter within seconds, so a failing one leaves its messages mostly in flight
    // (not "visible"): depth is visible + in flight, and it alarms only when it stays above zero.
    const deadLetterDepth = new MathExpression({
      expression: 'visible + inFlight',
      label: 'Dead letters (visible + in flight)',
      period: oneMinute,
      usingMetrics: {
        visible: props.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: oneMinute, statistic: 'Maximum' }),
        inFlight: props.deadLetterQueue.metricApproximateNumberOfMessagesNotVisible({ period: oneMinute, statistic: 'Maximum' }),
      },
    });
    const minutes = DEAD_LETTER_ALARM_AFTER.toMinutes();
    this.deadLettersAlarm = alarm(
      'DeadLettersAlarm',
      {
        anchor: 'dead-letters-not-drained',
        description: `The delivery dead-letter queue has held messages for ${minutes} minutes: the dead-letter consumer is failing; deliveries are not marked dead_lettered.`,
      },
      { metric: deadLetterDepth, threshold: 1, evaluationPeriods: minutes },
    );
    this.publishFailuresAlarm = alarm(
      'PublishFailuresAlarm',
      {
        anchor: 'publish-failures',
        description:
          'Domain events reached the publisher failure queue: they produced no deliveries. Fix the cause, then publish them again.',
      },
      holdsMessages(props.publishFailures),
    );
    this.publisherErrorsAlarm = alarm(
      'PublisherErrorsAlarm',
      {
        anchor: 'publisher-errors',
        description:
          'The publisher failed (an error or a timeout; a refused event is not an error): EventBridge and Lambda retry the event for up to 2 hours, then it goes to the publisher failure queue.',
      },
      { metric: props.publisher.function.metricErrors({ period: fiveMinutes, statistic: 'Sum' }), threshold: 1 },
    );
    this.queueAgeAlarm = alarm(
      'QueueAgeAlarm',
      {
        anchor: 'delivery-backlog',
        description: `A fast-lane delivery message has waited ${OLDEST_MESSAGE_ALARM_AGE.toMinutes()} minutes: the dispatcher is not keeping up or not running.`,
      },
      {
        metric: props.deliveryQueue.metricApproximateAgeOfOldestMessage({ period: fiveMinutes, statistic: 'Maximum' }),
        threshold: OLDEST_MESSAGE_ALARM_AGE.toSeconds(),
      },
    );
    this.slowQueueAgeAlarm = alarm(
      'SlowQueueAgeAlarm',
      {
        anchor: 'slow-lane-backlog',
        description: `A slow-lane delivery message has waited ${SLOW_LANE_OLDEST_MESSAGE_ALARM_AGE.toMinutes()} minutes: the slow lane's dispatcher is not running, or more failing or slow endpoints wait there than its caps let through.`,
      },
      {
        metric: props.slowDeliveryQueue.metricApproximateAgeOfOldestMessage({ period: fiveMinutes, statistic: 'Maximum' }),
        threshold: SLOW_LANE_OLDEST_MESSAGE_ALARM_AGE.toSeconds(),
      },
    );
    const dispatcherErrors = {
      anchor: 'dispatcher-errors',
      description: 'failed (an error or a timeout, not a failed delivery): its whole batch is received again.',
    };
    this.dispatcherErrorsAlarm = alarm(
      'DispatcherErrorsAlarm',
      { ...dispatcherErrors, description: `The fast lane's dispatcher ${dispatcherErrors.description}` },
      { metric: props.dispatcher.function.metricErrors({ period: fiveMinutes, statistic: 'Sum' }), threshold: 1 },
    );
    this.slowDispatcherErrorsAlarm = alarm(
      'SlowDispatcherErrorsAlarm',
      { ...dispatcherErrors, description: `The slow lane's dispatcher ${dispatcherErrors.description}` },
      { metric: props.slowDispatcher.function.metricErrors({ period: fiveMinutes, statistic: 'Sum' }), threshold: 1 },
    );
    const throttled =
      "was throttled: the account's Lambda concurrency is used up, so its deliveries wait (its event source caps its concurrency, far below any quota: the fast lane's at dispatcherMaxConcurrency, the slow lane's at 4 batches).";
    this.dispatcherThrottlesAlarm = alarm(
      'DispatcherThrottlesAlarm',
      { anchor: 'dispatcher-throttles', description: `The fast lane's dispatcher ${throttled}` },
      { metric: props.dispatcher.function.metricThrottles({ period: fiveMinutes, statistic: 'Sum' }), threshold: 1 },
    );
    this.slowDispatcherThrottlesAlarm = alarm(
      'SlowDispatcherThrottlesAlarm',
      { anchor: 'dispatcher-throttles', description: `The slow lane's dispatcher ${throttled}` },
      { metric: props.slowDispatcher.function.metricThrottles({ period: fiveMinutes, statistic: 'Sum' }), threshold: 1 },
    );
    this.deliverySuccessRateAlarm = alarm(
      'DeliverySuccessRateAlarm',
      {
        anchor: 'delivery-success-rate',
        description: `Under ${props.deliverySuccessRateAlarmPercent ?? DEFAULT_CONFIG.deliverySuccessRateAlarmPercent} % of delivery attempts succeeded in ${SUCCESS_RATE_PERIOD.toMinutes()} minutes (delivered / (delivered + failed + failed_permanent), at least ${SUCCESS_RATE_MIN_ATTEMPTS} attempts): receivers are failing, or we are.`,
      },
      {
        metric: metrics.successRate(),
        threshold: props.deliverySuccessRateAlarmPercent ?? DEFAULT_CONFIG.deliverySuccessRateAlarmPercent,
        comparisonOperator: ComparisonOperator.LESS_THAN_THRESHOLD,
      },
    );

    // ---- the API, the authorizer and MCP
    this.apiServerErrorsAlarm = alarm(
      'ApiServerErrorsAlarm',
      {
        anchor: 'api-5xx',
        description: `At least ${API_5XX_ALARM_PERCENT} % of API requests were answered 5xx in two of the last three 5-minute periods (with at least ${API_5XX_MIN_REQUESTS} requests each).`,
      },
      { metric: metrics.apiServerErrorRate(), threshold: API_5XX_ALARM_PERCENT, evaluationPeriods: 3, datapointsToAlarm: 2 },
    );
    this.apiLatencyAlarm = alarm(
      'ApiLatencyAlarm',
      { anchor: 'api-latency', description: `The API's p99 latency was at least ${API_LATENCY_P99_ALARM.toSeconds()} s for 15 minutes.` },
      {
        metric: props.api.metricLatency({ period: fiveMinutes, statistic: 'p99' }),
        threshold: API_LATENCY_P99_ALARM.toMilliseconds(),
        evaluationPeriods: 3,
      },
    );
    // The authorizer throws "Unauthorized" for every unknown token, and Lambda counts that as an error, so its
    // Errors metric counts refusals; API Gateway's access log tells a failure (500) from a refusal (401).
    new MetricFilter(this, 'AuthorizerFailuresFilter', {
      logGroup: props.accessLogs,
      filterPattern: FilterPattern.any(...AUTHORIZER_FAILURE_RESPONSES.map((type) => FilterPattern.stringValue('$.errorType', '=', type))),
      metricNamespace: logMetricsNamespace(props.stage),
      metricName: AUTHORIZER_FAILURES_METRIC,
      metricValue: '1',
    });
    this.authorizerFailuresAlarm = alarm(
      'AuthorizerFailuresAlarm',
      {
        anchor: 'authorizer-errors',
        description: 'The token authorizer failed (not a refused token): API Gateway answered 500 to requests it could not authorize.',
      },
      { metric: metrics.authorizerFailures(), threshold: 1 },
    );
    // The MCP function answers its own 500s (and logs them at level ERROR), so Lambda's Errors counts only crashes and timeouts.
    new MetricFilter(this, 'McpRequestFailuresFilter', {
      logGroup: props.mcp.logGroup,
      filterPattern: FilterPattern.stringValue('$.level', '=', 'ERROR'),
      metricNamespace: logMetricsNamespace(props.stage),
      metricName: MCP_REQUEST_FAILURES_METRIC,
      metricValue: '1',
    });
    this.mcpErrorsAlarm = alarm(
      'McpErrorsAlarm',
      {
        anchor: 'mcp-errors',
        description:
          'The MCP function failed: it crashed or timed out, or answered a request 500 (an unexpected error, logged at level ERROR).',
      },
      {
        metric: new MathExpression({
          expression: 'FILL(crashes, 0) + FILL(failures, 0)',
          label: 'MCP errors',
          period: fiveMinutes,
          usingMetrics: {
            crashes: props.mcp.function.metricErrors({ period: fiveMinutes, statistic: 'Sum' }),
            failures: metrics.mcpRequestFailures(),
          },
        }),
        threshold: 1,
      },
    );

    // ---- the table, recovery jobs, scheduled jobs
    this.tableThrottlesAlarm = alarm(
      'TableThrottlesAlarm',
      {
        anchor: 'dynamodb-throttles',
        description: `DynamoDB throttled at least ${TABLE_THROTTLES_ALARM} requests to the service table in 5 minutes (a hot key, or the on-demand table's throughput ceiling).`,
      },
      { metric: metrics.tableThrottles(), threshold: TABLE_THROTTLES_ALARM },
    );
    this.recoveryJobFailuresAlarm = alarm(
      'RecoveryJobFailuresAlarm',
      {
        anchor: 'recovery-job-failures',
        description:
          'A recovery job failed on every receive: it is marked failed (worker_error) and its message is in the jobs dead-letter queue.',
      },
      holdsMessages(props.recoveryDeadLetterQueue),
    );
    this.scheduledJobErrorsAlarm = alarm(
      'ScheduledJobErrorsAlarm',
      {
        anchor: 'scheduled-job-errors',
        description: 'A scheduled job (retention, secret expiry or the stuck-pending repair) failed; the next run starts where it stopped.',
      },
      {
        metric: new MathExpression({
          expression: props.scheduledJobs.map((_, i) => `FILL(job${i}, 0)`).join(' + '),
          label: 'Scheduled job errors',
          period: fiveMinutes,
          usingMetrics: Object.fromEntries(
            props.scheduledJobs.map((fn, i) => [`job${i}`, fn.function.metricErrors({ period: fiveMinutes, statistic: 'Sum' })]),
          ),
        }),
        threshold: 1,
      },
    );

    this.alarms = [...anchors.keys()];
    this.runbookAnchors = anchors;

    // Always there, so a pager or chat integration can subscribe to the stack output AlarmTopicArn
    // without an e-mail address. TLS-only publishing (cdk-nag SNS3). No KMS key: the topic carries alarm
    // state changes, no customer data, and CloudWatch could not publish to a topic under SNS's AWS-managed key anyway.
    this.topic = new Topic(this, 'AlarmTopic', { displayName: `Webhook delivery alarms (${props.stage})`, enforceSSL: true });
    if (props.alarmEmail) this.topic.addSubscription(new EmailSubscription(props.alarmEmail));
    const action = new SnsAction(this.topic);
    for (const a of this.alarms) {
      a.addAlarmAction(action);
      a.addOkAction(action);
    }
  }
}

/** How an alarm compares. */
interface AlarmOptions {
  readonly metric: IMetric;
  readonly threshold: number;
  /** @default GREATER_THAN_OR_EQUAL_TO_THRESHOLD */
  readonly comparisonOperator?: ComparisonOperator;
  /** @default 1 */
  readonly evaluationPeriods?: number;
  /** @default evaluationPeriods (every one of them) */
  readonly datapointsToAlarm?: number;
}

/** An alarm where no data is fine: SQS publishes nothing for an idle queue, an idle function reports no errors. */
function newAlarm(scope: Construct, id: string, alarmName: string, description: string, options: AlarmOptions): Alarm {
  const evaluationPeriods = options.evaluationPeriods ?? 1;
  return new Alarm(scope, id, {
    alarmName,
    metric: options.metric,
    threshold: options.threshold,
    comparisonOperator: options.comparisonOperator ?? ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    evaluationPeriods,
    datapointsToAlarm: options.datapointsToAlarm ?? evaluationPeriods,
    treatMissingData: TreatMissingData.NOT_BREACHING,
    alarmDescription: description,
  });
}

/** `DispatcherErrors` → `dispatcher-errors`. */
function kebab(pascal: string): string {
  return pascal.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();
}
