/**
 * Recovery jobs deployed (lib/constructs/recovery-jobs.ts) on a bare stack
 * with the table and a delivery queue: the jobs queue and its dead-letter
 * queue, the worker's event source, its settings and exactly its grants.
 * Who else may send to the jobs queue is checked across every role in
 * ../webhooks-stack.test.ts ('grants beyond the table').
 */
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_RECOVERY_RATE_PER_SECOND, JOB_WORKER_CONSUMER } from '../../../lambdas/contract/deployment';
import { JOB_MESSAGE_RETENTION, RecoveryJobs } from '../../../lib/constructs/recovery-jobs';
import { ServiceTable } from '../../../lib/constructs/table';
import { tableGrantOf } from './table-grant';
import { buildTestStack, removeTestOutput, type TestStack } from '../synth';
import { actionsOf, logicalId, ofType, resourcesOf, statementsOf, type Resource } from '../template';

let built: TestStack;
let table: ServiceTable;
let deliveryQueue: Queue;
let recovery: RecoveryJobs;
let template: Template;
let resources: Record<string, Resource>;

beforeAll(() => {
  built = buildTestStack();
  table = new ServiceTable(built.stack, 'Data');
  deliveryQueue = new Queue(built.stack, 'DeliveryQueue');
  recovery = new RecoveryJobs(built.stack, 'Recovery', { table, deliveryQueue });
  template = Template.fromStack(built.stack);
  resources = resourcesOf(template);
}, 120_000);

afterAll(() => removeTestOutput(built?.app));

describe('recovery jobs', () => {
  const workerProps = () => resources[logicalId(recovery.worker.function)]!.Properties;
  const queueProps = () => resources[logicalId(recovery.queue)]!.Properties;

  it('feeds the worker one job message at a time, at most two at once, with partial batch failures', () => {
    const mappings = template.findResources('AWS::Lambda::EventSourceMapping', {
      Properties: { FunctionName: { Ref: logicalId(recovery.worker.function) } },
    });
    expect(Object.values(mappings).map((m) => m.Properties)).toEqual([
      {
        EventSourceArn: { 'Fn::GetAtt': [logicalId(recovery.queue), 'Arn'] },
        FunctionName: { Ref: logicalId(recovery.worker.function) },
        BatchSize: 1,
        ScalingConfig: { MaximumConcurrency: JOB_WORKER_CONSUMER.maxConcurrency },
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      },
    ]);
  });

  it("hides a message in flight for six worker timeouts and dead-letters it after the worker's last receive", () => {
    expect(workerProps().Timeout).toBe(JOB_WORKER_CONSUMER.timeoutSeconds);
    expect(queueProps().VisibilityTimeout).toBe(6 * JOB_WORKER_CONSUMER.timeoutSeconds);
    expect(queueProps().RedrivePolicy).toEqual({
      deadLetterTargetArn: { 'Fn::GetAtt': [logicalId(recovery.deadLetterQueue), 'Arn'] },
      maxReceiveCount: JOB_WORKER_CONSUMER.maxReceives,
    });
    expect(resources[logicalId(recovery.deadLetterQueue)]!.Properties.MessageRetentionPeriod).toBe(14 * 24 * 3600);
  });

  it("keeps a job message 14 days (SQS's longest, not its 4-day default): an expired one would leave its job running, holding its endpoint", () => {
    expect(queueProps().MessageRetentionPeriod).toBe(14 * 24 * 3600);
    expect(JOB_MESSAGE_RETENTION.toDays()).toBe(14);
  });

  it('encrypts both queues and refuses non-TLS access to them', () => {
    for (const queue of [recovery.queue, recovery.deadLetterQueue]) {
      const id = logicalId(queue);
      expect(resources[id]!.Properties.SqsManagedSseEnabled, id).toBe(true);
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

  it('gives the worker the table, both queue URLs and the rate (default 20 per second)', () => {
    expect(DEFAULT_RECOVERY_RATE_PER_SECOND).toBe(20);
    expect((workerProps().Environment as { Variables: Record<string, unknown> }).Variables).toEqual({
      TABLE_NAME: { Ref: logicalId(table.table) },
      DELIVERY_QUEUE_URL: { Ref: logicalId(deliveryQueue) },
      JOB_QUEUE_URL: { Ref: logicalId(recovery.queue) },
      RECOVERY_RATE_PER_SECOND: '20',
      ...Object.fromEntries(
        Object.entries((workerProps().Environment as { Variables: Record<string, unknown> }).Variables).filter(
          ([k]) => k.startsWith('POWERTOOLS_') || k.startsWith('NODE_'),
        ),
      ),
    });
  });

  it('lets the worker do exactly its work: table items, send to both queues, consume the jobs queue', () => {
    // Replays on the condition their endpoint is unchanged; the window's failed deliveries by their endpoint's shards;
    // a purge slice finds a deleted endpoint's deliveries by both its indexes and removes their partitions in batches;
    // an erasure slice also finds a workspace's deliveries by its delivery log.
    expect(tableGrantOf(template, recovery.worker)).toEqual({
      items: [
        'dynamodb:BatchGetItem',
        'dynamodb:BatchWriteItem',
        'dynamodb:ConditionCheckItem',
        'dynamodb:DeleteItem',
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
      ],
      queries: ['index/deliveryLog', 'index/gsi1', 'index/gsi2', 'table'],
      leadingKeys: [],
    });
    const queueStatements = statementsOf(template, recovery.worker).filter((s) => actionsOf(s).some((a) => a.startsWith('sqs:')));
    const byQueue = (queue: Queue) =>
      [...new Set(queueStatements.filter((s) => JSON.stringify(s.Resource).includes(`"${logicalId(queue)}"`)).flatMap(actionsOf))].sort();
    expect(byQueue(deliveryQueue)).toEqual(['sqs:SendMessage']);
    // The event source mapping's three actions and the next slice's send; its code never changes visibility.
    expect(byQueue(recovery.queue)).toEqual(['sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:ReceiveMessage', 'sqs:SendMessage']);
    expect(byQueue(recovery.deadLetterQueue)).toEqual([]);
    expect(
      statementsOf(template, recovery.worker)
        .flatMap(actionsOf)
        .filter((a) => a.startsWith('events:')),
    ).toEqual([]);
    expect(ofType(template, 'AWS::Lambda::Function')).toHaveLength(1);
  });
});
