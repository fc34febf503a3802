/**
 * The secrets key (lib/constructs/secrets-key.ts) on a bare stack with the delivery pipeline and
 * a minting function's role: yearly rotation, the table's removal policy, and the split grants
 * (docs/architecture.md#secrets): the dispatcher may only open (kms:Decrypt), a minting operation
 * may only seal (kms:GenerateDataKey), both bound to the sealer's encryption context; no other
 * role may use the key.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { Template as TemplateType } from 'aws-cdk-lib/assertions';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENV, KMS_ENCRYPTION_CONTEXT } from '../../../lambdas/contract/deployment';
import { DeliveryPipeline } from '../../../lib/constructs/delivery-pipeline';
import { SecretsKey } from '../../../lib/constructs/secrets-key';
import { ServiceTable } from '../../../lib/constructs/table';
import { buildTestStack, removeTestOutput, type TestStack } from '../synth';
import { actionsOf, logicalId, ofType, resourcesOf, statementsOf, statementsOfRole, variablesOf } from '../template';

let built: TestStack;
let key: SecretsKey;
let pipeline: DeliveryPipeline;
let minting: Role;
let template: TemplateType;

beforeAll(() => {
  built = buildTestStack();
  const table = new ServiceTable(built.stack, 'Data');
  key = new SecretsKey(built.stack, 'Secrets', { removalPolicy: RemovalPolicy.DESTROY });
  pipeline = new DeliveryPipeline(built.stack, 'Delivery', { table, eventBusName: 'webhooks-dev', secretsKey: key });
  minting = new Role(built.stack, 'Minting', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
  key.grantSeal(minting);
  template = Template.fromStack(built.stack);
}, 120_000);

afterAll(() => removeTestOutput(built?.app));

const kmsStatements = (statements: ReturnType<typeof statementsOfRole>) =>
  statements.filter((s) => actionsOf(s).some((a) => a.startsWith('kms:')));
const context = { StringEquals: { 'kms:EncryptionContext:purpose': KMS_ENCRYPTION_CONTEXT.purpose } };

describe('the secrets key', () => {
  it('is a customer-managed key with yearly rotation, removed as configured', () => {
    const keys = ofType(template, 'AWS::KMS::Key');
    expect(keys).toHaveLength(1);
    expect(keys[0]![1].Properties).toMatchObject({ EnableKeyRotation: true });
    expect(keys[0]![1].DeletionPolicy).toBe('Delete');
  });

  it('lets the dispatcher open, and only open, under the sealer context', () => {
    const statements = kmsStatements(statementsOf(template, pipeline.dispatcher));
    expect(statements).toHaveLength(1);
    expect(actionsOf(statements[0]!)).toEqual(['kms:Decrypt']);
    expect(statements[0]!.Condition).toEqual(context);
    expect(variablesOf(template, pipeline.dispatcher)[ENV.SECRETS_KEY_ID]).toEqual({ 'Fn::GetAtt': [logicalId(key.key), 'Arn'] });
  });

  it('lets a minting function seal, and only seal', () => {
    const statements = kmsStatements(statementsOfRole(template, logicalId(minting)));
    expect(statements).toHaveLength(1);
    expect(actionsOf(statements[0]!)).toEqual(['kms:GenerateDataKey']);
    expect(statements[0]!.Condition).toEqual(context);
  });

  it('gives no other role of the pipeline any use of the key', () => {
    // Both lanes' dispatchers sign deliveries, so both open secrets.
    const granted = new Set([logicalId(pipeline.dispatcher.role), logicalId(pipeline.slowDispatcher.role), logicalId(minting)]);
    for (const [, policy] of ofType(template, 'AWS::IAM::Policy')) {
      const roles = (policy.Properties.Roles as { Ref: string }[]).map((r) => r.Ref);
      if (roles.some((r) => granted.has(r))) continue;
      expect(JSON.stringify(policy.Properties.PolicyDocument)).not.toMatch(/kms:(Decrypt|GenerateDataKey|Encrypt|ReEncrypt)/);
    }
    expect(Object.keys(resourcesOf(template)).length).toBeGreaterThan(0);
  });
});
