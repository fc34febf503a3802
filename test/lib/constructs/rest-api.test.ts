/**
 * The REST API (lib/constructs/rest-api.ts) on a bare stack with the siblings
 * it is given (the table, a delivery queue, a bus): its authorizer, one method
 * and function per operation, the docs routes (docs-endpoint.ts), the console
 * routes (console-endpoint.ts), the stage,
 * and the problem+json gateway responses (problem-responses.ts). The grants of
 * its functions are checked against every other role in ../webhooks-stack.test.ts.
 */
import { SecretsKey } from '../../../lib/constructs/secrets-key';
import { Validations } from 'aws-cdk-lib';
import { Template, Match } from 'aws-cdk-lib/assertions';
import { EventBus } from 'aws-cdk-lib/aws-events';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Outbox } from '../../../lib/constructs/outbox';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProblemSchema } from '../../../lambdas/contract/errors';
import { OPERATIONS, routeKind, type OperationDef } from '../../../lambdas/contract/operations';
import { DEFAULT_QUOTAS } from '../../../lambdas/contract/rate-limits';
import { DEFAULT_WORKSPACE_LIMITS } from '../../../lambdas/contract/limits';
import { bearerToken } from '../../../lambdas/domain/api-tokens';
import { CONSOLE_PATHS } from '../../../lib/constructs/console-endpoint';
import { DOCS_PATHS } from '../../../lib/constructs/docs-endpoint';
import { GATEWAY_PROBLEMS, PROBLEM_CONTENT_TYPE } from '../../../lib/constructs/problem-responses';
import { BEARER_HEADER_PATTERN, ServiceApi } from '../../../lib/constructs/rest-api';
import type { ServiceFunction } from '../../../lib/constructs/service-function';
import { ServiceTable } from '../../../lib/constructs/table';
import { buildTestStack, removeTestOutput, type TestStack } from '../synth';
import { logicalId, ofType, resourcesOf, type Resource } from '../template';

const ops = OPERATIONS as readonly OperationDef[];

let built: TestStack;
let table: ServiceTable;
let api: ServiceApi;
let template: Template;
let resources: Record<string, Resource>;

beforeAll(() => {
  built = buildTestStack();
  table = new ServiceTable(built.stack, 'Data');
  api = new ServiceApi(built.stack, 'Api', {
    table,
    deliveryQueue: new Queue(built.stack, 'DeliveryQueue'),
    outbox: new Outbox(built.stack, 'OutboxEventBus', { eventBus: new EventBus(built.stack, 'EventBus'), stage: 'test' }),
    jobQueue: new Queue(built.stack, 'JobQueue'),
    secretsKey: new SecretsKey(built.stack, 'Secrets'),
  });
  template = Template.fromStack(built.stack);
  resources = resourcesOf(template);
}, 120_000);

afterAll(() => removeTestOutput(built?.app));

describe('the REST functions', () => {
  it('give the API functions 256 MB and 10 s', () => {
    const fns = [...api.operationFunctions.values(), api.authorizerFunction, api.docs.handler, api.console.handler];
    for (const fn of fns)
      expect(resources[logicalId(fn.function)]!.Properties, fn.node.path).toMatchObject({ MemorySize: 256, Timeout: 10 });
  });

  it('give each REST function the table, the rate-limit table, the quotas and the workspace limits; the authorizer only the table; docs and console nothing', () => {
    const tableRef = { Ref: logicalId(table.table) };
    for (const def of ops) {
      const fn = api.operationFunctions.get(def.operationId)!;
      template.hasResourceProperties('AWS::Lambda::Function', {
        Description: Match.stringLikeRegexp(`^${def.method} `),
        Role: { 'Fn::GetAtt': [logicalId(fn.role), 'Arn'] },
        Environment: {
          Variables: {
            TABLE_NAME: tableRef,
            RATE_LIMIT_TABLE_NAME: tableRef,
            RATE_LIMITS: JSON.stringify(DEFAULT_QUOTAS),
            WORKSPACE_LIMITS: JSON.stringify(DEFAULT_WORKSPACE_LIMITS),
          },
        },
      });
    }
    const authorizer = resources[logicalId(api.authorizerFunction.function)]!;
    expect((authorizer.Properties.Environment as { Variables: object }).Variables).toMatchObject({ TABLE_NAME: tableRef });
    expect(Object.keys((authorizer.Properties.Environment as { Variables: object }).Variables)).not.toContain('RATE_LIMITS');
    expect(Object.keys((authorizer.Properties.Environment as { Variables: object }).Variables)).not.toContain('WORKSPACE_LIMITS');
    for (const fn of [api.docs.handler, api.console.handler]) {
      const variables = (resources[logicalId(fn.function)]!.Properties.Environment as { Variables: object }).Variables;
      expect(Object.keys(variables), fn.node.path).not.toContain('TABLE_NAME');
    }
  });
});

