/**
 * The platform API in CDK (lib/constructs/rest-api.ts, lib/webhooks-stack.ts): its routes behind
 * `AWS_IAM`, the API's resource policy (every route invocable, `/platform/*` explicitly denied to
 * any principal not in `platformPrincipals`, all of it when none), the managed policy of exactly
 * the platform routes and its output, and a new deployment when the principals change.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import { OPERATIONS, routeKind, type OperationDef } from '../../../lambdas/contract/operations';
import { parseConfig } from '../../../lib/config';
import { PLATFORM_RESOURCE } from '../../../lib/constructs/rest-api';
import { WebhooksStack } from '../../../lib/webhooks-stack';
import { buildTestStack, removeTestOutput, type TestStack } from '../synth';

const BACKEND = 'arn:aws:iam::123456789012:role/platform-backend';
const OTHER = 'arn:aws:iam::123456789012:user/ops';
const platformRoutes = (OPERATIONS as readonly OperationDef[]).filter((d) => routeKind(d) === 'iam');

const apps: TestStack[] = [];
afterAll(() => apps.forEach((a) => removeTestOutput(a.app)));

function synth(platformPrincipals: readonly string[]): Template {
  const built = buildTestStack();
  apps.push(built);
  const stack = new WebhooksStack(built.app, 'Platform', { config: { ...parseConfig({}), platformPrincipals } });
  return Template.fromStack(stack);
}

type Statement = { Effect: string; Principal?: unknown; Action: unknown; Resource: unknown; Condition?: unknown };

function resourcePolicy(template: Template): Statement[] {
  const apis = Object.values(template.findResources('AWS::ApiGateway::RestApi'));
  expect(apis).toHaveLength(1);
  return (apis[0]!.Properties.Policy as { Statement: Statement[] }).Statement;
}

function deploymentIds(template: Template): string[] {
  return Object.keys(template.findResources('AWS::ApiGateway::Deployment'));
}

const withTwo = synth([BACKEND, OTHER]);
const withNone = synth([]);

describe('the platform API in the stack', () => {
  it('puts every platform route behind AWS_IAM', () => {
    for (const def of platformRoutes) {
      const found = template(withTwo, def);
      expect(
        found.map((m) => m.Properties.AuthorizationType),
        def.operationId,
      ).toEqual(['AWS_IAM']);
    }
  });

  it('allows every route, and explicitly denies /platform/* to every principal not listed', () => {
    expect(resourcePolicy(withTwo)).toEqual([
      { Effect: 'Allow', Principal: { AWS: '*' }, Action: 'execute-api:Invoke', Resource: 'execute-api:/*' },
      {
        Effect: 'Deny',
        Principal: { AWS: '*' },
        Action: 'execute-api:Invoke',
        Resource: PLATFORM_RESOURCE,
        Condition: { StringNotEquals: { 'aws:PrincipalArn': [BACKEND, OTHER] } },
      },
    ]);
    expect(PLATFORM_RESOURCE).toBe('execute-api:/*/*/platform/*');
  });

  it('denies all of /platform/* when no principal is configured', () => {
    const deny = resourcePolicy(withNone).find((s) => s.Effect === 'Deny')!;
    expect(deny).toEqual({ Effect: 'Deny', Principal: { AWS: '*' }, Action: 'execute-api:Invoke', Resource: PLATFORM_RESOURCE });
  });

  it('outputs a managed policy allowing execute-api:Invoke on exactly the platform routes, and the platform base URL', () => {
    const policies = Object.values(withTwo.findResources('AWS::IAM::ManagedPolicy'));
    const platform = policies.filter((p) => JSON.stringify(p).includes('/platform/'));
    expect(platform).toHaveLength(1);
    const statements = platform[0]!.Properties.PolicyDocument.Statement as Statement[];
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatchObject({ Effect: 'Allow', Action: 'execute-api:Invoke' });
    const routes = (statements[0]!.Resource as unknown[]).map((r) => {
      const parts = (r as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
      return String(parts[parts.length - 1]);
    });
    const expected = platformRoutes.map((d) => `/${'dev'}/${d.method}${d.path.replace(/\{\w+\}/g, '*')}`);
    expect(routes.sort()).toEqual(expected.sort());
    const outputs = withTwo.findOutputs('*');
    expect(Object.keys(outputs)).toEqual(expect.arrayContaining(['PlatformInvokePolicyArn', 'PlatformApiUrl']));
    expect(JSON.stringify(outputs.PlatformApiUrl!.Value)).toContain('platform/');
  });

  it('deploys the API again when the principals change, so the new policy takes effect', () => {
    expect(deploymentIds(withTwo)).not.toEqual(deploymentIds(withNone));
    expect(deploymentIds(synth([BACKEND, OTHER]))).toEqual(deploymentIds(withTwo));
  });

  it('refuses a principal that is not an IAM role or user ARN', () => {
    expect(() => parseConfig({ platformPrincipals: ['arn:aws:s3:::bucket'] })).toThrow(/platformPrincipals/);
    expect(() => parseConfig({ platformPrincipals: 'not-an-arn' })).toThrow(/platformPrincipals/);
    expect(parseConfig({ platformPrincipals: `${BACKEND},${OTHER}` }).platformPrincipals).toEqual([BACKEND, OTHER]);
  });
});

function template(t: Template, def: OperationDef) {
  return Object.values(t.findResources('AWS::ApiGateway::Method', { Properties: { OperationName: def.operationId } }));
}
