/**
 * The alarms (lib/constructs/monitoring.ts) on a bare stack with what they watch: each alarm's
 * metric, threshold and runbook link (an existing section of docs/operations.md), no action
 * without an alarmEmail, and with one every alarm notifying the topic on ALARM and on OK.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METRICS_NAMESPACE } from '../../../lambdas/contract/metrics';
import {
  API_5XX_ALARM_PERCENT,
  AUTHORIZER_FAILURES_METRIC,
  MCP_REQUEST_FAILURES_METRIC,
  Monitoring,
  RUNBOOK,
  TABLE_THROTTLES_ALARM,
  type MonitoredResources,
} from '../../../lib/constructs/monitoring';
import { PROJECT_ROOT, type ServiceFunction } from '../../../lib/constructs/service-function';
import { buildTestStack, removeTestOutput, type TestStack } from '../synth';
import { logicalId, ofType, resourcesOf, type Resource } from '../template';
import { monitoredResources } from './monitored-resources';

let built: TestStack;
let watched: MonitoredResources;
let monitoring: Monitoring;
let template: Template;
let resources: Record<string, Resource>;

beforeAll(() => {
  built = buildTestStack();
  watched = monitoredResources(built.stack, 'qa');
  monitoring = new Monitoring(built.stack, 'Monitoring', { ...watched, deliverySuccessRateAlarmPercent: 85 });
  template = Template.fromStack(built.stack);
  resources = resourcesOf(template);
}, 120_000);

afterAll(() => removeTestOutput(built?.app));

/** A metric an alarm reads. */
interface ReadMetric {
  Namespace: string;
  MetricName: string;
  Dimensions?: { Name: string; Value: unknown }[];
  Stat: string;
  Period: number;
}

const propsOf = (alarm: Alarm) => resources[logicalId(alarm)]!.Properties;

/** The metrics an alarm reads, a single metric or a math expression's, and the expression. */
function readOf(alarm: Alarm): { metrics: ReadMetric[]; expression?: string } {
  const p = propsOf(alarm);
  if (p.MetricName) {
    return {
      metrics: [
        {
          Namespace: p.Namespace as string,
          MetricName: p.MetricName as string,
          Dimensions: p.Dimensions as ReadMetric['Dimensions'],
          Stat: (p.Statistic ?? p.ExtendedStatistic) as string,
          Period: p.Period as number,
        },
      ],
    };
  }
  const entries = p.Metrics as {
    Expression?: string;
    MetricStat?: { Metric: Omit<ReadMetric, 'Stat' | 'Period'>; Stat: string; Period: number };
  }[];
  return {
    expression: entries.find((e) => e.Expression)?.Expression,
    metrics: entries
      .filter((e) => e.MetricStat)
      .map((e) => ({ ...e.MetricStat!.Metric, Stat: e.MetricStat!.Stat, Period: e.MetricStat!.Period })),
  };
}

const queueDimension = (queue: MonitoredResources['deliveryQueue']) => [
  { Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(queue), 'QueueName'] } },
];
const functionDimension = (fn: ServiceFunction) => [{ Name: 'FunctionName', Value: { Ref: logicalId(fn.function) } }];

