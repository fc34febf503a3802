/**
 * The stage's CloudWatch dashboard, `webhooks-<stage>`: deliveries (throughput, outcomes, success
 * rate, latency), the queues, the lanes, the functions, the API, the table and the rate limits,
 * with the alarms' state on top. The widget titles are what docs/operations.md tells an on-call
 * engineer to look at, so they are exported ({@link DASHBOARD_WIDGETS}) and tested.
 */
import { Duration, Stack } from 'aws-cdk-lib';
import {
  AlarmStatusWidget,
  Dashboard as CwDashboard,
  GraphWidget,
  MathExpression,
  type Metric,
  TextWidget,
  type IMetric,
  type IWidget,
} from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';
import { METRIC_DIMENSIONS, METRICS, METRICS_NAMESPACE } from '#lambdas/contract/metrics';
import { ATTEMPT_OUTCOMES, DEPLOYED_LANES, RUNBOOK, type MonitoredResources, type Monitoring } from './monitoring';
import type { ServiceFunction } from './service-function';

/** The dashboard's widget titles, by what they show (docs/operations.md names them). */
export const DASHBOARD_WIDGETS = {
  alarms: 'Alarms',
  throughput: 'Deliveries published and attempts by outcome',
  successRate: 'Delivery success rate (%)',
  attemptDuration: 'Attempt duration by lane (p50, p99)',
  publishToFirstAttempt: 'Publish to first attempt (p50, p99)',
  queueDepth: 'Delivery queues: messages waiting',
  queueAge: 'Delivery queues: oldest message age',
  deadLetters: 'Dead-letter and failure queues',
  lanes: 'Slow lane: moves and deferrals',
  held: 'Held deliveries, replays, recovery jobs, auto-disables',
  functionErrors: 'Function errors',
  functionThrottles: 'Function throttles',
  functionDurations: 'Function duration (p99)',
  apiRequests: 'API requests, 4xx and 5xx',
  apiLatency: 'API latency (p50, p99)',
  edgeFailures: 'Authorizer failures and MCP request failures',
  tableThrottles: 'DynamoDB throttled requests',
  tableCapacity: 'DynamoDB consumed capacity',
  rateLimits: 'Rate-limit refusals by bucket',
} as const;

/** Properties of a {@link Dashboard}. */
export interface DashboardProps extends MonitoredResources {
  /** The alarms (and their metrics). */
  readonly monitoring: Monitoring;
}

const WIDTH = 24;
const HALF = 12;
const THIRD = 8;
const HEIGHT = 6;
const FIVE_MINUTES = Duration.minutes(5);

/**
 * The name of a stage's dashboard in a region. Dashboards are global to the account, unlike the
 * rest of the stack, so the name carries the region: a stage deployed to two regions gets two.
 */
export function dashboardNameOf(stage: string, region: string): string {
  return `webhooks-${stage}-${region}`;
}

/** The stage's dashboard. */
export class Dashboard extends Construct {
  /** The dashboard. */
  readonly dashboard: CwDashboard;
  /** Its name, `webhooks-<stage>-<region>` ({@link dashboardNameOf}; the stack output DashboardName). */
  readonly dashboardName: string;

