/**
 * Each pre-flight check against accounts in each state (aws-sdk-client-mock), on the template a
 * production stage synthesizes: what it finds, and that a failure names the command that fixes it.
 */
import { execFileSync } from 'node:child_process';
import { GetAccountCommand } from '@aws-sdk/client-api-gateway';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkApiGatewayRole } from '../../bin/preflight/api-gateway-role';
import { checkBootstrap } from '../../bin/preflight/bootstrap';
import { fixedString, type CheckResult } from '../../bin/preflight/check';
import { createClients } from '../../bin/preflight/clients';
import { checkConcurrency } from '../../bin/preflight/concurrency';
import { checkNames, fixedNamesOf } from '../../bin/preflight/names';
import { checkServiceQuotas, QUOTAS } from '../../bin/preflight/quotas';
import { runChecks } from '../../bin/preflight/run';
import { checkStackState } from '../../bin/preflight/stack-state';
import { synthesizeStage, type StackTemplate, type SynthesizedStage } from '../../lib/synth-template';
import { accountMocks, ACCOUNT, deployedResources, REGION, setAccount, TARGET } from './preflight-account';

let stage: SynthesizedStage;
const clients = createClients({ region: REGION });

beforeAll(() => {
  stage = synthesizeStage({ stage: 'prod' });
}, 300_000);

/** A copy of the stage's template, changed by `edit`. */
function templateWith(edit: (template: StackTemplate) => void): StackTemplate {
  const copy = structuredClone(stage.template);
  edit(copy);
  return copy;
}

/** Each fix command is one line bash parses. */
function expectRunnable(result: CheckResult) {
  for (const command of result.fix ?? []) {
    expect(command).not.toMatch(/\n/);
    execFileSync('bash', ['-n', '-c', command]);
  }
}

describe('the synthesized stage', () => {
  it('is the production stage, with the bootstrap version its assets need', () => {
    expect(stage).toMatchObject({
      stage: 'prod',
      stackName: 'Webhooks-prod',
      bootstrapVersionParameter: '/cdk-bootstrap/hnb659fds/version',
    });
    expect(stage.requiredBootstrapVersion).toBeGreaterThanOrEqual(6);
  });

  it('fixes the names of the bus, the dashboard and the alarms, and the pre-flight looks each one up', () => {
    const names = fixedNamesOf(stage.template, TARGET);
    expect(names.map((n) => n.name)).toEqual(expect.arrayContaining(['webhooks-prod', expect.stringMatching(/^webhooks-prod-.+/)]));
    expect(names.filter((n) => n.type === 'AWS::CloudWatch::Alarm').length).toBeGreaterThan(10);
    expect(names.some((n) => n.type === 'AWS::CloudWatch::Dashboard')).toBe(true);
    // No fixed name the check cannot look up: a new one needs its lookup in bin/preflight/names.ts.
    expect(
      names
        .map((n) => n.type)
        .filter((t) => !['AWS::Events::EventBus', 'AWS::CloudWatch::Dashboard', 'AWS::CloudWatch::Alarm'].includes(t)),
    ).toEqual([]);
  });
});

describe('a ready account', () => {
  it('passes every check', async () => {
    setAccount();
    const { target, results } = await runChecks(clients, stage);
    expect(target).toMatchObject({ account: ACCOUNT, region: REGION, partition: 'aws', stackName: 'Webhooks-prod' });
    expect(results.map((r) => [r.name, r.status])).toEqual([
      ['Stack state', 'ok'],
      ['CDK bootstrap', 'ok'],
      ['API Gateway CloudWatch role', 'ok'],
      ['Lambda concurrency', 'ok'],
      ['Fixed names', 'ok'],
      ['Service quotas', 'ok'],
    ]);
  });
});

describe('CDK bootstrap', () => {
  const required = () => ({ version: stage.requiredBootstrapVersion, parameter: stage.bootstrapVersionParameter });

  it('fails in an account that is not bootstrapped, naming the bootstrap command', async () => {
    setAccount({ bootstrapVersion: null });
    const result = await checkBootstrap(clients, TARGET, required());
    expect(result).toMatchObject({ status: 'fail', fix: [`npx cdk bootstrap aws://${ACCOUNT}/${REGION}`] });
    expect(result.summary).toContain('not bootstrapped');
  });

  it('fails on a bootstrap older than the app needs, and passes the profile on in the fix', async () => {
    setAccount({ bootstrapVersion: 5 });
    const result = await checkBootstrap(clients, { ...TARGET, profileFlag: '--profile ops ' }, required());
    expect(result).toMatchObject({ status: 'fail', fix: [`npx cdk bootstrap aws://${ACCOUNT}/${REGION} --profile ops`] });
    expect(result.summary).toBe(`bootstrap version 5; this app needs ${stage.requiredBootstrapVersion} or newer`);
  });
});

