/**
 * A non-default stage, configured the way `cdk synth -c key=value` passes
 * values (strings): the configuration reaches the template.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Stack, Validations, type CfnElement } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_QUOTAS } from '../../lambdas/contract/rate-limits';
import { DEFAULT_WORKSPACE_LIMITS } from '../../lambdas/contract/limits';
import type { WebhooksApp } from '../../lib/app';
import { buildTestApp } from './synth';

let built: WebhooksApp;
let template: Template;

beforeAll(() => {
  built = buildTestApp({
    context: {
      stage: 'sandbox',
      removalPolicy: 'destroy',
      logRetentionDays: '7',
      authorizerCacheTtlSeconds: '0',
      throttlingRateLimit: '5',
      throttlingBurstLimit: '10',
      rateLimits: '{"rest_write":{"limit":10}}',
      alarmEmail: 'ops@example.com',
      mcpAllowedOrigins: 'https://app.example.com,http://localhost:6274',
      mcpReservedConcurrency: '25',
      publisherReservedConcurrency: '30',
      deadLetterMaxConcurrency: '3',
      apiGatewayAccountRole: 'true',
      recoveryRatePerSecond: '50',
      workspaceLimits: '{"endpoints":200,"replaysPerMinute":30}',
      dispatcherBatchSize: '10',
      dispatcherMaxConcurrency: '8',
      tableBillingMode: 'provisioned',
      tableCapacity: '{"writeMax":4000}',
      deliverySuccessRateAlarmPercent: '95',
    },
  });
  template = Template.fromStack(built.stack);
}, 120_000);

afterAll(() => {
  if (built) rmSync(built.app.outdir, { recursive: true, force: true });
});

describe('a configured stage', () => {
  it('names the stack and the API stage after the stage', () => {
    expect(built.stack.stackName).toBe('Webhooks-sandbox');
    template.hasResourceProperties('AWS::ApiGateway::Stage', { StageName: 'sandbox' });
    template.hasResourceProperties('AWS::ApiGateway::RestApi', { Name: 'webhooks-sandbox' });
  });

  it('deletes the table and the logs with the stack when removalPolicy is destroy', () => {
    template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Delete',
      Properties: Match.objectLike({ DeletionProtectionEnabled: false }),
    });
    const logGroups = Object.values(template.findResources('AWS::Logs::LogGroup'));
    expect(logGroups.length).toBeGreaterThan(1);
    for (const group of logGroups) expect(group).toMatchObject({ DeletionPolicy: 'Delete', Properties: { RetentionInDays: 7 } });
  });

  it('uses the authorizer cache TTL and the stage throttling', () => {
    template.hasResourceProperties('AWS::ApiGateway::Authorizer', { AuthorizerResultTtlInSeconds: 0 });
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      MethodSettings: Match.arrayWith([Match.objectLike({ ThrottlingRateLimit: 5, ThrottlingBurstLimit: 10 })]),
    });
  });

  it('hands the merged quotas to the REST functions and the MCP function', () => {
    const quotas = JSON.stringify({ ...DEFAULT_QUOTAS, rest_write: { limit: 10, windowSeconds: 60 } });
    const functions = template.findResources('AWS::Lambda::Function', {
      Properties: { Environment: { Variables: { RATE_LIMITS: quotas } } },
    });
    expect(Object.keys(functions)).toHaveLength(built.stack.api.operationFunctions.size + 1);
    expect(Object.keys(functions)).toContain(
      Stack.of(built.stack).getLogicalId(built.stack.mcp.handler.function.node.defaultChild as CfnElement),
    );
  });

  it('hands the merged workspace limits to the REST functions and the MCP function', () => {
    const limits = JSON.stringify({ ...DEFAULT_WORKSPACE_LIMITS, endpoints: 200, replaysPerMinute: 30 });
    const functions = template.findResources('AWS::Lambda::Function', {
      Properties: { Environment: { Variables: { WORKSPACE_LIMITS: limits } } },
    });
    expect(Object.keys(functions)).toHaveLength(built.stack.api.operationFunctions.size + 1);
    expect(Object.keys(functions)).toContain(
      Stack.of(built.stack).getLogicalId(built.stack.mcp.handler.function.node.defaultChild as CfnElement),
    );
  });

  it('hands recoveryRatePerSecond to the recovery job worker', () => {
    const worker = Stack.of(built.stack).getLogicalId(built.stack.recovery.worker.function.node.defaultChild as CfnElement);
    expect(template.toJSON().Resources[worker].Properties.Environment.Variables.RECOVERY_RATE_PER_SECOND).toBe('50');
  });

  it('lets browsers call the MCP URL only from mcpAllowedOrigins', () => {
    template.hasResourceProperties('AWS::Lambda::Url', {
      AuthType: 'NONE',
      Cors: Match.objectLike({ AllowOrigins: ['https://app.example.com', 'http://localhost:6274'], AllowMethods: ['POST'] }),
    });
  });

  it('reserves mcpReservedConcurrency for the MCP function', () => {
    const mcp = Stack.of(built.stack).getLogicalId(built.stack.mcp.handler.function.node.defaultChild as CfnElement);
    expect(template.toJSON().Resources[mcp].Properties.ReservedConcurrentExecutions).toBe(25);
  });

  it('reserves publisherReservedConcurrency for the publisher and caps the dead-letter consumer at deadLetterMaxConcurrency', () => {
    const id = (c: { node: { defaultChild?: unknown } }) => Stack.of(built.stack).getLogicalId(c.node.defaultChild as CfnElement);
    expect(template.toJSON().Resources[id(built.stack.pipeline.publisher.function)].Properties.ReservedConcurrentExecutions).toBe(30);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: id(built.stack.pipeline.deadLetterConsumer.function) },
      ScalingConfig: { MaximumConcurrency: 3 },
    });
  });

  it("owns the account's API Gateway CloudWatch role with apiGatewayAccountRole, retained, and still passes cdk-nag", () => {
    const accounts = Object.values(template.findResources('AWS::ApiGateway::Account'));
    expect(accounts).toHaveLength(1);
    expect(accounts[0]).toMatchObject({ DeletionPolicy: 'Retain' });
    const report = JSON.parse(readFileSync(join(built.app.outdir, 'validation-report.json'), 'utf8')) as {
      pluginReports: { violations?: unknown[] }[];
    };
    expect(report.pluginReports.flatMap((r) => r.violations ?? [])).toEqual([]);
  });

  it('names the domain-events bus after the stage', () => {
    template.hasResourceProperties('AWS::Events::EventBus', { Name: 'webhooks-sandbox' });
  });

  it('notifies alarmEmail of every alarm state change through a TLS-only topic', () => {
    const topic = built.stack.monitoring.topic;
    expect(topic).toBeDefined();
    const topicRef = { Ref: Stack.of(topic).getLogicalId(topic.node.defaultChild as CfnElement) };
    template.resourceCountIs('AWS::SNS::Topic', 1);
    template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com', TopicArn: topicRef });
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
      },
    });
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm'));
    // The monitoring's alarms and the outbox relay's (lib/constructs/outbox.ts), every one on the topic.
    expect(alarms).toHaveLength(built.stack.monitoring.alarms.length + 1);
    for (const alarm of alarms) expect(alarm.Properties).toMatchObject({ AlarmActions: [topicRef], OKActions: [topicRef] });
  });

  it("passes cdk-nag with the alarm topic too, with no acknowledgement beyond the default stage's", () => {
    const report = JSON.parse(readFileSync(join(built.app.outdir, 'validation-report.json'), 'utf8')) as {
      pluginReports: { violations?: unknown[] }[];
    };
    expect(report.pluginReports.flatMap((r) => r.violations ?? [])).toEqual([]);
    const onTopic = built.stack.monitoring.topic.node
      .findAll()
      .flatMap((c) => c.node.metadata.filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY));
    expect(onTopic).toEqual([]);
  });
});

describe('deliverySuccessRateAlarmPercent', () => {
  it('is the threshold of the delivery success-rate alarm, and its description says so', () => {
    const alarmId = Stack.of(built.stack).getLogicalId(built.stack.monitoring.deliverySuccessRateAlarm.node.defaultChild as CfnElement);
    const alarm = template.toJSON().Resources[alarmId];
    expect(alarm.Properties).toMatchObject({
      AlarmName: 'webhooks-sandbox-delivery-success-rate',
      Threshold: 95,
      ComparisonOperator: 'LessThanThreshold',
    });
    expect(alarm.Properties.AlarmDescription).toMatch(/^Under 95 % of delivery attempts/);
  });
});

describe('dispatcherBatchSize and dispatcherMaxConcurrency', () => {
  it("reach the delivery queue's event source; a batch of 10 gets no batching window (Lambda requires one only above 10)", () => {
    const { pipeline } = built.stack;
    const fnId = Stack.of(pipeline).getLogicalId(pipeline.dispatcher.function.node.defaultChild as CfnElement);
    const mappings = Object.values(
      template.findResources('AWS::Lambda::EventSourceMapping', { Properties: { FunctionName: { Ref: fnId } } }),
    );
    expect(mappings).toHaveLength(1);
    expect(mappings[0]!.Properties).toMatchObject({ BatchSize: 10, ScalingConfig: { MaximumConcurrency: 8 } });
    expect(mappings[0]!.Properties.MaximumBatchingWindowInSeconds).toBeUndefined();
  });
});

describe('tableBillingMode provisioned', () => {
  it('provisions the table and auto scales it and every index, within the tableCapacity bounds merged over the defaults', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      BillingMode: Match.absent(),
      ProvisionedThroughput: { ReadCapacityUnits: 5, WriteCapacityUnits: 5 },
    });
    const targets = Object.values(template.findResources('AWS::ApplicationAutoScaling::ScalableTarget')).map(
      (t) => t.Properties as { ScalableDimension: string; MinCapacity: number; MaxCapacity: number },
    );
    expect(targets.length).toBeGreaterThanOrEqual(2 * 2);
    for (const t of targets)
      expect([t.MinCapacity, t.MaxCapacity], t.ScalableDimension).toEqual(
        t.ScalableDimension.endsWith('WriteCapacityUnits') ? [5, 4000] : [5, 2000],
      );
  });
});