  constructor(scope: Construct, id: string, props: DashboardProps) {
    super(scope, id);
    const { monitoring } = props;
    const m = monitoring.metrics;
    this.dashboardName = dashboardNameOf(props.stage, Stack.of(this).region);
    const graph = (
      title: keyof typeof DASHBOARD_WIDGETS,
      left: IMetric[],
      options: { right?: IMetric[]; width?: number; stacked?: boolean } = {},
    ) =>
      new GraphWidget({
        title: DASHBOARD_WIDGETS[title],
        left,
        right: options.right ?? [],
        width: options.width ?? HALF,
        height: HEIGHT,
        stacked: options.stacked ?? false,
      });

    // The functions, by the name an operator knows them by; the operations as one line each (sum of errors, worst p99).
    const named: [string, ServiceFunction][] = [
      ['dispatcher (fast)', props.dispatcher],
      ['dispatcher (slow)', props.slowDispatcher],
      ['publisher', props.publisher],
      ['dead-letter consumer', props.deadLetterConsumer],
      ['authorizer', props.authorizer],
      ['MCP', props.mcp],
      ['recovery worker', props.recoveryWorker],
    ];
    const perFunction = (metric: (fn: ServiceFunction) => Metric, combine: 'SUM' | 'MAX', label: string) => [
      ...named.map(([name, fn]) => metric(fn).with({ label: name })),
      combined('op', props.operations.map(metric), combine, `operations (${props.operations.length}): ${label}`),
      combined('job', props.scheduledJobs.map(metric), combine, `scheduled jobs: ${label}`),
    ];

    const queues = [
      ['fast lane', props.deliveryQueue],
      ['slow lane', props.slowDeliveryQueue],
    ] as const;

    const rows: IWidget[][] = [
      [
        new TextWidget({
          markdown: `# Webhook delivery: ${props.stage}\nEvery alarm links its section of the runbook, \`${RUNBOOK}\`. The service's own metrics are in namespace \`${METRICS_NAMESPACE}\`, dimension \`stage\` = \`${props.stage}\`.`,
          width: WIDTH,
          height: 2,
        }),
      ],
      [new AlarmStatusWidget({ title: DASHBOARD_WIDGETS.alarms, alarms: [...monitoring.alarms], width: WIDTH, height: 4 })],
      [
        graph('throughput', [m.own('deliveriesPublished', {}, { label: 'published' }), ...ATTEMPT_OUTCOMES.map((o) => m.attempts(o))]),
        graph('successRate', [m.successRate(FIVE_MINUTES)]),
      ],
      [
        graph(
          'attemptDuration',
          DEPLOYED_LANES.flatMap((lane) =>
            ['p50', 'p99'].map((statistic) =>
              m.own('attemptDuration', { [METRIC_DIMENSIONS.lane]: lane }, { statistic, label: `${lane} ${statistic}` }),
            ),
          ),
        ),
        graph(
          'publishToFirstAttempt',
          ['p50', 'p99'].map((statistic) => m.own('publishToFirstAttempt', {}, { statistic, label: statistic })),
        ),
      ],
      [
        graph(
          'queueDepth',
          queues.map(([name, q]) =>
            q.metricApproximateNumberOfMessagesVisible({ period: FIVE_MINUTES, statistic: 'Maximum', label: `${name} visible` }),
          ),
          {
            right: queues.map(([name, q]) =>
              q.metricApproximateNumberOfMessagesNotVisible({ period: FIVE_MINUTES, statistic: 'Maximum', label: `${name} in flight` }),
            ),
            width: THIRD,
          },
        ),
        graph(
          'queueAge',
          queues.map(([name, q]) =>
            q.metricApproximateAgeOfOldestMessage({ period: FIVE_MINUTES, statistic: 'Maximum', label: `${name} (s)` }),
          ),
          { width: THIRD },
        ),
        graph(
          'deadLetters',
          [
            props.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
              period: FIVE_MINUTES,
              statistic: 'Maximum',
              label: 'delivery DLQ visible',
            }),
            props.deadLetterQueue.metricApproximateNumberOfMessagesNotVisible({
              period: FIVE_MINUTES,
              statistic: 'Maximum',
              label: 'delivery DLQ in flight',
            }),
            props.publishFailures.metricApproximateNumberOfMessagesVisible({
              period: FIVE_MINUTES,
              statistic: 'Maximum',
              label: 'publish failures',
            }),
            props.recoveryDeadLetterQueue.metricApproximateNumberOfMessagesVisible({
              period: FIVE_MINUTES,
              statistic: 'Maximum',
              label: 'recovery jobs DLQ',
            }),
          ],
          { width: THIRD },
        ),
      ],
      [
        graph('lanes', [
          m.own('laneMoves', {}, { label: 'moves to the slow lane' }),
          m.own('laneDeferrals', {}, { label: 'deferrals in the slow lane' }),
        ]),
        graph('held', [
          m.own('deliveriesHeld', {}, { label: 'held' }),
          m.own('replays', {}, { label: 'replays' }),
          m.own('recoveryJobs', {}, { label: 'recovery jobs' }),
          m.own('autoDisables', {}, { label: 'auto-disables' }),
        ]),
      ],
      [
        graph(
          'functionErrors',
          perFunction((fn) => fn.function.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }), 'SUM', 'errors'),
          { width: THIRD },
        ),
        graph(
          'functionThrottles',
          perFunction((fn) => fn.function.metricThrottles({ period: FIVE_MINUTES, statistic: 'Sum' }), 'SUM', 'throttles'),
          { width: THIRD },
        ),
        graph(
          'functionDurations',
          perFunction((fn) => fn.function.metricDuration({ period: FIVE_MINUTES, statistic: 'p99' }), 'MAX', 'worst p99'),
          { width: THIRD },
        ),
      ],
      [
        graph(
          'apiRequests',
          [
            props.api.metricCount({ period: FIVE_MINUTES, statistic: 'SampleCount', label: 'requests' }),
            props.api.metricClientError({ period: FIVE_MINUTES, statistic: 'Sum', label: '4xx' }),
            props.api.metricServerError({ period: FIVE_MINUTES, statistic: 'Sum', label: '5xx' }),
          ],
          { right: [m.apiServerErrorRate()], width: THIRD },
        ),
        graph(
          'apiLatency',
          ['p50', 'p99'].map((statistic) => props.api.metricLatency({ period: FIVE_MINUTES, statistic, label: statistic })),
          { width: THIRD },
        ),
        graph('edgeFailures', [m.authorizerFailures(), m.mcpRequestFailures()], { width: THIRD }),
      ],
      [
        graph('tableThrottles', [m.tableThrottles()], { width: THIRD }),
        graph(
          'tableCapacity',
          [
            props.table.metricConsumedReadCapacityUnits({ period: FIVE_MINUTES, statistic: 'Sum', label: 'read units' }),
            props.table.metricConsumedWriteCapacityUnits({ period: FIVE_MINUTES, statistic: 'Sum', label: 'write units' }),
          ],
          { width: THIRD },
        ),
        graph(
          'rateLimits',
          [
            // Every bucket that refused anything: the per-token buckets and the workspace quotas alike.
            new MathExpression({
              expression: `SEARCH('{${METRICS_NAMESPACE},${METRIC_DIMENSIONS.stage},${METRIC_DIMENSIONS.bucket}} MetricName="${METRICS.rateLimitRefusals.name}" ${METRIC_DIMENSIONS.stage}="${props.stage}"', 'Sum', 300)`,
              period: FIVE_MINUTES,
              usingMetrics: {},
            }),
          ],
          { width: THIRD },
        ),
      ],
    ];

    this.dashboard = new CwDashboard(this, 'Dashboard', {
      dashboardName: this.dashboardName,
      widgets: rows,
      defaultInterval: Duration.hours(3),
    });
  }
}

/** One line for many functions' metric: their sum, or their maximum (`prefix` keeps the ids apart within a graph). */
function combined(prefix: string, metrics: IMetric[], combine: 'SUM' | 'MAX', label: string): IMetric {
  return new MathExpression({
    expression: `${combine}([${metrics.map((_, i) => `${prefix}${i}`).join(', ')}])`,
    label,
    period: FIVE_MINUTES,
    usingMetrics: Object.fromEntries(metrics.map((metric, i) => [`${prefix}${i}`, metric])),
  });
}
