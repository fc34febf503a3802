/**
 * The delivery pipeline (lib/constructs/delivery-pipeline.ts) on a bare stack
 * with the table: the bus and its rule, the publisher, the delivery queue, the slow lane's
 * queue and their dead-letter queue, the two dispatchers, the dead-letter consumer, and what each
 * function may do. Who else may send to the queue or put on the bus is checked
 * across every role in ../webhooks-stack.test.ts ('grants beyond the table').
 */
import { Match, Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_RETRIES } from '../../../lambdas/domain/backoff';
import { SEND_LIMITS } from '../../../lambdas/contract/limits';
import { DEAD_LETTER_CONSUMER, DEFAULT_PUBLISHER_RESERVED_CONCURRENCY, EVENT_SOURCE } from '../../../lambdas/contract/deployment';
import { DeliveryPipeline } from '../../../lib/constructs/delivery-pipeline';
import type { ServiceFunction } from '../../../lib/constructs/service-function';
import { ServiceTable } from '../../../lib/constructs/table';
import { tableGrantOf } from './table-grant';
import { buildTestStack, removeTestOutput, type TestStack } from '../synth';
import { actionsOf, logicalId, ofType, resourcesOf, statementsOf, type Resource } from '../template';

let built: TestStack;
let table: ServiceTable;
let pipeline: DeliveryPipeline;
let template: Template;
let resources: Record<string, Resource>;

beforeAll(() => {
  built = buildTestStack();
  table = new ServiceTable(built.stack, 'Data');
  // The bus name the default stage (`dev`) gives it.
  pipeline = new DeliveryPipeline(built.stack, 'Delivery', { table, eventBusName: 'webhooks-dev' });
  template = Template.fromStack(built.stack);
  resources = resourcesOf(template);
}, 120_000);

afterAll(() => removeTestOutput(built?.app));

