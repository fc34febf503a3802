/**
 * The outbox deployed (lib/constructs/outbox.ts) on a bare stack with a bus: its table (key,
 * stream of new images, TTL, point-in-time recovery), the relay's event source mapping (inserts
 * only, partial batch failures, bisecting, bounded retries, the on-failure queue), the alarm on
 * that queue, and exactly the grants of the relay and of a function that writes events.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { EventBus } from 'aws-cdk-lib/aws-events';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENV, OUTBOX } from '../../../lambdas/contract/deployment';
import { Outbox } from '../../../lib/constructs/outbox';
import { functionEntry, ServiceFunction } from '../../../lib/constructs/service-function';
import { buildTestStack, removeTestOutput, type TestStack } from '../synth';
import { actionsOf, logicalId, propertiesOf, resourcesOf, statementsOf, variablesOf } from '../template';

let built: TestStack;
let bus: EventBus;
let outbox: Outbox;
let writer: ServiceFunction;
let template: Template;

beforeAll(() => {
  built = buildTestStack();
  bus = new EventBus(built.stack, 'Bus');
  outbox = new Outbox(built.stack, 'Outbox', { eventBus: bus, stage: 'test' });
  writer = new ServiceFunction(built.stack, 'Writer', { entry: functionEntry('create-webhook') });
  outbox.addWriter(writer);
  outbox.notify(new Topic(built.stack, 'Alarms'));
  template = Template.fromStack(built.stack);
}, 120_000);

afterAll(() => removeTestOutput(built?.app));

describe('the outbox', () => {
  it('is a table of its own keyed by the event id, with a stream of new images, a TTL and point-in-time recovery, retained', () => {
    const props = propertiesOf(template, outbox.table);
    expect(props.KeySchema).toEqual([{ AttributeName: OUTBOX.table.partitionKey, KeyType: 'HASH' }]);
    expect(props.BillingMode).toBe('PAY_PER_REQUEST');
    expect(props.StreamSpecification).toEqual({ StreamViewType: 'NEW_IMAGE' });
    expect(props.TimeToLiveSpecification).toEqual({ AttributeName: OUTBOX.table.ttlAttribute, Enabled: true });
    expect(props.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    expect(props.DeletionProtectionEnabled).toBe(true);
    expect(resourcesOf(template)[logicalId(outbox.table)]!.DeletionPolicy).toBe('Retain');
  });

  it('feeds the relay the stream’s inserts only, with partial batch failures, bisecting, bounded retries and an on-failure queue', () => {
    const mappings = template.findResources('AWS::Lambda::EventSourceMapping', {
      Properties: { FunctionName: { Ref: logicalId(outbox.relay.function) } },
    });
    expect(Object.values(mappings).map((m) => m.Properties)).toEqual([
      {
        EventSourceArn: { 'Fn::GetAtt': [logicalId(outbox.table), 'StreamArn'] },
        FunctionName: { Ref: logicalId(outbox.relay.function) },
        StartingPosition: 'TRIM_HORIZON',
        BatchSize: OUTBOX.relay.batchSize,
        BisectBatchOnFunctionError: true,
        MaximumRetryAttempts: OUTBOX.relay.retryAttempts,
        MaximumRecordAgeInSeconds: OUTBOX.relay.maximumRecordAgeSeconds,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        FilterCriteria: { Filters: [{ Pattern: JSON.stringify({ eventName: ['INSERT'] }) }] },
        DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [logicalId(outbox.failures), 'Arn'] } } },
      },
    ]);
    expect(propertiesOf(template, outbox.relay.function).Timeout).toBe(OUTBOX.relay.timeoutSeconds);
  });

  it('keeps what the relay gave up for 14 days, encrypted, TLS only, and alarms on its first message', () => {
    expect(propertiesOf(template, outbox.failures)).toMatchObject({ MessageRetentionPeriod: 14 * 24 * 3600, SqsManagedSseEnabled: true });
    const alarm = propertiesOf(template, outbox.failuresAlarm);
    expect(alarm).toMatchObject({
      AlarmName: 'webhooks-test-outbox-relay-failures',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Namespace: 'AWS/SQS',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(outbox.failures), 'QueueName'] } }],
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
    });
    expect(alarm.AlarmActions).toHaveLength(1);
    expect(alarm.OKActions).toHaveLength(1);
  });

  it('lets the relay put on the bus, read the stream and send to its on-failure queue: nothing else', () => {
    expect(variablesOf(template, outbox.relay)).toMatchObject({ [ENV.EVENT_BUS_NAME]: { Ref: logicalId(bus) } });
    expect(variablesOf(template, outbox.relay)).not.toHaveProperty(ENV.TABLE_NAME);
    const actions = statementsOf(template, outbox.relay)
      .flatMap(actionsOf)
      .filter((a) => !/^(xray|logs):/.test(a))
      .sort();
    expect(actions).toEqual(
      [
        'dynamodb:DescribeStream',
        'dynamodb:GetRecords',
        'dynamodb:GetShardIterator',
        'dynamodb:ListStreams',
        'events:PutEvents',
        // The on-failure queue: send only (lib/constructs/function-access.ts).
        'sqs:SendMessage',
      ].sort(),
    );
  });

  it('lets a writer put outbox items only (inside its transactions), and names the table in OUTBOX_TABLE_NAME', () => {
    expect(variablesOf(template, writer)).toMatchObject({ [ENV.OUTBOX_TABLE_NAME]: { Ref: logicalId(outbox.table) } });
    const onOutbox = statementsOf(template, writer).filter((s) => JSON.stringify(s.Resource).includes(logicalId(outbox.table)));
    expect(onOutbox).toEqual([
      { Effect: 'Allow', Action: 'dynamodb:PutItem', Resource: { 'Fn::GetAtt': [logicalId(outbox.table), 'Arn'] } },
    ]);
    expect(statementsOf(template, writer).flatMap(actionsOf)).not.toContain('events:PutEvents');
  });
});