/** GitHub's anchors of a markdown file's headings (as test/docs/doc-links.test.ts computes them). */
function anchorsOf(doc: string): Set<string> {
  const text = readFileSync(join(PROJECT_ROOT, doc), 'utf8');
  return new Set(
    [...text.matchAll(/^#+\s+(.+)$/gm)].map((m) =>
      m[1]!
        .trim()
        .toLowerCase()
        .replace(/[^a-z0-9 -]/g, '')
        .replace(/ /g, '-'),
    ),
  );
}

describe('the alarms', () => {
  it('are one per failure path, each notifying the topic on ALARM and on OK, which has no subscription without an alarmEmail', () => {
    expect(monitoring.alarms).toHaveLength(17);
    template.resourceCountIs('AWS::CloudWatch::Alarm', monitoring.alarms.length);
    // The topic is there without an address, so a pager can subscribe to it (the stack output AlarmTopicArn).
    template.resourceCountIs('AWS::SNS::Topic', 1);
    template.resourceCountIs('AWS::SNS::Subscription', 0);
    const topicRef = { Ref: logicalId(monitoring.topic) };
    for (const [id, alarm] of ofType(template, 'AWS::CloudWatch::Alarm')) {
      expect(alarm.Properties.AlarmActions, id).toEqual([topicRef]);
      expect(alarm.Properties.OKActions, id).toEqual([topicRef]);
      expect(alarm.Properties.TreatMissingData, id).toBe('notBreaching');
      expect(alarm.Properties.AlarmName, id).toMatch(/^webhooks-qa-[a-z0-9-]+$/);
    }
  });

  it('each link their runbook section, which exists in docs/operations.md', () => {
    const anchors = anchorsOf(RUNBOOK);
    for (const alarm of monitoring.alarms) {
      const description = propsOf(alarm).AlarmDescription as string;
      const anchor = monitoring.runbookAnchors.get(alarm)!;
      expect(description, alarm.node.id).toMatch(new RegExp(`\\. Runbook: docs/operations\\.md#${anchor}$`));
      expect(description.length, alarm.node.id).toBeGreaterThan(80);
      expect(description.length, alarm.node.id).toBeLessThanOrEqual(1024);
      expect(anchors, `${RUNBOOK} has no section #${anchor} (${alarm.node.id})`).toContain(anchor);
    }
  });

  it('fire when dead letters (visible or in flight) stay in the dead-letter queue for 15 minutes', () => {
    expect(propsOf(monitoring.deadLettersAlarm)).toMatchObject({
      Threshold: 1,
      EvaluationPeriods: 15,
      DatapointsToAlarm: 15,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    const { expression, metrics } = readOf(monitoring.deadLettersAlarm);
    expect(expression).toBe('visible + inFlight');
    expect(metrics.map((m) => m.MetricName).sort()).toEqual([
      'ApproximateNumberOfMessagesNotVisible',
      'ApproximateNumberOfMessagesVisible',
    ]);
    for (const m of metrics)
      expect(m).toMatchObject({ Namespace: 'AWS/SQS', Period: 60, Stat: 'Maximum', Dimensions: queueDimension(watched.deadLetterQueue) });
  });

  it('fire on any event in the publisher failure queue, and on any publisher error in 5 minutes', () => {
    expect(propsOf(monitoring.publishFailuresAlarm)).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: queueDimension(watched.publishFailures),
      Statistic: 'Maximum',
      Threshold: 1,
    });
    expect(propsOf(monitoring.publisherErrorsAlarm)).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: functionDimension(watched.publisher),
      Statistic: 'Sum',
      Period: 300,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
  });

  it('fire when the oldest fast-lane message is 15 minutes old, and the oldest slow-lane message an hour old', () => {
    const age = { Namespace: 'AWS/SQS', MetricName: 'ApproximateAgeOfOldestMessage', Statistic: 'Maximum', Period: 300 };
    expect(propsOf(monitoring.queueAgeAlarm)).toMatchObject({ ...age, Dimensions: queueDimension(watched.deliveryQueue), Threshold: 900 });
    expect(propsOf(monitoring.slowQueueAgeAlarm)).toMatchObject({
      ...age,
      Dimensions: queueDimension(watched.slowDeliveryQueue),
      Threshold: 3600,
    });
  });

  it('fire on any error or throttle of either dispatcher in 5 minutes', () => {
    const cases = [
      [monitoring.dispatcherErrorsAlarm, watched.dispatcher, 'Errors'],
      [monitoring.slowDispatcherErrorsAlarm, watched.slowDispatcher, 'Errors'],
      [monitoring.dispatcherThrottlesAlarm, watched.dispatcher, 'Throttles'],
      [monitoring.slowDispatcherThrottlesAlarm, watched.slowDispatcher, 'Throttles'],
    ] as const;
    for (const [alarm, fn, metricName] of cases) {
      expect(propsOf(alarm), alarm.node.id).toMatchObject({
        Namespace: 'AWS/Lambda',
        MetricName: metricName,
        Dimensions: functionDimension(fn),
        Statistic: 'Sum',
        Period: 300,
        Threshold: 1,
        EvaluationPeriods: 1,
      });
    }
  });

  it('fire when the delivery success rate, from the Attempts metric of the stage, is under the stage setting', () => {
    expect(propsOf(monitoring.deliverySuccessRateAlarm)).toMatchObject({
      Threshold: 85,
      ComparisonOperator: 'LessThanThreshold',
      EvaluationPeriods: 1,
    });
    expect(propsOf(monitoring.deliverySuccessRateAlarm).AlarmDescription).toMatch(/^Under 85 % of delivery attempts/);
    const { expression, metrics } = readOf(monitoring.deliverySuccessRateAlarm);
    expect(expression).toBe(
      'IF((FILL(d, 0) + FILL(f, 0) + FILL(p, 0)) >= 20, 100 * FILL(d, 0) / (FILL(d, 0) + FILL(f, 0) + FILL(p, 0)), 100)',
    );
    expect(metrics.map((m) => m.Dimensions!.find((d) => d.Name === 'outcome')!.Value).sort()).toEqual([
      'delivered',
      'failed',
      'failed_permanent',
    ]);
    for (const m of metrics) {
      expect(m).toMatchObject({ Namespace: METRICS_NAMESPACE, MetricName: 'Attempts', Stat: 'Sum', Period: 900 });
      expect(m.Dimensions).toContainEqual({ Name: 'stage', Value: 'qa' });
    }
  });

  it('fire when 5 % of API requests are 5xx in two 5-minute periods of three (given 20 requests)', () => {
    expect(propsOf(monitoring.apiServerErrorsAlarm)).toMatchObject({
      Threshold: API_5XX_ALARM_PERCENT,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 2,
    });
    const { expression, metrics } = readOf(monitoring.apiServerErrorsAlarm);
    expect(expression).toBe('IF(FILL(requests, 0) >= 20, 100 * FILL(errors, 0) / requests, 0)');
    expect(metrics.map((m) => [m.MetricName, m.Stat])).toEqual(
      expect.arrayContaining([
        ['5XXError', 'Sum'],
        ['Count', 'SampleCount'],
      ]),
    );
    for (const m of metrics)
      expect(m).toMatchObject({ Namespace: 'AWS/ApiGateway', Dimensions: [{ Name: 'ApiName', Value: 'webhooks-qa' }], Period: 300 });
  });

  it('fire when the API p99 latency is 3 s for 15 minutes', () => {
    expect(propsOf(monitoring.apiLatencyAlarm)).toMatchObject({
      Namespace: 'AWS/ApiGateway',
      MetricName: 'Latency',
      Dimensions: [{ Name: 'ApiName', Value: 'webhooks-qa' }],
      ExtendedStatistic: 'p99',
      Period: 300,
      Threshold: 3000,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
    });
  });

  it('fire on an authorizer failure, counted from the API access log (a refused token is no failure)', () => {
    expect(propsOf(monitoring.authorizerFailuresAlarm)).toMatchObject({ Threshold: 1 });
    expect(readOf(monitoring.authorizerFailuresAlarm).metrics).toEqual([
      { Namespace: `${METRICS_NAMESPACE}/qa`, MetricName: AUTHORIZER_FAILURES_METRIC, Stat: 'Sum', Period: 300 },
    ]);
    template.hasResourceProperties('AWS::Logs::MetricFilter', {
      LogGroupName: { Ref: logicalId(watched.accessLogs) },
      FilterPattern: '{ ($.errorType = "AUTHORIZER_FAILURE") || ($.errorType = "AUTHORIZER_CONFIGURATION_ERROR") }',
      MetricTransformations: [{ MetricNamespace: `${METRICS_NAMESPACE}/qa`, MetricName: AUTHORIZER_FAILURES_METRIC, MetricValue: '1' }],
    });
  });

  it('fire on an MCP crash or timeout, or an MCP request that failed (logged at level ERROR)', () => {
    expect(propsOf(monitoring.mcpErrorsAlarm)).toMatchObject({ Threshold: 1 });
    const { expression, metrics } = readOf(monitoring.mcpErrorsAlarm);
    expect(expression).toBe('FILL(crashes, 0) + FILL(failures, 0)');
    expect(metrics).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Namespace: 'AWS/Lambda', MetricName: 'Errors', Dimensions: functionDimension(watched.mcp), Stat: 'Sum' }),
        expect.objectContaining({ Namespace: `${METRICS_NAMESPACE}/qa`, MetricName: MCP_REQUEST_FAILURES_METRIC, Stat: 'Sum' }),
      ]),
    );
    template.hasResourceProperties('AWS::Logs::MetricFilter', {
      LogGroupName: { Ref: logicalId(watched.mcp.logGroup) },
      FilterPattern: '{ $.level = "ERROR" }',
      MetricTransformations: [{ MetricNamespace: `${METRICS_NAMESPACE}/qa`, MetricName: MCP_REQUEST_FAILURES_METRIC, MetricValue: '1' }],
    });
  });

  it('fire when DynamoDB throttles 10 requests of the service table in 5 minutes, whatever the operation', () => {
    expect(propsOf(monitoring.tableThrottlesAlarm)).toMatchObject({ Threshold: TABLE_THROTTLES_ALARM });
    const { metrics } = readOf(monitoring.tableThrottlesAlarm);
    expect(metrics.map((m) => m.Dimensions!.find((d) => d.Name === 'Operation')!.Value).sort()).toEqual([
      'BatchGetItem',
      'BatchWriteItem',
      'DeleteItem',
      'GetItem',
      'PutItem',
      'Query',
      'TransactWriteItems',
      'UpdateItem',
    ]);
    for (const m of metrics) {
      expect(m).toMatchObject({ Namespace: 'AWS/DynamoDB', MetricName: 'ThrottledRequests', Stat: 'Sum', Period: 300 });
      expect(m.Dimensions).toContainEqual({ Name: 'TableName', Value: { Ref: logicalId(watched.table) } });
    }
  });

  it('count table throttles of some operations only: every series is filled with 0 before the sum', () => {
    // DynamoDB publishes ThrottledRequests only for an operation that was throttled; a plain sum of
    // the eight series has no value while any one of them is missing, so the alarm would never fire.
    const p = propsOf(monitoring.tableThrottlesAlarm);
    const entries = p.Metrics as { Id: string; Expression?: string; MetricStat?: unknown; ReturnData?: boolean }[];
    const series = entries.filter((e) => e.MetricStat).map((e) => e.Id);
    expect(series).toHaveLength(8);
    const summed = entries.find((e) => e.Expression)!;
    expect(summed.ReturnData ?? true).toBe(true);
    const terms = summed.Expression!.split(' + ');
    expect(terms.sort()).toEqual(series.map((id) => `FILL(${id}, 0)`).sort());
  });

  it('fire on a message in the recovery jobs DLQ, and on any scheduled job error', () => {
    expect(propsOf(monitoring.recoveryJobFailuresAlarm)).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: queueDimension(watched.recoveryDeadLetterQueue),
      Threshold: 1,
    });
    const { metrics } = readOf(monitoring.scheduledJobErrorsAlarm);
    expect(metrics.map((m) => m.Dimensions)).toEqual(watched.scheduledJobs.map(functionDimension));
    for (const m of metrics) expect(m).toMatchObject({ Namespace: 'AWS/Lambda', MetricName: 'Errors', Stat: 'Sum' });
    expect(propsOf(monitoring.scheduledJobErrorsAlarm)).toMatchObject({ Threshold: 1 });
  });
});

describe('with an alarmEmail', () => {
  it('subscribe the address to the topic every alarm notifies on ALARM and on OK', () => {
    const other = buildTestStack();
    try {
      const withEmail = new Monitoring(other.stack, 'Monitoring', { ...monitoredResources(other.stack), alarmEmail: 'ops@example.com' });
      const t = Template.fromStack(other.stack);
      t.resourceCountIs('AWS::SNS::Topic', 1);
      t.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com' });
      const topicRef = { Ref: logicalId(withEmail.topic) };
      const alarms = ofType(t, 'AWS::CloudWatch::Alarm');
      expect(alarms).toHaveLength(withEmail.alarms.length);
      for (const [id, alarm] of alarms) expect(alarm.Properties, id).toMatchObject({ AlarmActions: [topicRef], OKActions: [topicRef] });
      // The default threshold is the configuration's.
      expect(resourcesOf(t)[logicalId(withEmail.deliverySuccessRateAlarm)]!.Properties.Threshold).toBe(90);
    } finally {
      removeTestOutput(other.app);
    }
  });
});
