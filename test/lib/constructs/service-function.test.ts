/**
 * The one function construct (lib/constructs/service-function.ts) on a bare
 * stack: the defaults every function of the service gets, whatever props it is
 * given. Every Lambda function of the service's stack is a ServiceFunction
 * (../webhooks-stack.test.ts counts them), so these hold for each of them.
 */
import { Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { functionEntry, ServiceFunction } from '../../../lib/constructs/service-function';
import { buildTestStack, removeTestOutput, type TestStack } from '../synth';
import { ofType, resourcesOf, type Resource } from '../template';

let built: TestStack;
let template: Template;
let resources: Record<string, Resource>;

beforeAll(() => {
  built = buildTestStack();
  // One with the defaults, one with the props the service's functions set.
  new ServiceFunction(built.stack, 'Default', { entry: functionEntry('authorizer') });
  new ServiceFunction(built.stack, 'Configured', {
    entry: functionEntry('dispatcher'),
    description: 'configured',
    environment: { TABLE_NAME: 'webhooks-test' },
    memorySize: 512,
    timeout: Duration.seconds(30),
  });
  template = Template.fromStack(built.stack);
  resources = resourcesOf(template);
});

afterAll(() => removeTestOutput(built?.app));

describe('a service function', () => {
  it('all run ARM64 on the newest Node.js runtime with active tracing and their own log group', () => {
    template.resourceCountIs('AWS::Lambda::Function', 2);
    for (const [id, fn] of ofType(template, 'AWS::Lambda::Function')) {
      expect(fn.Properties, id).toMatchObject({
        Architectures: ['arm64'],
        Runtime: 'nodejs24.x',
        TracingConfig: { Mode: 'Active' },
        Handler: 'index.handler',
        LoggingConfig: { LogGroup: { Ref: expect.any(String) as string } },
      });
      const logGroupId = (fn.Properties.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;
      expect(resources[logGroupId], id).toMatchObject({ Type: 'AWS::Logs::LogGroup', Properties: { RetentionInDays: 30 }, DeletionPolicy: 'Retain' });
    }
  });

  it('all carry the Powertools environment', () => {
    for (const [id, fn] of ofType(template, 'AWS::Lambda::Function')) {
      expect((fn.Properties.Environment as { Variables: object }).Variables, id).toMatchObject({
        POWERTOOLS_SERVICE_NAME: 'webhooks',
        POWERTOOLS_METRICS_NAMESPACE: 'WebhookDelivery',
        POWERTOOLS_LOG_LEVEL: 'INFO',
        NODE_OPTIONS: '--enable-source-maps',
      });
    }
  });

  it('refuses to create a function that sets ALLOW_LOOPBACK_TARGETS', () => {
    const stack = new Stack();
    expect(
      () => new ServiceFunction(stack, 'Bad', { entry: functionEntry('authorizer'), environment: { ALLOW_LOOPBACK_TARGETS: 'true' } }),
    ).toThrow(/ALLOW_LOOPBACK_TARGETS .* must never be set/);
  });
});
