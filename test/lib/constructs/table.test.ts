/**
 * The service table (lib/constructs/table.ts) on a bare stack: its template
 * properties. The grants it hands out are checked across every role of the
 * service in ../webhooks-stack.test.ts ('least privilege').
 */
import { Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INDEXES, TABLE } from '../../../lambdas/store/table-schema';
import { ServiceTable, TABLE_TARGET_UTILIZATION_PERCENT } from '../../../lib/constructs/table';
import { buildTestStack, removeTestOutput, type TestStack } from '../synth';

let built: TestStack;
let builtProvisioned: TestStack;
let template: Template;
/** The same table, provisioned (stage setting `tableBillingMode: provisioned`). */
let provisioned: Template;
let provisionedTable: ServiceTable;
const CAPACITY = { readMin: 3, readMax: 300, writeMin: 7, writeMax: 7000 };

beforeAll(() => {
  built = buildTestStack();
  new ServiceTable(built.stack, 'Data');
  template = Template.fromStack(built.stack);
  builtProvisioned = buildTestStack();
  provisionedTable = new ServiceTable(builtProvisioned.stack, 'Data', { billing: { mode: 'provisioned', ...CAPACITY } });
  provisioned = Template.fromStack(builtProvisioned.stack);
});

afterAll(() => {
  removeTestOutput(built?.app);
  removeTestOutput(builtProvisioned?.app);
});

describe('the table', () => {
  it('is on demand, with point-in-time recovery, TTL and the schema keys', () => {
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      TimeToLiveSpecification: { AttributeName: TABLE.ttlAttribute, Enabled: true },
      KeySchema: [
        { AttributeName: TABLE.partitionKey, KeyType: 'HASH' },
        { AttributeName: TABLE.sortKey, KeyType: 'RANGE' },
      ],
      DeletionProtectionEnabled: true,
    });
  });

  it('has every GSI of the schema, each with the projection the schema gives it', () => {
    expect(INDEXES.length).toBeGreaterThanOrEqual(2);
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      GlobalSecondaryIndexes: INDEXES.map((g) => ({
        IndexName: g.name,
        KeySchema: [
          { AttributeName: g.partitionKey, KeyType: 'HASH' },
          { AttributeName: g.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: g.projection, ...('nonKeyAttributes' in g ? { NonKeyAttributes: [...g.nonKeyAttributes] } : {}) },
      })),
    });
  });

  it('is retained when the stack is deleted or the table replaced', () => {
    template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
  });
});

describe('billing', () => {
  it('on demand (the default) has no provisioned throughput and no auto scaling', () => {
    const [table] = Object.values(template.findResources('AWS::DynamoDB::Table'));
    expect(table!.Properties.ProvisionedThroughput).toBeUndefined();
    for (const gsi of table!.Properties.GlobalSecondaryIndexes as { ProvisionedThroughput?: unknown }[])
      expect(gsi.ProvisionedThroughput).toBeUndefined();
    template.resourceCountIs('AWS::ApplicationAutoScaling::ScalableTarget', 0);
    template.resourceCountIs('AWS::ApplicationAutoScaling::ScalingPolicy', 0);
  });

  it('provisioned starts the table and every index at the minimum', () => {
    const start = { ReadCapacityUnits: CAPACITY.readMin, WriteCapacityUnits: CAPACITY.writeMin };
    provisioned.hasResourceProperties('AWS::DynamoDB::Table', {
      // CDK leaves BillingMode out for provisioned: CloudFormation's default (an update that drops it switches the table).
      BillingMode: Match.absent(),
      ProvisionedThroughput: start,
      GlobalSecondaryIndexes: INDEXES.map((g) => ({ IndexName: g.name, ProvisionedThroughput: start })),
    });
  });

  it('provisioned scales reads and writes of the table and of every index within the bounds, tracking 70 % utilisation', () => {
    expect(TABLE_TARGET_UTILIZATION_PERCENT).toBe(70);
    const tableRef = Stack.of(provisionedTable).resolve(provisionedTable.table.tableName) as unknown;
    const targets = Object.entries(provisioned.findResources('AWS::ApplicationAutoScaling::ScalableTarget'));
    const resourceIds = (['table', ...INDEXES.map((g) => g.name)] as const).flatMap((target) =>
      (['Read', 'Write'] as const).map((kind) => ({
        target,
        kind,
        resource: target === 'table' ? `table/${JSON.stringify(tableRef)}` : `table/${JSON.stringify(tableRef)}/index/${target}`,
      })),
    );
    expect(targets).toHaveLength(resourceIds.length);
    const seen = targets.map(([, t]) => {
      const p = t.Properties as {
        ScalableDimension: string;
        MinCapacity: number;
        MaxCapacity: number;
        ResourceId: unknown;
        ServiceNamespace: string;
      };
      expect(p.ServiceNamespace).toBe('dynamodb');
      const kind = p.ScalableDimension.endsWith('ReadCapacityUnits') ? 'Read' : 'Write';
      expect([p.MinCapacity, p.MaxCapacity]).toEqual(
        kind === 'Read' ? [CAPACITY.readMin, CAPACITY.readMax] : [CAPACITY.writeMin, CAPACITY.writeMax],
      );
      const onIndex = p.ScalableDimension.startsWith('dynamodb:index:');
      const resource = JSON.stringify(p.ResourceId);
      const index = onIndex ? INDEXES.find((g) => resource.includes(`/index/${g.name}"`))?.name : 'table';
      return `${index} ${kind}`;
    });
    expect(seen.sort()).toEqual(resourceIds.map((r) => `${r.target} ${r.kind}`).sort());

    const policies = Object.values(provisioned.findResources('AWS::ApplicationAutoScaling::ScalingPolicy'));
    expect(policies).toHaveLength(resourceIds.length);
    for (const policy of policies) {
      expect(policy.Properties).toMatchObject({
        PolicyType: 'TargetTrackingScaling',
        TargetTrackingScalingPolicyConfiguration: { TargetValue: TABLE_TARGET_UTILIZATION_PERCENT },
      });
    }
  });
});