describe('the delivery pipeline', () => {
  const queueProps = () => resources[logicalId(pipeline.queue)]!.Properties;
  const dlqProps = () => resources[logicalId(pipeline.deadLetterQueue)]!.Properties;
  const functionProps = (fn: ServiceFunction) => resources[logicalId(fn.function)]!.Properties;

  it('gives each dispatcher 512 MB and 30 s', () => {
    expect(functionProps(pipeline.dispatcher)).toMatchObject({ MemorySize: 512, Timeout: 30 });
    expect(functionProps(pipeline.slowDispatcher)).toMatchObject({ MemorySize: 512, Timeout: 30 });
  });

  it('feeds the slow dispatcher from the slow lane: batches of 10, no batching window, at most 4 concurrent, partial batch failures (docs/behaviour.md#delivery-lanes)', () => {
    const mappings = template.findResources('AWS::Lambda::EventSourceMapping', {
      Properties: { FunctionName: { Ref: logicalId(pipeline.slowDispatcher.function) } },
    });
    expect(Object.values(mappings).map((m) => m.Properties)).toEqual([
      {
        EventSourceArn: { 'Fn::GetAtt': [logicalId(pipeline.slowQueue), 'Arn'] },
        FunctionName: { Ref: logicalId(pipeline.slowDispatcher.function) },
        BatchSize: 10,
        ScalingConfig: { MaximumConcurrency: 4 },
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      },
    ]);
    // The same redrive as the delivery queue, to the same dead-letter queue, and the same visibility rule.
    const slow = resources[logicalId(pipeline.slowQueue)]!.Properties;
    expect(slow.RedrivePolicy).toEqual(queueProps().RedrivePolicy);
    expect(slow.VisibilityTimeout as number).toBeGreaterThanOrEqual(6 * (functionProps(pipeline.slowDispatcher).Timeout as number));
  });

  it('feeds the dispatcher from the delivery queue: batches of 25, 1 s window, at most 4 concurrent, partial batch failures', () => {
    const mappings = template.findResources('AWS::Lambda::EventSourceMapping', {
      Properties: { FunctionName: { Ref: logicalId(pipeline.dispatcher.function) } },
    });
    expect(Object.values(mappings)).toHaveLength(1);
    expect(Object.values(mappings)[0]!.Properties).toEqual({
      EventSourceArn: { 'Fn::GetAtt': [logicalId(pipeline.queue), 'Arn'] },
      FunctionName: { Ref: logicalId(pipeline.dispatcher.function) },
      BatchSize: 25,
      MaximumBatchingWindowInSeconds: 1,
      ScalingConfig: { MaximumConcurrency: 4 },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    // maxConcurrency caps the dispatcher; no reserved concurrency on top.
    expect(functionProps(pipeline.dispatcher).ReservedConcurrentExecutions).toBeUndefined();
  });

  it('moves a message to the dead-letter queue after the first attempt and 6 retries (maxReceiveCount 7)', () => {
    expect(MAX_RETRIES).toBe(6);
    expect(queueProps().RedrivePolicy).toEqual({
      deadLetterTargetArn: { 'Fn::GetAtt': [logicalId(pipeline.deadLetterQueue), 'Arn'] },
      maxReceiveCount: MAX_RETRIES + 1,
    });
    expect(queueProps().RedrivePolicy).toMatchObject({ maxReceiveCount: 7 });
  });

  it('hides a message in flight for at least six dispatcher timeouts; the timeout covers the request deadline and body read', () => {
    const timeout = functionProps(pipeline.dispatcher).Timeout as number;
    expect(timeout * 1000).toBeGreaterThanOrEqual(2 * (SEND_LIMITS.deadlineMs + SEND_LIMITS.bodyReadMs));
    expect(queueProps().VisibilityTimeout as number).toBeGreaterThanOrEqual(6 * timeout);
    // The longest backoff (ChangeMessageVisibility) is within SQS's 12-hour limit and the queue keeps messages far longer than all retries take.
    expect(queueProps().MessageRetentionPeriod as number).toBeGreaterThan(7 * 180);
  });

  it('keeps dead letters 14 days, longer than the delivery queue keeps messages (a moved message keeps its age)', () => {
    expect(dlqProps().MessageRetentionPeriod).toBe(14 * 24 * 3600);
    expect(dlqProps().MessageRetentionPeriod as number).toBeGreaterThan(queueProps().MessageRetentionPeriod as number);
    expect(dlqProps().RedrivePolicy).toBeUndefined();
  });

  it('feeds the dead-letter consumer from the dead-letter queue: batches of 10, at most 2 at once (reserving nothing), partial batch failures', () => {
    const consumer = pipeline.deadLetterConsumer;
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [logicalId(pipeline.deadLetterQueue), 'Arn'] },
      FunctionName: { Ref: logicalId(consumer.function) },
      BatchSize: 10,
      ScalingConfig: { MaximumConcurrency: DEAD_LETTER_CONSUMER.maxConcurrency },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    expect(DEAD_LETTER_CONSUMER.maxConcurrency).toBe(2);
    expect(functionProps(consumer).ReservedConcurrentExecutions).toBeUndefined();
    template.resourceCountIs('AWS::Lambda::EventSourceMapping', 3);
    expect(dlqProps().VisibilityTimeout as number).toBeGreaterThanOrEqual(6 * (functionProps(consumer).Timeout as number));
  });

  it('caps the publisher (invoked asynchronously, so no event source can) with a reserved concurrency of 50', () => {
    expect(DEFAULT_PUBLISHER_RESERVED_CONCURRENCY).toBe(50);
    expect(functionProps(pipeline.publisher).ReservedConcurrentExecutions).toBe(DEFAULT_PUBLISHER_RESERVED_CONCURRENCY);
  });

  it("takes the stage's caps: the dead-letter consumer's concurrency, the publisher's reservation or none", () => {
    const other = buildTestStack();
    try {
      const otherTable = new ServiceTable(other.stack, 'Data');
      const capped = new DeliveryPipeline(other.stack, 'Capped', {
        table: otherTable,
        deadLetterMaxConcurrency: 6,
        publisherReservedConcurrency: 5,
      });
      const unreserved = new DeliveryPipeline(other.stack, 'Unreserved', { table: otherTable, publisherReservedConcurrency: null });
      const t = Template.fromStack(other.stack);
      const r = resourcesOf(t);
      expect(r[logicalId(capped.publisher.function)]!.Properties.ReservedConcurrentExecutions).toBe(5);
      expect(r[logicalId(unreserved.publisher.function)]!.Properties.ReservedConcurrentExecutions).toBeUndefined();
      t.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        FunctionName: { Ref: logicalId(capped.deadLetterConsumer.function) },
        ScalingConfig: { MaximumConcurrency: 6 },
      });
    } finally {
      removeTestOutput(other.app);
    }
  });

  it('encrypts every queue and refuses non-TLS access to it', () => {
    const queues = ofType(template, 'AWS::SQS::Queue');
    expect(queues).toHaveLength(4);
    for (const [id, queue] of queues) {
      expect(queue.Properties.SqsManagedSseEnabled, id).toBe(true);
      template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: id }],
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Effect: 'Deny',
              Action: 'sqs:*',
              Principal: { AWS: '*' },
              Condition: { Bool: { 'aws:SecureTransport': 'false' } },
            }),
          ]),
        },
      });
    }
  });

  it("hands every event of the bus, the service's own included, to the publisher, with retries and a dead-letter queue", () => {
    template.resourceCountIs('AWS::Events::EventBus', 1);
    template.hasResourceProperties('AWS::Events::EventBus', { Name: 'webhooks-dev' });
    const rules = template.findResources('AWS::Events::Rule', { Properties: { EventBusName: { Ref: logicalId(pipeline.eventBus) } } });
    expect(Object.values(rules)).toHaveLength(1);
    const rule = Object.values(rules)[0]!.Properties as { EventPattern: Record<string, unknown>; Targets: Record<string, unknown>[] };
    // Only the account is matched (EventBridge needs one field): no source filter, so events with source
    // EVENT_SOURCE (webhook.disabled, webhook.created, ...) reach subscribers like any other.
    expect(rule.EventPattern).toEqual({ account: [{ Ref: 'AWS::AccountId' }] });
    expect(JSON.stringify(rule.EventPattern)).not.toContain(EVENT_SOURCE);
    expect(rule.Targets).toEqual([
      {
        Id: 'Target0',
        Arn: { 'Fn::GetAtt': [logicalId(pipeline.publisher.function), 'Arn'] },
        DeadLetterConfig: { Arn: { 'Fn::GetAtt': [logicalId(pipeline.publishFailures), 'Arn'] } },
        RetryPolicy: { MaximumRetryAttempts: 10, MaximumEventAgeInSeconds: 7200 },
      },
    ]);
    // The publisher's own failures (after Lambda's asynchronous retries) land in the same queue.
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: logicalId(pipeline.publisher.function) },
      MaximumRetryAttempts: 2,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [logicalId(pipeline.publishFailures), 'Arn'] } } },
    });
    template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      Queues: [{ Ref: logicalId(pipeline.publishFailures) }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Allow',
            Action: 'sqs:SendMessage',
            Principal: { Service: 'events.amazonaws.com' },
            Condition: { ArnEquals: { 'aws:SourceArn': { 'Fn::GetAtt': [Object.keys(rules)[0]!, 'Arn'] } } },
          }),
        ]),
      },
    });
  });

  it('gives the pipeline functions their table, queue and bus by name', () => {
    const tableRef = { Ref: logicalId(table.table) };
    const queueUrl = { Ref: logicalId(pipeline.queue) };
    const variables = (fn: ServiceFunction) => (functionProps(fn).Environment as { Variables: Record<string, unknown> }).Variables;
    const slowUrl = { Ref: logicalId(pipeline.slowQueue) };
    const dlqUrl = { Ref: logicalId(pipeline.deadLetterQueue) };
    expect(variables(pipeline.dispatcher)).toMatchObject({
      TABLE_NAME: tableRef,
      DELIVERY_QUEUE_URL: queueUrl,
      SLOW_DELIVERY_QUEUE_URL: slowUrl,
      DEAD_LETTER_QUEUE_URL: dlqUrl,
    });
    expect(variables(pipeline.slowDispatcher)).toMatchObject({
      TABLE_NAME: tableRef,
      SLOW_DELIVERY_QUEUE_URL: slowUrl,
      DEAD_LETTER_QUEUE_URL: dlqUrl,
    });
    // The slow dispatcher never touches the delivery queue.
    expect(variables(pipeline.slowDispatcher).DELIVERY_QUEUE_URL).toBeUndefined();
    // The publisher queues every new delivery in the fast lane: only the dispatchers move one.
    expect(variables(pipeline.publisher)).toMatchObject({ TABLE_NAME: tableRef, DELIVERY_QUEUE_URL: queueUrl });
    expect(variables(pipeline.publisher).SLOW_DELIVERY_QUEUE_URL).toBeUndefined();
    // The dead-letter consumer sends back to the delivery queue what still has retries.
    expect(variables(pipeline.deadLetterConsumer)).toMatchObject({ TABLE_NAME: tableRef, DELIVERY_QUEUE_URL: queueUrl });
    // None puts on the bus: a dispatcher's `webhook.disabled` goes to the outbox with the change (docs/architecture.md#outbox).
    for (const fn of [pipeline.dispatcher, pipeline.slowDispatcher, pipeline.publisher, pipeline.deadLetterConsumer])
      expect(variables(fn).EVENT_BUS_NAME).toBeUndefined();
  });

  it('lets each dispatcher consume its lane (incl. ChangeMessageVisibility for the backoff) and send to its own lane, the slow lane and the dead-letter queue, and the dead-letter consumer consume its queue and send to the delivery queue', () => {
    // What the event source mapping needs, and no GetQueueUrl: the functions have the URLs in their environment.
    const poll = ['sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:ReceiveMessage'];
    const consume = ['sqs:ChangeMessageVisibility', ...poll];
    const sqsOf = (fn: ServiceFunction) => statementsOf(template, fn).filter((s) => actionsOf(s).some((a) => a.startsWith('sqs:')));
    const arn = (queue: typeof pipeline.queue) => ({ 'Fn::GetAtt': [logicalId(queue), 'Arn'] });
    const send = { Effect: 'Allow', Action: 'sqs:SendMessage', Resource: [arn(pipeline.deadLetterQueue), arn(pipeline.slowQueue)] };
    // A retry due past the last receive is re-sent to the dispatcher's own lane.
    expect(sqsOf(pipeline.dispatcher)).toEqual([
      { ...send, Resource: [arn(pipeline.deadLetterQueue), arn(pipeline.queue), arn(pipeline.slowQueue)] },
      { Effect: 'Allow', Action: consume, Resource: arn(pipeline.queue) },
    ]);
    expect(sqsOf(pipeline.slowDispatcher)).toEqual([send, { Effect: 'Allow', Action: consume, Resource: arn(pipeline.slowQueue) }]);
    expect(sqsOf(pipeline.deadLetterConsumer)).toEqual([
      { Effect: 'Allow', Action: 'sqs:SendMessage', Resource: arn(pipeline.queue) },
      { Effect: 'Allow', Action: poll, Resource: { 'Fn::GetAtt': [logicalId(pipeline.deadLetterQueue), 'Arn'] } },
    ]);
  });

  it('lets each pipeline function do to the table exactly what its code does', () => {
    // Attempts, summaries, counters, notifications; disabling an endpoint deletes its subscriptions on a condition.
    for (const fn of [pipeline.dispatcher, pipeline.slowDispatcher])
      expect(tableGrantOf(template, fn), fn.node.path).toEqual({
        items: ['dynamodb:ConditionCheckItem', 'dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
        queries: ['table'],
        leadingKeys: [],
      });
    expect(tableGrantOf(template, pipeline.deadLetterConsumer)).toEqual({
      items: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
      queries: ['table'],
      leadingKeys: [],
    });
    // The publisher only adds: no update, no delete.
    expect(tableGrantOf(template, pipeline.publisher)).toEqual({
      items: ['dynamodb:GetItem', 'dynamodb:PutItem'],
      queries: ['table'],
      leadingKeys: [],
    });
  });
});