describe('API Gateway CloudWatch role', () => {
  it('fails in an account without one, with the commands that create it and set it', async () => {
    setAccount({ cloudwatchRoleArn: null });
    const result = await checkApiGatewayRole(clients, TARGET, stage.template);
    expect(result.status).toBe('fail');
    expect(result.details?.join(' ')).toContain('CloudWatch Logs role ARN must be set in account settings');
    expect(result.details?.join(' ')).toContain('-c apiGatewayAccountRole=true');
    expect(result.fix).toEqual([
      expect.stringMatching(
        /^aws iam create-role --role-name APIGatewayCloudWatchLogs --assume-role-policy-document '\{.*apigateway\.amazonaws\.com.*\}'$/,
      ),
      'aws iam attach-role-policy --role-name APIGatewayCloudWatchLogs --policy-arn arn:aws:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs',
      `aws apigateway update-account --patch-operations op=replace,path=/cloudwatchRoleArn,value=arn:aws:iam::${ACCOUNT}:role/APIGatewayCloudWatchLogs --region ${REGION}`,
    ]);
    expectRunnable(result);
  });

  it('passes without one when the stack owns the account setting', async () => {
    setAccount({ cloudwatchRoleArn: null });
    const owning = templateWith((t) => {
      t.Resources.ApiAccount = { Type: 'AWS::ApiGateway::Account', Properties: { CloudWatchRoleArn: { 'Fn::GetAtt': ['Role', 'Arn'] } } };
    });
    const result = await checkApiGatewayRole(clients, TARGET, owning);
    expect(result).toMatchObject({ status: 'ok', summary: expect.stringContaining('apiGatewayAccountRole') });
  });

  it('says so when an unexpected error stops it, as a failure', async () => {
    setAccount();
    accountMocks.apiGateway.on(GetAccountCommand).rejects(Object.assign(new Error('not authorized'), { name: 'AccessDeniedException' }));
    const { results } = await runChecks(clients, stage);
    expect(results.find((r) => r.name === 'API Gateway CloudWatch role')).toMatchObject({
      status: 'fail',
      summary: 'could not check: AccessDeniedException: not authorized',
    });
  });
});

describe('Lambda concurrency', () => {
  it('fails in an account whose quota is 10, naming the setting and the quota request', async () => {
    setAccount({ concurrency: { limit: 10, unreserved: 10 } });
    const result = await checkConcurrency(clients, TARGET, stage.template);
    expect(result.status).toBe('fail');
    expect(result.summary).toBe(
      "the stage reserves 60 (DeliveryPublisherFunction 50, McpFunction 10) and the account's 10 concurrent executions leave none to reserve",
    );
    expect(result.details?.join(' ')).toContain('-c mcpReservedConcurrency=null -c publisherReservedConcurrency=null');
    expect(result.fix).toEqual([
      `aws service-quotas request-service-quota-increase --service-code lambda --quota-code L-B99A9384 --desired-value 1000 --region ${REGION}`,
    ]);
    expectRunnable(result);
  });

  it('passes in that account once the MCP function and the publisher are unreserved', async () => {
    setAccount({ concurrency: { limit: 10, unreserved: 10 } });
    const unreserved = templateWith((t) => {
      for (const r of Object.values(t.Resources)) delete r.Properties?.ReservedConcurrentExecutions;
    });
    expect(await checkConcurrency(clients, TARGET, unreserved)).toMatchObject({ status: 'ok' });
  });

  it('counts what the deployed stack reserves already on a redeploy', async () => {
    const resources = deployedResources(stage.template);
    const fn = (prefix: string) =>
      resources.find((r) => r.LogicalResourceId?.startsWith(prefix) && r.ResourceType === 'AWS::Lambda::Function')!.PhysicalResourceId!;
    // 160 in all, 10 of them the MCP function's and 50 the publisher's: reserving them again leaves 100 unreserved.
    setAccount({
      concurrency: { limit: 160, unreserved: 100 },
      stack: {
        name: 'Webhooks-prod',
        status: 'UPDATE_COMPLETE',
        resources,
        reserved: { [fn('McpFunction')]: 10, [fn('DeliveryPublisherFunction')]: 50 },
      },
    });
    expect(await checkConcurrency(clients, TARGET, stage.template)).toMatchObject({ status: 'ok' });
    setAccount({ concurrency: { limit: 160, unreserved: 100 } });
    expect(await checkConcurrency(clients, TARGET, stage.template)).toMatchObject({ status: 'fail' });
  });
});

