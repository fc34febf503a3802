/**
 * Staff sign-in in CDK (docs/behaviour.md#staff-sign-in): with the stage's `consoleOidc`, the two
 * sign-in functions and the console's own function get the setting as `CONSOLE_OIDC` (the console
 * also its address, the redirect URI), the stack outputs `ConsoleOidcRedirectUri`, and the two
 * sign-in routes are public (no authorizer); the staff routes keep the token authorizer. Without the
 * setting, no function gets it and there is no such output. No function gets any grant for it.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConsoleOidc } from '../../../lambdas/contract/console-oidc';
import { ENV } from '../../../lambdas/contract/deployment';
import { keys } from '../../../lambdas/store/table-schema';
import type { RateLimitBucket } from '../../../lambdas/contract/rate-limits';
import { parseConfig } from '../../../lib/config';
import { WebhooksStack } from '../../../lib/webhooks-stack';
import { buildTestStack, removeTestOutput } from '../synth';
import { actionsOf, statementsOf } from '../template';
import { tableGrantOf } from './table-grant';

const OIDC = parseConsoleOidc(
  { issuer: 'https://login.example.com', clientId: 'webhooks-console', roles: { read: ['support'], admin: ['ops'] }, name: 'Example SSO' },
  [],
)!;
const built = buildTestStack();
afterAll(() => removeTestOutput(built.app));
const stack = new WebhooksStack(built.app, 'StaffSignIn', { config: { ...parseConfig({}), consoleOidc: OIDC } });
const plain = new WebhooksStack(built.app, 'NoStaffSignIn', { config: parseConfig({}) });
const withOidc = Template.fromStack(stack);
const without = Template.fromStack(plain);
const rateKey = (bucket: RateLimitBucket) => keys.rateLimit(bucket, '*', 0).pk;

type Fn = { Properties: { Description?: string; Environment?: { Variables?: Record<string, unknown> } } };
const functionsOf = (template: Template) => Object.values(template.findResources('AWS::Lambda::Function')) as Fn[];
const variables = (fn: Fn) => fn.Properties.Environment?.Variables ?? {};
const descriptionOf = (fn: Fn) => fn.Properties.Description ?? '';
const SIGN_IN = ['POST /console-sessions/nonces:', 'POST /console-sessions:'];
const CONSOLE = 'Serves the web console';

describe('staff sign-in in the stack', () => {
  it('gives the setting, as JSON, to the two sign-in functions and the console function, and to no other', () => {
    const carrying = functionsOf(withOidc).filter((f) => ENV.CONSOLE_OIDC in variables(f));
    expect(carrying).toHaveLength(3);
    for (const start of [...SIGN_IN, CONSOLE])
      expect(
        carrying.filter((f) => descriptionOf(f).startsWith(start)),
        start,
      ).toHaveLength(1);
    for (const fn of carrying) expect(JSON.parse(variables(fn)[ENV.CONSOLE_OIDC] as string)).toEqual(OIDC);
  });

  it('tells the console function its own address, the redirect URI, and outputs that same value as ConsoleOidcRedirectUri', () => {
    const consoleFn = functionsOf(withOidc).find((f) => descriptionOf(f).startsWith(CONSOLE))!;
    const url = variables(consoleFn)[ENV.CONSOLE_URL];
    const apiId = Object.keys(withOidc.findResources('AWS::ApiGateway::RestApi'))[0]!;
    expect(JSON.stringify(url)).toContain(`"Ref":"${apiId}"`);
    expect(JSON.stringify(url)).toMatch(/\.execute-api\..*\/dev\/console\/"/);
    const outputs = withOidc.toJSON().Outputs as Record<string, { Value: unknown; Description: string }>;
    expect(outputs.ConsoleOidcRedirectUri!.Value).toEqual(url);
    expect(outputs.ConsoleOidcRedirectUri!.Description).toContain('webhooks-console');
    expect(outputs.ConsoleOidcRedirectUri!.Description).toContain('https://login.example.com');
  });

  it('sets nothing without the setting: no CONSOLE_OIDC anywhere, no console address for the console, no output', () => {
    expect(functionsOf(without).filter((f) => ENV.CONSOLE_OIDC in variables(f))).toEqual([]);
    const consoleFn = functionsOf(without).find((f) => descriptionOf(f).startsWith(CONSOLE))!;
    expect(variables(consoleFn)).not.toHaveProperty(ENV.CONSOLE_URL);
    expect(Object.keys(without.toJSON().Outputs as object)).not.toContain('ConsoleOidcRedirectUri');
    // The sign-in functions are there all the same: they answer 404 StaffSignInDisabled.
    for (const start of SIGN_IN) expect(functionsOf(without).filter((f) => descriptionOf(f).startsWith(start))).toHaveLength(1);
  });

  it('serves the two sign-in routes without the authorizer, and the staff routes and GET /workspaces with it', () => {
    type Method = { Properties: { HttpMethod: string; OperationName?: string; AuthorizationType: string } };
    const methods = Object.values(withOidc.findResources('AWS::ApiGateway::Method')) as Method[];
    const auth = (operationName: string) => methods.find((m) => m.Properties.OperationName === operationName)?.Properties.AuthorizationType;
    expect(auth('createConsoleNonce')).toBe('NONE');
    expect(auth('createConsoleSession')).toBe('NONE');
    for (const op of ['listConsoleSessions', 'revokeConsoleSession', 'listWorkspaces']) expect(auth(op), op).toBe('CUSTOM');
  });

  it('grants each staff operation exactly its table work, and nothing for the provider (reached over HTTPS)', () => {
    const api = stack.api;
    const grant = (operationId: string) => tableGrantOf(withOidc, api.operationFunctions.get(operationId)!);
    // Writers without an UpdateItem of their own bump only their bucket's counters (by leading key).
    expect(grant('createConsoleNonce')).toEqual({ items: ['dynamodb:PutItem'], queries: [], leadingKeys: [rateKey('rest_write')] });
    expect(grant('createConsoleSession')).toEqual({
      items: ['dynamodb:DeleteItem', 'dynamodb:PutItem'],
      queries: [],
      leadingKeys: [rateKey('rest_write')],
    });
    expect(grant('listConsoleSessions')).toEqual({ items: [], queries: ['table'], leadingKeys: [rateKey('rest_read')] });
    expect(grant('revokeConsoleSession')).toEqual({
      items: ['dynamodb:DeleteItem', 'dynamodb:GetItem'],
      queries: [],
      leadingKeys: [rateKey('rest_write')],
    });
    expect(grant('listWorkspaces')).toEqual({ items: ['dynamodb:GetItem'], queries: ['index/gsi1'], leadingKeys: [rateKey('rest_read')] });
    // No statement beyond the table (and its counters) for any of them.
    for (const operationId of [
      'createConsoleNonce',
      'createConsoleSession',
      'listConsoleSessions',
      'revokeConsoleSession',
      'listWorkspaces',
    ])
      expect(
        statementsOf(withOidc, api.operationFunctions.get(operationId)!)
          .flatMap(actionsOf)
          .filter((a) => !a.startsWith('dynamodb:') && !a.startsWith('xray:') && !a.startsWith('logs:')),
        operationId,
      ).toEqual([]);
  });
});
