/**
 * The scheduled jobs (lib/constructs/schedules.ts) on a bare stack with the
 * table and a delivery queue: one rule and one function per job.
 */
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHEDULED_JOBS } from '../../../lambdas/domain/scheduled-jobs';
import { Schedules } from '../../../lib/constructs/schedules';
import { ServiceTable } from '../../../lib/constructs/table';
import { tableGrantOf } from './table-grant';
import { buildTestStack, removeTestOutput, type TestStack } from '../synth';
import { logicalId, ofType, resourcesOf, type Resource } from '../template';

let built: TestStack;
let table: ServiceTable;
let queue: Queue;
let schedules: Schedules;
let template: Template;
let resources: Record<string, Resource>;

beforeAll(() => {
  built = buildTestStack();
  table = new ServiceTable(built.stack, 'Data');
  queue = new Queue(built.stack, 'DeliveryQueue');
  schedules = new Schedules(built.stack, 'Schedules', { table, deliveryQueue: queue });
  template = Template.fromStack(built.stack);
  resources = resourcesOf(template);
}, 120_000);

afterAll(() => removeTestOutput(built?.app));

describe('the schedules', () => {
  it.each([
    ['Retention', 'retention', 'rate(1 day)'],
    ['SecretExpiry', 'secret-expiry', 'rate(1 hour)'],
    ['PendingRepair', 'pending-repair', 'rate(5 minutes)'],
  ])('%s runs lambdas/functions/%s.ts at %s, without asynchronous retries', (id, entry, expression) => {
    const fn = schedules.functions.get(id)!;
    expect(SCHEDULED_JOBS.find((j) => j.id === id)?.entry).toBe(entry);
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: expression,
      State: 'ENABLED',
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [logicalId(fn.function), 'Arn'] } })],
    });
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: logicalId(fn.function) },
      MaximumRetryAttempts: 0,
    });
  });

  it('give each schedule a timeout well under its rate', () => {
    for (const job of SCHEDULED_JOBS) {
      const timeout = resources[logicalId(schedules.functions.get(job.id)!.function)]!.Properties.Timeout as number;
      expect(timeout, job.id).toBeLessThanOrEqual((job.everyMinutes * 60) / 5);
    }
  });

  it('are the only rules on the default bus', () => {
    const scheduled = ofType(template, 'AWS::Events::Rule').filter(([, r]) => r.Properties.ScheduleExpression !== undefined);
    expect(scheduled).toHaveLength(SCHEDULED_JOBS.length);
    for (const [id, rule] of scheduled) expect(rule.Properties.EventBusName, id).toBeUndefined();
  });

  it('give the stuck-pending repair the delivery queue; the others only the table', () => {
    const queueUrl = { Ref: logicalId(queue) };
    for (const job of SCHEDULED_JOBS) {
      const fn = schedules.functions.get(job.id)!;
      const variables = (resources[logicalId(fn.function)]!.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(variables.TABLE_NAME, job.id).toEqual({ Ref: logicalId(table.table) });
      if (job.entry === 'pending-repair') expect(variables.DELIVERY_QUEUE_URL).toEqual(queueUrl);
      else expect(variables.DELIVERY_QUEUE_URL, job.id).toBeUndefined();
    }
  });

  it('let each scheduled function do to the table exactly what its job does, querying only its index', () => {
    const grantOf = (entry: string) => tableGrantOf(template, schedules.functions.get(SCHEDULED_JOBS.find((j) => j.entry === entry)!.id)!);
    expect(schedules.functions.size).toBe(SCHEDULED_JOBS.length);
    expect(grantOf('retention')).toEqual({
      items: ['dynamodb:BatchWriteItem', 'dynamodb:GetItem', 'dynamodb:PutItem'],
      queries: ['index/deliveryLog', 'index/gsi1', 'table'],
      leadingKeys: [],
    });
    expect(grantOf('secret-expiry')).toEqual({
      items: ['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem'],
      queries: ['index/gsi1'],
      leadingKeys: [],
    });
    // The repair reads and sends again what is stuck; a deleted endpoint's stuck rows it removes (partition by partition, in batches).
    expect(grantOf('pending-repair')).toEqual({
      items: ['dynamodb:BatchGetItem', 'dynamodb:BatchWriteItem'],
      queries: ['index/gsi3', 'table'],
      leadingKeys: [],
    });
  });
});