describe('Fixed names', () => {
  it('fails when the bus name is taken by another stack, naming that stack', async () => {
    setAccount({ buses: { 'webhooks-prod': 'Webhooks-prod-old' } });
    const result = await checkNames(clients, TARGET, stage.template);
    expect(result.status).toBe('fail');
    expect(result.details).toContain('event bus webhooks-prod: belongs to the stack Webhooks-prod-old');
    expect(result.fix).toEqual([`aws cloudformation delete-stack --stack-name Webhooks-prod-old --region ${REGION}`]);
    expectRunnable(result);
  });

  it('fails when the bus, the dashboard and an alarm exist outside any stack, with the commands that delete them', async () => {
    const dashboard = fixedNamesOf(stage.template, TARGET).find((n) => n.type === 'AWS::CloudWatch::Dashboard')!.name;
    setAccount({ buses: { 'webhooks-prod': null }, dashboards: [dashboard], alarms: ['webhooks-prod-dead-letters'] });
    const result = await checkNames(clients, TARGET, stage.template);
    expect(result.summary).toMatch(/^3 of the stack's \d+ fixed names are taken/);
    expect(result.details).toContain('event bus webhooks-prod: exists outside any CloudFormation stack');
    expect(result.fix).toEqual([
      `aws events delete-event-bus --name webhooks-prod --region ${REGION}`,
      `aws cloudwatch delete-alarms --alarm-names webhooks-prod-dead-letters --region ${REGION}`,
      `aws cloudwatch delete-dashboards --dashboard-names ${dashboard} --region ${REGION}`,
    ]);
    expectRunnable(result);
  });

  it("passes when the names exist as the stage stack's own resources (a redeploy)", async () => {
    const resources = deployedResources(stage.template);
    const names = fixedNamesOf(stage.template, TARGET);
    setAccount({
      stack: { name: 'Webhooks-prod', status: 'UPDATE_COMPLETE', resources },
      buses: { 'webhooks-prod': 'Webhooks-prod' },
      dashboards: names.filter((n) => n.type === 'AWS::CloudWatch::Dashboard').map((n) => n.name),
      alarms: names.filter((n) => n.type === 'AWS::CloudWatch::Alarm').map((n) => n.name),
    });
    expect(await checkNames(clients, TARGET, stage.template)).toMatchObject({ status: 'ok' });
  });

  it('reads names made of literals and the region, and reports a kind it cannot look up', async () => {
    expect(fixedString({ 'Fn::Join': ['', ['webhooks-prod-', { Ref: 'AWS::Region' }]] }, TARGET)).toBe(`webhooks-prod-${REGION}`);
    expect(fixedString({ 'Fn::Join': ['', ['x-', { Ref: 'SomeResource' }]] }, TARGET)).toBeUndefined();
    setAccount();
    const named = templateWith((t) => {
      t.Resources.Queue = { Type: 'AWS::SQS::Queue', Properties: { QueueName: 'webhooks-prod-extra' } };
    });
    const result = await checkNames(clients, TARGET, named);
    expect(result).toMatchObject({ status: 'warn', details: [expect.stringContaining('AWS::SQS::Queue webhooks-prod-extra')] });
  });
});

describe('Stack state', () => {
  it('fails on a stack whose update rollback failed, with the command that continues it', async () => {
    setAccount({ stack: { name: 'Webhooks-prod', status: 'UPDATE_ROLLBACK_FAILED', resources: [] } });
    const result = await checkStackState(clients, TARGET);
    expect(result).toMatchObject({
      status: 'fail',
      fix: [`aws cloudformation continue-update-rollback --stack-name Webhooks-prod --region ${REGION}`],
    });
  });

  it('fails while another operation runs on the stack, and passes on a stack cdk can update or re-create', async () => {
    setAccount({ stack: { name: 'Webhooks-prod', status: 'UPDATE_IN_PROGRESS', resources: [] } });
    expect(await checkStackState(clients, TARGET)).toMatchObject({ status: 'fail' });
    for (const status of ['UPDATE_COMPLETE', 'ROLLBACK_COMPLETE', 'UPDATE_ROLLBACK_COMPLETE']) {
      setAccount({ stack: { name: 'Webhooks-prod', status, resources: [] } });
      expect(await checkStackState(clients, TARGET), status).toMatchObject({ status: 'ok' });
    }
  });
});

describe('Service quotas', () => {
  it("warns when the stage throttles its API above the account's regional throttle quota", async () => {
    setAccount({ quotas: { [QUOTAS.apiRate.code]: 50 } });
    const result = await checkServiceQuotas(clients, TARGET, stage.template);
    expect(result.status).toBe('warn');
    expect(result.details?.[0]).toMatch(/^throttlingRateLimit 100 is over the API Gateway throttle rate .*: 50,/);
    expect(result.fix).toEqual([
      `aws service-quotas request-service-quota-increase --service-code apigateway --quota-code L-8A5B8E43 --desired-value 100 --region ${REGION}`,
    ]);
  });

  it('falls back to the documented default where Service Quotas does not answer (2,500 a second in some regions)', async () => {
    setAccount();
    const fast = templateWith((t) => {
      for (const r of Object.values(t.Resources))
        if (r.Type === 'AWS::ApiGateway::Stage')
          for (const m of r.Properties!.MethodSettings as { ThrottlingRateLimit?: number }[]) m.ThrottlingRateLimit = 5000;
    });
    expect(await checkServiceQuotas(clients, TARGET, fast)).toMatchObject({ status: 'ok' });
    const result = await checkServiceQuotas(clients, { ...TARGET, region: 'af-south-1' }, fast);
    expect(result.details?.[0]).toContain('2500 (the documented default)');
  });

  it("warns when the queue consumers' caps could take all the concurrency a 10-execution account leaves", async () => {
    setAccount({ concurrency: { limit: 10, unreserved: 10 } });
    const result = await checkServiceQuotas(clients, TARGET, stage.template);
    expect(result.status).toBe('warn');
    expect(result.details?.join(' ')).toMatch(/caps add up to \d+ concurrent executions/);
  });
});
