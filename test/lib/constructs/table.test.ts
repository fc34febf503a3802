/**
 * The service table (lib/constructs/table.ts) on a bare stack: its template
 * properties. The grants it hands out are checked across every role of the
 * service in ../webhooks-stack.test.ts ('least privilege').
 */
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INDEXES, TABLE } from '../../../lambdas/store/table-schema';
import { ServiceTable } from '../../../lib/constructs/table';
import { buildTestStack, removeTestOutput, type TestStack } from '../synth';

let built: TestStack;
let template: Template;

beforeAll(() => {
  built = buildTestStack();
  new ServiceTable(built.stack, 'Data');
  template = Template.fromStack(built.stack);
});

afterAll(() => removeTestOutput(built?.app));

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
