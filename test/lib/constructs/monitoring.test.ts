/**
 * The alarms (lib/constructs/monitoring.ts) on a bare stack with the queues and
 * the dispatcher they watch, without an alarmEmail (the topic is checked in
 * ../stack-config.test.ts).
 */
import { Template } from 'aws-cdk-lib/assertions';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import type { IConstruct } from 'constructs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Monitoring } from '../../../lib/constructs/monitoring';
import { functionEntry, ServiceFunction } from '../../../lib/constructs/service-function';
import { buildTestStack, removeTestOutput, type TestStack } from '../synth';
import { logicalId, ofType, resourcesOf, type Resource } from '../template';

let built: TestStack;
let deliveryQueue: Queue;
let deadLetterQueue: Queue;
let publishFailures: Queue;
let dispatcher: ServiceFunction;
let monitoring: Monitoring;
let template: Template;
let resources: Record<string, Resource>;

beforeAll(() => {
  built = buildTestStack();
  deliveryQueue = new Queue(built.stack, 'DeliveryQueue');
  deadLetterQueue = new Queue(built.stack, 'DeadLetterQueue');
  publishFailures = new Queue(built.stack, 'PublishFailures');
  dispatcher = new ServiceFunction(built.stack, 'Dispatcher', { entry: functionEntry('dispatcher') });
  monitoring = new Monitoring(built.stack, 'Monitoring', { deliveryQueue, deadLetterQueue, publishFailures, dispatcher });
  template = Template.fromStack(built.stack);
  resources = resourcesOf(template);
}, 120_000);

afterAll(() => removeTestOutput(built?.app));

describe('the alarms', () => {
  const alarmProps = (alarm: IConstruct) => resources[logicalId(alarm)]!.Properties;

  it('are four, none with actions when no alarmEmail is configured', () => {
    template.resourceCountIs('AWS::CloudWatch::Alarm', 4);
    template.resourceCountIs('AWS::SNS::Topic', 0);
    for (const [id, alarm] of ofType(template, 'AWS::CloudWatch::Alarm')) {
      expect(alarm.Properties.AlarmActions, id).toBeUndefined();
      expect(alarm.Properties, id).toMatchObject({ ComparisonOperator: 'GreaterThanOrEqualToThreshold', TreatMissingData: 'notBreaching' });
      expect((alarm.Properties.AlarmDescription as string).length, id).toBeGreaterThan(40);
    }
  });

  it('fire when dead letters (visible or in flight) stay in the dead-letter queue for 15 minutes', () => {
    const props = alarmProps(monitoring.deadLettersAlarm);
    expect(props).toMatchObject({ Threshold: 1, EvaluationPeriods: 15, DatapointsToAlarm: 15 });
    const metrics = props.Metrics as { Id: string; Expression?: string; MetricStat?: { Metric: { MetricName: string; Dimensions: unknown[] }; Period: number } }[];
    expect(metrics.find((m) => m.Expression)?.Expression).toBe('visible + inFlight');
    const stats = metrics.filter((m) => m.MetricStat);
    expect(stats.map((m) => m.MetricStat!.Metric.MetricName).sort()).toEqual(['ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesVisible']);
    for (const m of stats) {
      expect(m.MetricStat!.Period).toBe(60);
      expect(m.MetricStat!.Metric.Dimensions).toEqual([{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(deadLetterQueue), 'QueueName'] } }]);
    }
  });

  it('fire on any event in the publisher failure queue', () => {
    expect(alarmProps(monitoring.publishFailuresAlarm)).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(publishFailures), 'QueueName'] } }],
      Statistic: 'Maximum',
      Threshold: 1,
    });
  });

  it('fire when the oldest delivery message is 15 minutes old', () => {
    expect(alarmProps(monitoring.queueAgeAlarm)).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateAgeOfOldestMessage',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(deliveryQueue), 'QueueName'] } }],
      Statistic: 'Maximum',
      Period: 300,
      Threshold: 900,
    });
  });

  it('fire on any dispatcher error in 5 minutes', () => {
    expect(alarmProps(monitoring.dispatcherErrorsAlarm)).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: logicalId(dispatcher.function) } }],
      Statistic: 'Sum',
      Period: 300,
      Threshold: 1,
      EvaluationPeriods: 1,
    });
  });
});
