/**
 * The one function construct (lib/constructs/service-function.ts) on a bare
 * stack: the defaults every function of the service gets, whatever props it is
 * given. Every Lambda function of the service's stack is a ServiceFunction
 * (../webhooks-stack.test.ts counts them), so these hold for each of them.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPLOYED_NODE_OPTIONS, serviceFunctionBuildOptions } from '../../../bench/lambdas';
import { functionEntry, PROJECT_ROOT, ServiceFunction } from '../../../lib/constructs/service-function';
import { buildTestStack, removeTestOutput, type TestStack } from '../synth';
import { actionsOf, logicalId, ofType, resourcesOf, statementsOf, type Resource } from '../template';

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
      expect(resources[logGroupId], id).toMatchObject({
        Type: 'AWS::Logs::LogGroup',
        Properties: { RetentionInDays: 30 },
        DeletionPolicy: 'Retain',
      });
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

  it('deploy the bundle, and run with the NODE_OPTIONS, that the bundle budgets and `npm run bench` measure', async () => {
    // bench/lambdas.ts (and test/contract/lambda-bundles.test.ts through it) spell NodejsFunction's
    // esbuild options out again: a change here (an external, a flag) must reach them, or the
    // cold-init figures and the budgets would be of a bundle that never deploys.
    const bundled = buildTestStack({ bundle: true });
    const outDir = mkdtempSync(join(tmpdir(), 'bench-bundle-'));
    try {
      new ServiceFunction(bundled.stack, 'Bundled', { entry: functionEntry('authorizer') });
      const [fn] = ofType(Template.fromStack(bundled.stack), 'AWS::Lambda::Function').map(([, f]) => f);
      const hash = (fn!.Properties.Code as { S3Key: string }).S3Key.replace(/\.zip$/, '');
      const outfile = join(outDir, 'index.js');
      await build(serviceFunctionBuildOptions(functionEntry('authorizer'), outfile, PROJECT_ROOT));
      expect(readFileSync(join(bundled.app.outdir, `asset.${hash}`, 'index.js'), 'utf8')).toBe(readFileSync(outfile, 'utf8'));
      expect((fn!.Properties.Environment as { Variables: Record<string, string> }).Variables.NODE_OPTIONS).toBe(DEPLOYED_NODE_OPTIONS);
    } finally {
      rmSync(outDir, { recursive: true, force: true });
      removeTestOutput(bundled.app);
    }
  }, 60_000);

  it('refuses to create a function that sets ALLOW_LOOPBACK_TARGETS', () => {
    const stack = new Stack();
    expect(
      () => new ServiceFunction(stack, 'Bad', { entry: functionEntry('authorizer'), environment: { ALLOW_LOOPBACK_TARGETS: 'true' } }),
    ).toThrow(/ALLOW_LOOPBACK_TARGETS .* must never be set/);
  });
});

describe('service functions given a shared log group', () => {
  let shared: TestStack;
  let sharedTemplate: Template;
  let group: LogGroup;
  let first: ServiceFunction;
  let second: ServiceFunction;

  beforeAll(() => {
    shared = buildTestStack();
    group = new LogGroup(shared.stack, 'Shared', { retention: RetentionDays.ONE_WEEK, removalPolicy: RemovalPolicy.DESTROY });
    first = new ServiceFunction(shared.stack, 'First', { entry: functionEntry('authorizer'), logGroup: group });
    second = new ServiceFunction(shared.stack, 'Second', { entry: functionEntry('serve-docs'), logGroup: group });
    sharedTemplate = Template.fromStack(shared.stack);
  });

  afterAll(() => removeTestOutput(shared?.app));

  it('log to that group and create none of their own, so the stack holds one log group for both', () => {
    expect(ofType(sharedTemplate, 'AWS::Logs::LogGroup').map(([id]) => id)).toEqual([logicalId(group)]);
    for (const fn of [first, second]) {
      expect(fn.logGroup, fn.node.path).toBe(group);
      expect(resourcesOf(sharedTemplate)[logicalId(fn.function)]!.Properties.LoggingConfig, fn.node.path).toEqual({
        LogGroup: { Ref: logicalId(group) },
      });
    }
    // The group keeps the retention and removal policy it was made with.
    expect(resourcesOf(sharedTemplate)[logicalId(group)]).toMatchObject({ Properties: { RetentionInDays: 7 }, DeletionPolicy: 'Delete' });
  });

  it('may each write their log streams in that group, and no other log group', () => {
    for (const fn of [first, second]) {
      const logs = statementsOf(sharedTemplate, fn).filter((s) => actionsOf(s).some((a) => a.startsWith('logs:')));
      expect(logs, fn.node.path).toEqual([
        { Effect: 'Allow', Action: ['logs:CreateLogStream', 'logs:PutLogEvents'], Resource: { 'Fn::GetAtt': [logicalId(group), 'Arn'] } },
      ]);
    }
  });

  it('refuse a retention or removal policy of their own, which the shared group would silently ignore', () => {
    const stack = new Stack();
    const logGroup = new LogGroup(stack, 'Shared');
    expect(
      () =>
        new ServiceFunction(stack, 'WithRetention', { entry: functionEntry('authorizer'), logGroup, logRetention: RetentionDays.ONE_DAY }),
    ).toThrow(/logRetention and logRemovalPolicy belong to the shared log group/);
    expect(
      () =>
        new ServiceFunction(stack, 'WithRemoval', {
          entry: functionEntry('authorizer'),
          logGroup,
          logRemovalPolicy: RemovalPolicy.DESTROY,
        }),
    ).toThrow(/logRetention and logRemovalPolicy belong to the shared log group/);
  });
});