describe('the REST API', () => {
  it('is one regional API with the TOKEN authorizer on the Authorization header', () => {
    template.resourceCountIs('AWS::ApiGateway::RestApi', 1);
    template.hasResourceProperties('AWS::ApiGateway::RestApi', { EndpointConfiguration: { Types: ['REGIONAL'] } });
    template.resourceCountIs('AWS::ApiGateway::Authorizer', 1);
    template.hasResourceProperties('AWS::ApiGateway::Authorizer', {
      Type: 'TOKEN',
      IdentitySource: 'method.request.header.Authorization',
      AuthorizerResultTtlInSeconds: 60,
      IdentityValidationExpression: BEARER_HEADER_PATTERN,
    });
  });

  it("screens the header exactly as the authorizer's bearerToken parses it", () => {
    const pattern = new RegExp(BEARER_HEADER_PATTERN);
    for (const header of [
      'Bearer whk_abc',
      'bearer whk_abc',
      'BEARER   whk_abc  ',
      ' Bearer\twhk_abc',
      'Bearer',
      'Bearer a b',
      'Basic abc',
      'whk_abc',
      '',
    ]) {
      expect(pattern.test(header), JSON.stringify(header)).toBe(bearerToken(header) !== null);
    }
  });

  it('has a method per operation, on its contract path, authorized by its route kind, invoking its own function', () => {
    const authorizerId = logicalId(api.authorizer);
    template.resourceCountIs('AWS::ApiGateway::Method', ops.length + DOCS_PATHS.length + CONSOLE_PATHS.length);
    for (const def of ops) {
      const method = api.operationMethods.get(def.operationId)!;
      expect(method.resource.path).toBe(def.path);
      expect(method.httpMethod).toBe(def.method);
      const functionId = logicalId(api.operationFunctions.get(def.operationId)!.function);
      // A token route behind the TOKEN authorizer; a platform route behind API Gateway's SigV4 check; a public one open.
      const kind = routeKind(def);
      const auth =
        kind === 'token'
          ? { AuthorizationType: 'CUSTOM', AuthorizerId: { Ref: authorizerId } }
          : { AuthorizationType: kind === 'iam' ? 'AWS_IAM' : 'NONE', AuthorizerId: Match.absent() };
      const found = template.findResources('AWS::ApiGateway::Method', {
        Properties: {
          OperationName: def.operationId,
          HttpMethod: def.method,
          ...auth,
          Integration: { Type: 'AWS_PROXY', IntegrationHttpMethod: 'POST' },
        },
      });
      expect(Object.keys(found), def.operationId).toHaveLength(1);
      expect(JSON.stringify(Object.values(found)[0]!.Properties.Integration)).toContain(`"${functionId}"`);
    }
  });

  it('puts the static /webhooks/deliveries and /webhooks/filter-test beside the /webhooks/{endpointId} parameter', () => {
    const webhooks = api.api.root.getResource('workspaces')?.getResource('{slug}')?.getResource('webhooks');
    const deliveries = webhooks?.getResource('deliveries');
    expect(webhooks?.getResource('{endpointId}')).toBeDefined();
    expect(deliveries?.getResource('{deliveryId}')?.getResource('replay')).toBeDefined();
    const children = ofType(template, 'AWS::ApiGateway::Resource').filter(
      ([, r]) => JSON.stringify(r.Properties.ParentId) === JSON.stringify({ Ref: logicalId(webhooks!) }),
    );
    expect(children.map(([, r]) => r.Properties.PathPart).sort()).toEqual(['deliveries', 'filter-test', '{endpointId}']);
    // API Gateway picks the static `filter-test` by path alone: another method on it is its 404, never an endpoint route.
    const filterTest = webhooks!.getResource('filter-test')!;
    const methods = ofType(template, 'AWS::ApiGateway::Method').filter(
      ([, r]) => JSON.stringify(r.Properties.ResourceId) === JSON.stringify({ Ref: logicalId(filterTest) }),
    );
    expect(methods.map(([, r]) => r.Properties.HttpMethod)).toEqual(['POST']);
  });

  it('serves /openapi.json, /reference and /reference/{asset} with no authorizer', () => {
    const docsId = logicalId(api.docs.handler.function);
    expect(api.docs.methods.map((m) => m.resource.path)).toEqual([...DOCS_PATHS]);
    for (const method of api.docs.methods) {
      const props = resources[logicalId(method)]!.Properties;
      expect(props).toMatchObject({ HttpMethod: 'GET', AuthorizationType: 'NONE', Integration: { Type: 'AWS_PROXY' } });
      expect(props.AuthorizerId).toBeUndefined();
      expect(JSON.stringify(props.Integration)).toContain(`"${docsId}"`);
    }
  });

  it('serves /console and /console/{asset} with no authorizer, from the console function (./console-endpoint.test.ts)', () => {
    const consoleId = logicalId(api.console.handler.function);
    expect(api.console.methods.map((m) => `${m.httpMethod} ${m.resource.path}`)).toEqual(CONSOLE_PATHS.map((p) => `GET ${p}`));
    for (const method of api.console.methods) {
      const props = resources[logicalId(method)]!.Properties;
      expect(props).toMatchObject({ AuthorizationType: 'NONE', Integration: { Type: 'AWS_PROXY' } });
      expect(JSON.stringify(props.Integration)).toContain(`"${consoleId}"`);
    }
    // No operation shares the console's (or the docs') paths.
    for (const def of ops) expect(def.path, def.operationId).not.toMatch(/^\/(console|reference|openapi\.json)(\/|$)/);
  });

  it('has no other public method: only the docs and console routes and the public routes skip the authorizer', () => {
    const open = template.findResources('AWS::ApiGateway::Method', { Properties: { AuthorizationType: 'NONE' } });
    const publicRoutes = ops.filter((d) => routeKind(d) === 'public').map((d) => api.operationMethods.get(d.operationId)!);
    const expected = [...api.docs.methods, ...api.console.methods, ...publicRoutes].map((m) => logicalId(m));
    expect(Object.keys(open).sort()).toEqual(expected.sort());
  });

  it('routes every operation of the generated OpenAPI document, and nothing it does not list', () => {
    const paths = api.docs.document.paths as Record<string, Record<string, unknown>>;
    const documented = Object.entries(paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`));
    const routed = [...api.operationMethods.values()].map((m) => `${m.httpMethod} ${m.resource.path}`);
    expect(routed.sort()).toEqual(documented.sort());
  });

  it('gives API Gateway invoke permissions only for the deployed stage, no test-invoke', () => {
    const permissions = ofType(template, 'AWS::Lambda::Permission').filter(
      ([, p]) => p.Properties.Principal === 'apigateway.amazonaws.com',
    );
    // One per method and one for the authorizer.
    expect(permissions).toHaveLength(ops.length + DOCS_PATHS.length + CONSOLE_PATHS.length + 1);
    for (const [id, p] of permissions) expect(JSON.stringify(p.Properties.SourceArn), id).not.toContain('test-invoke-stage');
    // Nothing but API Gateway may invoke the API's functions (the stack's other permissions: ../webhooks-stack.test.ts).
    expect(ofType(template, 'AWS::Lambda::Permission')).toHaveLength(permissions.length);
  });

  it('logs access as JSON to its own log group, traces, and throttles the stage', () => {
    const stage = ofType(template, 'AWS::ApiGateway::Stage');
    expect(stage).toHaveLength(1);
    const props = stage[0]![1].Properties as {
      StageName: string;
      TracingEnabled: boolean;
      AccessLogSetting: { DestinationArn: unknown; Format: string };
      MethodSettings: object[];
    };
    expect(props.StageName).toBe('dev');
    expect(props.TracingEnabled).toBe(true);
    expect(JSON.stringify(props.AccessLogSetting.DestinationArn)).toContain(logicalId(api.accessLogs));
    const format = JSON.parse(props.AccessLogSetting.Format) as Record<string, string>;
    expect(format).toMatchObject({
      requestId: '$context.requestId',
      status: '$context.status',
      principalId: '$context.authorizer.principalId',
    });
    expect(props.MethodSettings).toContainEqual(
      expect.objectContaining({ HttpMethod: '*', ResourcePath: '/*', ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 }),
    );
    expect(resources[logicalId(api.accessLogs)]).toMatchObject({ Properties: { RetentionInDays: 30 }, DeletionPolicy: 'Retain' });
  });

  it("logs the operations', docs and console functions to one shared log group, with the stage's retention; the authorizer to its own", () => {
    const groupOf = (fn: ServiceFunction) =>
      (resources[logicalId(fn.function)]!.Properties.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;
    const shared = logicalId(api.functionLogs);
    const routeFunctions = [...api.operationFunctions.values(), api.docs.handler, api.console.handler];
    expect(routeFunctions).toHaveLength(ops.length + 2);
    for (const fn of routeFunctions) {
      expect(groupOf(fn), fn.node.path).toBe(shared);
      expect(fn.logGroup, fn.node.path).toBe(api.functionLogs);
    }
    expect(resources[shared]).toMatchObject({ Type: 'AWS::Logs::LogGroup', Properties: { RetentionInDays: 30 }, DeletionPolicy: 'Retain' });
    const authorizerGroup = groupOf(api.authorizerFunction);
    expect(authorizerGroup).toBe(logicalId(api.authorizerFunction.node.findChild('Logs')));
    // No group per route function: the API's groups are the shared one, the access log and the authorizer's.
    const apiGroups = api.node.findAll().filter((c): c is LogGroup => c instanceof LogGroup);
    expect(apiGroups.map(logicalId).sort()).toEqual([shared, logicalId(api.accessLogs), authorizerGroup].sort());
  });

  it('creates no account-level CloudWatch role by default (apiGatewayAccountRole false)', () => {
    template.resourceCountIs('AWS::ApiGateway::Account', 0);
    expect(api.api.node.tryFindChild('CloudWatchRole')).toBeUndefined();
  });

  it("says plainly, in the APIG6 acknowledgement, that access logging needs the account's CloudWatch role and how to get it", () => {
    const reasons = api.api.deploymentStage.node.metadata
      .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((m) => Object.entries(m.data as Record<string, string>))
      .filter(([id]) => id.replace(/^annotation::/i, '') === 'AwsSolutions-APIG6');
    expect(reasons).toHaveLength(1);
    const reason = reasons[0]![1];
    expect(reason).toContain('CloudWatch Logs role ARN must be set in account settings');
    expect(reason).toContain('apiGatewayAccountRole=true');
    expect(reason).toContain('npm run preflight');
  });

  it('with apiGatewayAccountRole, owns the account setting and its role, both kept when the stack is deleted', () => {
    const other = buildTestStack();
    try {
      const owning = new ServiceApi(other.stack, 'Api', {
        table: new ServiceTable(other.stack, 'Data'),
        deliveryQueue: new Queue(other.stack, 'DeliveryQueue'),
        outbox: new Outbox(other.stack, 'OutboxEventBus', { eventBus: new EventBus(other.stack, 'EventBus'), stage: 'test' }),
        jobQueue: new Queue(other.stack, 'JobQueue'),
        secretsKey: new SecretsKey(other.stack, 'Secrets'),
        apiGatewayAccountRole: true,
      });
      const t = Template.fromStack(other.stack);
      const r = resourcesOf(t);
      const [[accountId, account]] = ofType(t, 'AWS::ApiGateway::Account') as [[string, Resource]];
      const [[roleId, role]] = ofType(t, 'AWS::IAM::Role').filter(([, res]) =>
        JSON.stringify(res.Properties.AssumeRolePolicyDocument).includes('apigateway.amazonaws.com'),
      ) as [[string, Resource]];
      expect(account.Properties.CloudWatchRoleArn).toEqual({ 'Fn::GetAtt': [roleId, 'Arn'] });
      expect(JSON.stringify(role.Properties.ManagedPolicyArns)).toContain('service-role/AmazonAPIGatewayPushToCloudWatchLogs');
      // Account-wide (every REST API of the region uses it), so deleting this stack must not remove it.
      for (const res of [account, role]) expect(res).toMatchObject({ DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
      // The stage, whose access logging needs the setting, is created after it.
      const stage = r[logicalId(owning.api.deploymentStage)] as Resource & { DependsOn?: string[] };
      expect(stage.DependsOn).toContain(accountId);
    } finally {
      removeTestOutput(other.app);
    }
  });
});

describe('gateway responses', () => {
  /** The body API Gateway would send, with its variables filled in. */
  function render(bodyTemplate: string): unknown {
    return JSON.parse(
      bodyTemplate.replaceAll('$context.error.messageString', '"Gateway message"').replaceAll('$context.requestId', 'req-123'),
    );
  }

  it('answer every listed type as problem+json in the shared shape', () => {
    template.resourceCountIs('AWS::ApiGateway::GatewayResponse', GATEWAY_PROBLEMS.length);
    for (const problem of GATEWAY_PROBLEMS) {
      const found = Object.values(
        template.findResources('AWS::ApiGateway::GatewayResponse', { Properties: { ResponseType: problem.type.responseType } }),
      );
      expect(found, problem.type.responseType).toHaveLength(1);
      const props = found[0]!.Properties as {
        StatusCode: string;
        ResponseParameters: Record<string, string>;
        ResponseTemplates: Record<string, string>;
      };
      expect(props.ResponseParameters['gatewayresponse.header.Content-Type']).toBe(`'${PROBLEM_CONTENT_TYPE}'`);
      const body = ProblemSchema.strict().parse(render(props.ResponseTemplates['application/json']!));
      expect(body.tag).toBe(problem.tag);
      expect(String(body.status)).toBe(props.StatusCode);
      expect(body.traceId).toBe('req-123');
    }
  });

  it.each([
    ['UNAUTHORIZED', '401', 'Unauthorized'],
    ['ACCESS_DENIED', '403', 'Forbidden'],
    ['MISSING_AUTHENTICATION_TOKEN', '404', 'RouteNotFound'],
    ['THROTTLED', '429', 'RateLimited'],
    ['BAD_REQUEST_BODY', '400', 'ValidationError'],
    ['BAD_REQUEST_PARAMETERS', '400', 'ValidationError'],
    ['DEFAULT_4XX', '400', 'ValidationError'],
    ['DEFAULT_5XX', '502', 'BadGateway'],
    ['INTEGRATION_TIMEOUT', '504', 'GatewayTimeout'],
  ])('%s is %s %s', (type, status, tag) => {
    template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: type,
      StatusCode: status,
      ResponseParameters: { 'gatewayresponse.header.Content-Type': `'${PROBLEM_CONTENT_TYPE}'` },
      ResponseTemplates: { 'application/json': Match.stringLikeRegexp(`"tag":"${tag}"`) },
    });
  });

  it('tell a throttled client when to retry, and show no internals on 5xx', () => {
    template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'THROTTLED',
      ResponseParameters: { 'gatewayresponse.header.Retry-After': "'1'" },
    });
    template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'DEFAULT_5XX',
      ResponseTemplates: { 'application/json': Match.not(Match.stringLikeRegexp('messageString')) },
    });
  });
});
