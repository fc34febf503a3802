/**
 * The synthesized template of the default stage (cdk.json's context), built
 * once. Bundling is skipped here (see docs-bundle.test.ts for a real bundle).
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Stack, Validations, type CfnElement } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProblemSchema } from '../../lambdas/contract/errors';
import { OPERATIONS, type OperationDef } from '../../lambdas/contract/operations';
import { DEFAULT_QUOTAS } from '../../lambdas/contract/rate-limits';
import { bearerToken } from '../../lambdas/domain/api-tokens';
import { MAX_RETRIES } from '../../lambdas/domain/backoff';
import { MCP_CORS_HEADERS } from '../../lambdas/mcp/gate';
import { SEND_LIMITS } from '../../lambdas/pipeline/http-sender';
import { EVENT_SOURCE } from '../../lambdas/queue/domain-events';
import { INDEXES, TABLE } from '../../lambdas/store/table-schema';
import type { WebhooksApp } from '../../lib/app';
import { DOCS_PATHS } from '../../lib/constructs/docs-endpoint';
import { MCP_CORS } from '../../lib/constructs/mcp-endpoint';
import { resourcesUsedBy } from '../../lib/constructs/operation-resources';
import { GATEWAY_PROBLEMS, PROBLEM_CONTENT_TYPE } from '../../lib/constructs/problem-responses';
import { BEARER_HEADER_PATTERN } from '../../lib/constructs/rest-api';
import { SCHEDULED_JOBS } from '../../lib/constructs/schedules';
import { FORBIDDEN_ENVIRONMENT, PROJECT_ROOT, ServiceFunction, functionEntry } from '../../lib/constructs/service-function';
import { TABLE_READ_ACTIONS, TABLE_WRITE_ACTIONS } from '../../lib/constructs/table';
import { buildTestApp } from './synth';

const ops = OPERATIONS as readonly OperationDef[];
/** Publisher, dispatcher, dead-letter consumer and one function per scheduled job. */
const PIPELINE_FUNCTIONS = 3 + SCHEDULED_JOBS.length;
/** Every function of the stack: the operations, the authorizer, the docs function, the MCP function and the pipeline's. */
const FUNCTION_COUNT = ops.length + 3 + PIPELINE_FUNCTIONS;

interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
}
interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, string[]>>;
}

let built: WebhooksApp;
let template: Template;
let resources: Record<string, Resource>;

const logicalId = (element: { node: { defaultChild?: unknown } }) => Stack.of(built.stack).getLogicalId(element.node.defaultChild as CfnElement);
const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
const actionsOf = (s: Statement) => (Array.isArray(s.Action) ? s.Action : [s.Action]);

/** The statements of a function's role policy. */
function statementsOf(fn: ServiceFunction): Statement[] {
  const roleId = logicalId(fn.role);
  return ofType('AWS::IAM::Policy')
    .filter(([, p]) => JSON.stringify(p.Properties.Roles) === JSON.stringify([{ Ref: roleId }]))
    .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
}

/** The DynamoDB statements of a function. */
const dynamoStatements = (fn: ServiceFunction) => statementsOf(fn).filter((s) => actionsOf(s).some((a) => a.startsWith('dynamodb:')));

beforeAll(() => {
  built = buildTestApp();
  // Synthesizes the app, validation plugins (cdk-nag, CloudFormation schema) included.
  template = Template.fromStack(built.stack);
  resources = template.toJSON().Resources as Record<string, Resource>;
}, 120_000);

afterAll(() => {
  if (built) rmSync(built.app.outdir, { recursive: true, force: true });
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

  it('has every GSI of the schema, all attributes projected', () => {
    expect(INDEXES.length).toBeGreaterThanOrEqual(2);
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      GlobalSecondaryIndexes: INDEXES.map((g) => ({
        IndexName: g.name,
        KeySchema: [
          { AttributeName: g.partitionKey, KeyType: 'HASH' },
          { AttributeName: g.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: g.projection },
      })),
    });
  });

  it('is retained when the stack is deleted or the table replaced', () => {
    template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
  });
});

describe('the functions', () => {
  it('are one per operation, the authorizer, the docs function, the MCP function, and the pipeline\'s (publisher, dispatcher, dead letters, three schedules)', () => {
    expect(FUNCTION_COUNT).toBe(ops.length + 9);
    template.resourceCountIs('AWS::Lambda::Function', FUNCTION_COUNT);
    expect(built.stack.node.findAll().filter((c) => c instanceof ServiceFunction)).toHaveLength(FUNCTION_COUNT);
  });

  it('all run ARM64 on the newest Node.js runtime with active tracing and their own log group', () => {
    for (const [id, fn] of ofType('AWS::Lambda::Function')) {
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

  it('give the API functions 256 MB and 10 s; the MCP function and the dispatcher 512 MB and 30 s; each schedule a timeout well under its rate', () => {
    const api = [...built.stack.api.operationFunctions.values(), built.stack.api.authorizerFunction, built.stack.api.docs.handler];
    for (const fn of api) expect(resources[logicalId(fn.function)]!.Properties, fn.node.path).toMatchObject({ MemorySize: 256, Timeout: 10 });
    expect(resources[logicalId(built.stack.mcp.handler.function)]!.Properties).toMatchObject({ MemorySize: 512, Timeout: 30 });
    expect(resources[logicalId(built.stack.pipeline.dispatcher.function)]!.Properties).toMatchObject({ MemorySize: 512, Timeout: 30 });
    for (const job of SCHEDULED_JOBS) {
      const timeout = resources[logicalId(built.stack.schedules.functions.get(job.id)!.function)]!.Properties.Timeout as number;
      expect(timeout, job.id).toBeLessThanOrEqual(job.rate.toSeconds() / 5);
    }
  });

  it('all carry the Powertools environment', () => {
    for (const [id, fn] of ofType('AWS::Lambda::Function')) {
      expect((fn.Properties.Environment as { Variables: object }).Variables, id).toMatchObject({
        POWERTOOLS_SERVICE_NAME: 'webhooks',
        POWERTOOLS_METRICS_NAMESPACE: 'WebhookDelivery',
        POWERTOOLS_LOG_LEVEL: 'INFO',
        NODE_OPTIONS: '--enable-source-maps',
      });
    }
  });

  it('never set ALLOW_LOOPBACK_TARGETS (or any local-only switch) in a deployed function', () => {
    const functions = ofType('AWS::Lambda::Function');
    expect(functions.length).toBeGreaterThan(0);
    for (const [id, fn] of functions) {
      const variables = Object.keys((fn.Properties.Environment as { Variables?: object } | undefined)?.Variables ?? {});
      for (const name of FORBIDDEN_ENVIRONMENT) expect(variables, id).not.toContain(name);
    }
    expect(JSON.stringify(template.toJSON())).not.toContain('ALLOW_LOOPBACK_TARGETS');
  });

  it('refuses to create a function that sets ALLOW_LOOPBACK_TARGETS', () => {
    const stack = new Stack();
    expect(
      () => new ServiceFunction(stack, 'Bad', { entry: functionEntry('authorizer'), environment: { ALLOW_LOOPBACK_TARGETS: 'true' } }),
    ).toThrow(/ALLOW_LOOPBACK_TARGETS .* must never be set/);
  });

  it('give each REST function the table, the rate-limit table and the quotas; the authorizer only the table; docs nothing', () => {
    const tableRef = { Ref: logicalId(built.stack.table.table) };
    for (const def of ops) {
      const fn = built.stack.api.operationFunctions.get(def.operationId)!;
      template.hasResourceProperties('AWS::Lambda::Function', {
        Description: Match.stringLikeRegexp(`^${def.method} `),
        Role: { 'Fn::GetAtt': [logicalId(fn.role), 'Arn'] },
        Environment: { Variables: { TABLE_NAME: tableRef, RATE_LIMIT_TABLE_NAME: tableRef, RATE_LIMITS: JSON.stringify(DEFAULT_QUOTAS) } },
      });
    }
    const authorizer = resources[logicalId(built.stack.api.authorizerFunction.function)]!;
    expect((authorizer.Properties.Environment as { Variables: object }).Variables).toMatchObject({ TABLE_NAME: tableRef });
    expect(Object.keys((authorizer.Properties.Environment as { Variables: object }).Variables)).not.toContain('RATE_LIMITS');
    const docs = resources[logicalId(built.stack.api.docs.handler.function)]!;
    expect(Object.keys((docs.Properties.Environment as { Variables: object }).Variables)).not.toContain('TABLE_NAME');
  });
});

describe('least privilege', () => {
  it('uses no managed policies: each role may write only its own log group', () => {
    for (const [id, role] of ofType('AWS::IAM::Role')) expect(role.Properties.ManagedPolicyArns, id).toBeUndefined();
    for (const [, fn] of ofType('AWS::Lambda::Function')) {
      const roleId = (fn.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
      const logGroupId = (fn.Properties.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;
      const statements = ofType('AWS::IAM::Policy')
        .filter(([, p]) => JSON.stringify(p.Properties.Roles) === JSON.stringify([{ Ref: roleId }]))
        .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
      const logs = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('logs:')));
      expect(logs).toEqual([
        { Effect: 'Allow', Action: ['logs:CreateLogStream', 'logs:PutLogEvents'], Resource: { 'Fn::GetAtt': [logGroupId, 'Arn'] } },
      ]);
    }
  });

  it('has Resource "*" only for the X-Ray actions, which have no resource-level permissions', () => {
    const statements = ofType('AWS::IAM::Policy').flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
    const wildcard = statements.filter((s) => JSON.stringify(s.Resource).includes('*'));
    expect(wildcard.length).toBe(FUNCTION_COUNT);
    for (const s of wildcard) {
      expect(s.Resource).toBe('*');
      expect(actionsOf(s).sort()).toEqual(['xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
    }
  });

  it('never grants Scan or table-level DynamoDB actions', () => {
    const actions = ofType('AWS::IAM::Policy')
      .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement)
      .flatMap(actionsOf)
      .filter((a) => a.startsWith('dynamodb:'));
    expect(new Set(actions)).toEqual(new Set(TABLE_WRITE_ACTIONS));
  });

  it('covers every DynamoDB command the deployed code sends (so a new one fails here, not in production)', () => {
    const actionsOfCommand: Record<string, string[]> = {
      GetCommand: ['dynamodb:GetItem'],
      BatchGetCommand: ['dynamodb:BatchGetItem'],
      QueryCommand: ['dynamodb:Query'],
      PutCommand: ['dynamodb:PutItem'],
      UpdateCommand: ['dynamodb:UpdateItem'],
      DeleteCommand: ['dynamodb:DeleteItem'],
      BatchWriteCommand: ['dynamodb:BatchWriteItem'],
      TransactWriteCommand: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:ConditionCheckItem'],
    };
    const storeDir = join(PROJECT_ROOT, 'lambdas', 'store');
    // create-table.ts only runs against DynamoDB Local (local stack and tests).
    const sources = readdirSync(storeDir)
      .filter((f) => f.endsWith('.ts') && f !== 'create-table.ts')
      .map((f) => readFileSync(join(storeDir, f), 'utf8'));
    const commands = new Set(sources.flatMap((src) => [...src.matchAll(/new (\w+Command)\(/g)].map((m) => m[1]!)));
    expect(commands.size).toBeGreaterThan(0);
    for (const command of commands) {
      expect(Object.keys(actionsOfCommand), `${command} needs a grant in lib/constructs/table.ts`).toContain(command);
      for (const action of actionsOfCommand[command]!) expect(TABLE_WRITE_ACTIONS as readonly string[]).toContain(action);
    }
  });

  it('lets a read-only operation read items and bump only its own rate-limit bucket', () => {
    const reads = ops.filter((d) => d.readOnly);
    expect(reads.length).toBeGreaterThan(0);
    for (const def of reads) {
      const statements = dynamoStatements(built.stack.api.operationFunctions.get(def.operationId)!);
      const [read, counter, ...rest] = statements;
      expect(rest, def.operationId).toEqual([]);
      expect(actionsOf(read!).sort(), def.operationId).toEqual([...TABLE_READ_ACTIONS].sort());
      for (const g of INDEXES) expect(JSON.stringify(read!.Resource)).toContain(`/index/${g.name}"`);
      expect(JSON.stringify(read!.Resource)).not.toContain('*');
      expect(counter, def.operationId).toMatchObject({
        Action: 'dynamodb:UpdateItem',
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`RL#${def.rateLimit}#*`] } },
      });
    }
  });

  it('lets a mutating operation read and write items, and nothing else', () => {
    for (const def of ops.filter((d) => !d.readOnly)) {
      const statements = dynamoStatements(built.stack.api.operationFunctions.get(def.operationId)!);
      expect(statements, def.operationId).toHaveLength(1);
      expect(actionsOf(statements[0]!).sort(), def.operationId).toEqual([...TABLE_WRITE_ACTIONS].sort());
      expect(statements[0]!.Condition).toBeUndefined();
    }
  });

  it('lets the authorizer only get token-hash items; the docs function touches no table', () => {
    expect(dynamoStatements(built.stack.api.authorizerFunction)).toEqual([
      {
        Effect: 'Allow',
        Action: 'dynamodb:GetItem',
        Resource: { 'Fn::GetAtt': [logicalId(built.stack.table.table), 'Arn'] },
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['TOKENHASH#*'] } },
      },
    ]);
    expect(dynamoStatements(built.stack.api.docs.handler)).toEqual([]);
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
    for (const header of ['Bearer whk_abc', 'bearer whk_abc', 'BEARER   whk_abc  ', ' Bearer\twhk_abc', 'Bearer', 'Bearer a b', 'Basic abc', 'whk_abc', '']) {
      expect(pattern.test(header), JSON.stringify(header)).toBe(bearerToken(header) !== null);
    }
  });

  it('has a method per operation, on its contract path, behind the authorizer, invoking its own function', () => {
    const authorizerId = logicalId(built.stack.api.authorizer);
    template.resourceCountIs('AWS::ApiGateway::Method', ops.length + DOCS_PATHS.length);
    for (const def of ops) {
      const method = built.stack.api.operationMethods.get(def.operationId)!;
      expect(method.resource.path).toBe(def.path);
      expect(method.httpMethod).toBe(def.method);
      const functionId = logicalId(built.stack.api.operationFunctions.get(def.operationId)!.function);
      const found = template.findResources('AWS::ApiGateway::Method', {
        Properties: {
          OperationName: def.operationId,
          HttpMethod: def.method,
          AuthorizationType: 'CUSTOM',
          AuthorizerId: { Ref: authorizerId },
          Integration: { Type: 'AWS_PROXY', IntegrationHttpMethod: 'POST' },
        },
      });
      expect(Object.keys(found), def.operationId).toHaveLength(1);
      expect(JSON.stringify(Object.values(found)[0]!.Properties.Integration)).toContain(`"${functionId}"`);
    }
  });

  it('puts the static /webhooks/deliveries beside the /webhooks/{endpointId} parameter', () => {
    const webhooks = built.stack.api.api.root.getResource('workspaces')?.getResource('{slug}')?.getResource('webhooks');
    const deliveries = webhooks?.getResource('deliveries');
    expect(webhooks?.getResource('{endpointId}')).toBeDefined();
    expect(deliveries?.getResource('{deliveryId}')?.getResource('replay')).toBeDefined();
    const children = ofType('AWS::ApiGateway::Resource').filter(([, r]) => JSON.stringify(r.Properties.ParentId) === JSON.stringify({ Ref: logicalId(webhooks!) }));
    expect(children.map(([, r]) => r.Properties.PathPart).sort()).toEqual(['deliveries', '{endpointId}']);
  });

  it('serves /openapi.json, /reference and /reference/{asset} with no authorizer', () => {
    const docsId = logicalId(built.stack.api.docs.handler.function);
    expect(built.stack.api.docs.methods.map((m) => m.resource.path)).toEqual([...DOCS_PATHS]);
    const docsMethods = template.findResources('AWS::ApiGateway::Method', { Properties: { AuthorizationType: 'NONE' } });
    expect(Object.keys(docsMethods)).toHaveLength(DOCS_PATHS.length);
    for (const method of Object.values(docsMethods)) {
      expect(method.Properties).toMatchObject({ HttpMethod: 'GET', Integration: { Type: 'AWS_PROXY' } });
      expect(method.Properties.AuthorizerId).toBeUndefined();
      expect(JSON.stringify(method.Properties.Integration)).toContain(`"${docsId}"`);
    }
  });

  it('routes every operation of the generated OpenAPI document, and nothing it does not list', () => {
    const paths = built.stack.api.docs.document.paths as Record<string, Record<string, unknown>>;
    const documented = Object.entries(paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`));
    const routed = [...built.stack.api.operationMethods.values()].map((m) => `${m.httpMethod} ${m.resource.path}`);
    expect(routed.sort()).toEqual(documented.sort());
  });

  it('gives API Gateway invoke permissions only for the deployed stage, no test-invoke', () => {
    const permissions = ofType('AWS::Lambda::Permission').filter(([, p]) => p.Properties.Principal === 'apigateway.amazonaws.com');
    // One per method and one for the authorizer.
    expect(permissions).toHaveLength(ops.length + DOCS_PATHS.length + 1);
    for (const [id, p] of permissions) expect(JSON.stringify(p.Properties.SourceArn), id).not.toContain('test-invoke-stage');
    // The others: EventBridge invoking the publisher and the scheduled functions, each from its own rule,
    // and the MCP function URL's two public permissions (see 'the MCP endpoint').
    const events = ofType('AWS::Lambda::Permission').filter(([, p]) => p.Properties.Principal === 'events.amazonaws.com');
    expect(events).toHaveLength(1 + SCHEDULED_JOBS.length);
    const functionUrl = ofType('AWS::Lambda::Permission').filter(([, p]) => p.Properties.Principal === '*');
    expect(functionUrl).toHaveLength(2);
    expect(ofType('AWS::Lambda::Permission')).toHaveLength(permissions.length + events.length + functionUrl.length);
  });

  it('logs access as JSON to its own log group, traces, and throttles the stage', () => {
    const stage = ofType('AWS::ApiGateway::Stage');
    expect(stage).toHaveLength(1);
    const props = stage[0]![1].Properties as {
      StageName: string;
      TracingEnabled: boolean;
      AccessLogSetting: { DestinationArn: unknown; Format: string };
      MethodSettings: object[];
    };
    expect(props.StageName).toBe('dev');
    expect(props.TracingEnabled).toBe(true);
    expect(JSON.stringify(props.AccessLogSetting.DestinationArn)).toContain(logicalId(built.stack.api.accessLogs));
    const format = JSON.parse(props.AccessLogSetting.Format) as Record<string, string>;
    expect(format).toMatchObject({ requestId: '$context.requestId', status: '$context.status', principalId: '$context.authorizer.principalId' });
    expect(props.MethodSettings).toContainEqual(
      expect.objectContaining({ HttpMethod: '*', ResourcePath: '/*', ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 }),
    );
    expect(resources[logicalId(built.stack.api.accessLogs)]).toMatchObject({ Properties: { RetentionInDays: 30 }, DeletionPolicy: 'Retain' });
  });

  it('creates no account-level CloudWatch role', () => {
    template.resourceCountIs('AWS::ApiGateway::Account', 0);
  });
});

describe('gateway responses', () => {
  /** The body API Gateway would send, with its variables filled in. */
  function render(bodyTemplate: string): unknown {
    return JSON.parse(bodyTemplate.replaceAll('$context.error.messageString', '"Gateway message"').replaceAll('$context.requestId', 'req-123'));
  }

  it('answer every listed type as problem+json in the shared shape', () => {
    template.resourceCountIs('AWS::ApiGateway::GatewayResponse', GATEWAY_PROBLEMS.length);
    for (const problem of GATEWAY_PROBLEMS) {
      const found = Object.values(template.findResources('AWS::ApiGateway::GatewayResponse', { Properties: { ResponseType: problem.type.responseType } }));
      expect(found, problem.type.responseType).toHaveLength(1);
      const props = found[0]!.Properties as { StatusCode: string; ResponseParameters: Record<string, string>; ResponseTemplates: Record<string, string> };
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
    ['DEFAULT_5XX', '500', 'InternalError'],
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

describe('the delivery pipeline', () => {
  const queueProps = () => resources[logicalId(built.stack.pipeline.queue)]!.Properties;
  const dlqProps = () => resources[logicalId(built.stack.pipeline.deadLetterQueue)]!.Properties;
  const functionProps = (fn: ServiceFunction) => resources[logicalId(fn.function)]!.Properties;

  it('feeds the dispatcher from the delivery queue: batches of 25, 1 s window, at most 4 concurrent, partial batch failures', () => {
    const mappings = template.findResources('AWS::Lambda::EventSourceMapping', {
      Properties: { FunctionName: { Ref: logicalId(built.stack.pipeline.dispatcher.function) } },
    });
    expect(Object.values(mappings)).toHaveLength(1);
    expect(Object.values(mappings)[0]!.Properties).toEqual({
      EventSourceArn: { 'Fn::GetAtt': [logicalId(built.stack.pipeline.queue), 'Arn'] },
      FunctionName: { Ref: logicalId(built.stack.pipeline.dispatcher.function) },
      BatchSize: 25,
      MaximumBatchingWindowInSeconds: 1,
      ScalingConfig: { MaximumConcurrency: 4 },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    // maxConcurrency caps the dispatcher; no reserved concurrency on top.
    expect(functionProps(built.stack.pipeline.dispatcher).ReservedConcurrentExecutions).toBeUndefined();
  });

  it('moves a message to the dead-letter queue after the first attempt and 6 retries (maxReceiveCount 7)', () => {
    expect(MAX_RETRIES).toBe(6);
    expect(queueProps().RedrivePolicy).toEqual({
      deadLetterTargetArn: { 'Fn::GetAtt': [logicalId(built.stack.pipeline.deadLetterQueue), 'Arn'] },
      maxReceiveCount: MAX_RETRIES + 1,
    });
    expect(queueProps().RedrivePolicy).toMatchObject({ maxReceiveCount: 7 });
  });

  it('hides a message in flight for at least six dispatcher timeouts; the timeout covers the request deadline and body read', () => {
    const timeout = functionProps(built.stack.pipeline.dispatcher).Timeout as number;
    expect(timeout * 1000).toBeGreaterThanOrEqual(2 * (SEND_LIMITS.deadlineMs + SEND_LIMITS.bodyReadMs));
    expect(queueProps().VisibilityTimeout as number).toBeGreaterThanOrEqual(6 * timeout);
    // The longest backoff (ChangeMessageVisibility) is within SQS's 12-hour limit and the queue keeps messages far longer than all retries take.
    expect(queueProps().MessageRetentionPeriod as number).toBeGreaterThan(7 * 180);
  });

  it('keeps dead letters 14 days, longer than the delivery queue keeps messages (a moved message keeps its age)', () => {
    expect(dlqProps().MessageRetentionPeriod).toBe(14 * 24 * 3600);
    expect(dlqProps().MessageRetentionPeriod as number).toBeGreaterThan(queueProps().MessageRetentionPeriod as number);
    expect(dlqProps().RedrivePolicy).toBeUndefined();
  });

  it('feeds the dead-letter consumer from the dead-letter queue: batches of 10, partial batch failures', () => {
    const consumer = built.stack.pipeline.deadLetterConsumer;
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [logicalId(built.stack.pipeline.deadLetterQueue), 'Arn'] },
      FunctionName: { Ref: logicalId(consumer.function) },
      BatchSize: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    template.resourceCountIs('AWS::Lambda::EventSourceMapping', 2);
    expect(dlqProps().VisibilityTimeout as number).toBeGreaterThanOrEqual(6 * (functionProps(consumer).Timeout as number));
  });

  it('encrypts every queue and refuses non-TLS access to it', () => {
    const queues = ofType('AWS::SQS::Queue');
    expect(queues).toHaveLength(3);
    for (const [id, queue] of queues) {
      expect(queue.Properties.SqsManagedSseEnabled, id).toBe(true);
      template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: id }],
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Deny', Action: 'sqs:*', Principal: { AWS: '*' }, Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          ]),
        },
      });
    }
  });

  it('hands every event of the bus, the service\'s own included, to the publisher, with retries and a dead-letter queue', () => {
    template.resourceCountIs('AWS::Events::EventBus', 1);
    template.hasResourceProperties('AWS::Events::EventBus', { Name: 'webhooks-dev' });
    const rules = template.findResources('AWS::Events::Rule', { Properties: { EventBusName: { Ref: logicalId(built.stack.pipeline.eventBus) } } });
    expect(Object.values(rules)).toHaveLength(1);
    const rule = Object.values(rules)[0]!.Properties as { EventPattern: Record<string, unknown>; Targets: Record<string, unknown>[] };
    // Only the account is matched (EventBridge needs one field): no source filter, so events with source
    // EVENT_SOURCE (webhook.disabled, webhook.created, ...) reach subscribers like any other.
    expect(rule.EventPattern).toEqual({ account: [{ Ref: 'AWS::AccountId' }] });
    expect(JSON.stringify(rule.EventPattern)).not.toContain(EVENT_SOURCE);
    expect(rule.Targets).toEqual([
      {
        Id: 'Target0',
        Arn: { 'Fn::GetAtt': [logicalId(built.stack.pipeline.publisher.function), 'Arn'] },
        DeadLetterConfig: { Arn: { 'Fn::GetAtt': [logicalId(built.stack.pipeline.publishFailures), 'Arn'] } },
        RetryPolicy: { MaximumRetryAttempts: 10, MaximumEventAgeInSeconds: 7200 },
      },
    ]);
    // The publisher's own failures (after Lambda's asynchronous retries) land in the same queue.
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: logicalId(built.stack.pipeline.publisher.function) },
      MaximumRetryAttempts: 2,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [logicalId(built.stack.pipeline.publishFailures), 'Arn'] } } },
    });
    template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      Queues: [{ Ref: logicalId(built.stack.pipeline.publishFailures) }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Allow',
            Action: 'sqs:SendMessage',
            Principal: { Service: 'events.amazonaws.com' },
            Condition: { ArnEquals: { 'aws:SourceArn': { 'Fn::GetAtt': [Object.keys(rules)[0]!, 'Arn'] } } },
          }),
        ]),
      },
    });
  });

  it('gives the pipeline functions their table, queue and bus by name', () => {
    const tableRef = { Ref: logicalId(built.stack.table.table) };
    const queueUrl = { Ref: logicalId(built.stack.pipeline.queue) };
    const busName = { Ref: logicalId(built.stack.pipeline.eventBus) };
    const variables = (fn: ServiceFunction) => (functionProps(fn).Environment as { Variables: Record<string, unknown> }).Variables;
    expect(variables(built.stack.pipeline.dispatcher)).toMatchObject({ TABLE_NAME: tableRef, DELIVERY_QUEUE_URL: queueUrl, EVENT_BUS_NAME: busName });
    expect(variables(built.stack.pipeline.publisher)).toMatchObject({ TABLE_NAME: tableRef, DELIVERY_QUEUE_URL: queueUrl });
    expect(variables(built.stack.pipeline.deadLetterConsumer)).toMatchObject({ TABLE_NAME: tableRef });
    expect(variables(built.stack.pipeline.deadLetterConsumer).DELIVERY_QUEUE_URL).toBeUndefined();
    for (const fn of [built.stack.pipeline.publisher, built.stack.pipeline.deadLetterConsumer]) expect(variables(fn).EVENT_BUS_NAME).toBeUndefined();
  });

  it('lets the dispatcher consume (incl. ChangeMessageVisibility for the backoff) and the dead-letter consumer consume its queue', () => {
    const consume = ['sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:ReceiveMessage'];
    const sqsOf = (fn: ServiceFunction) => statementsOf(fn).filter((s) => actionsOf(s).some((a) => a.startsWith('sqs:')));
    expect(sqsOf(built.stack.pipeline.dispatcher)).toEqual([
      { Effect: 'Allow', Action: consume, Resource: { 'Fn::GetAtt': [logicalId(built.stack.pipeline.queue), 'Arn'] } },
    ]);
    expect(sqsOf(built.stack.pipeline.deadLetterConsumer)).toEqual([
      { Effect: 'Allow', Action: consume, Resource: { 'Fn::GetAtt': [logicalId(built.stack.pipeline.deadLetterQueue), 'Arn'] } },
    ]);
  });

  it('lets every pipeline function read and write table items', () => {
    const pipeline = [built.stack.pipeline.dispatcher, built.stack.pipeline.deadLetterConsumer, built.stack.pipeline.publisher, ...built.stack.schedules.functions.values()];
    expect(pipeline).toHaveLength(PIPELINE_FUNCTIONS);
    for (const fn of pipeline) {
      const statements = dynamoStatements(fn);
      expect(statements, fn.node.path).toHaveLength(1);
      expect(actionsOf(statements[0]!).sort(), fn.node.path).toEqual([...TABLE_WRITE_ACTIONS].sort());
    }
  });
});

describe('the schedules', () => {
  it.each([
    ['Retention', 'retention', 'rate(1 day)'],
    ['SecretExpiry', 'secret-expiry', 'rate(1 hour)'],
    ['PendingRepair', 'pending-repair', 'rate(5 minutes)'],
  ])('%s runs lambdas/functions/%s.ts at %s, without asynchronous retries', (id, entry, expression) => {
    const fn = built.stack.schedules.functions.get(id)!;
    expect(SCHEDULED_JOBS.find((j) => j.id === id)?.entry).toBe(entry);
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: expression,
      State: 'ENABLED',
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [logicalId(fn.function), 'Arn'] } })],
    });
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', { FunctionName: { Ref: logicalId(fn.function) }, MaximumRetryAttempts: 0 });
  });

  it('are the only rules on the default bus', () => {
    const scheduled = ofType('AWS::Events::Rule').filter(([, r]) => r.Properties.ScheduleExpression !== undefined);
    expect(scheduled).toHaveLength(SCHEDULED_JOBS.length);
    for (const [id, rule] of scheduled) expect(rule.Properties.EventBusName, id).toBeUndefined();
  });

  it('give the stuck-pending repair the delivery queue; the others only the table', () => {
    const queueUrl = { Ref: logicalId(built.stack.pipeline.queue) };
    for (const job of SCHEDULED_JOBS) {
      const fn = built.stack.schedules.functions.get(job.id)!;
      const variables = (resources[logicalId(fn.function)]!.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(variables.TABLE_NAME, job.id).toEqual({ Ref: logicalId(built.stack.table.table) });
      if (job.entry === 'pending-repair') expect(variables.DELIVERY_QUEUE_URL).toEqual(queueUrl);
      else expect(variables.DELIVERY_QUEUE_URL, job.id).toBeUndefined();
    }
  });
});

describe('grants beyond the table', () => {
  /** Every ServiceFunction of the stack, by construct path. */
  const allFunctions = () => built.stack.node.findAll().filter((c): c is ServiceFunction => c instanceof ServiceFunction);
  /** Whether a function may do `action` on the resource of `logical id`. */
  const can = (fn: ServiceFunction, action: string, targetId: string) =>
    statementsOf(fn).some((s) => actionsOf(s).includes(action) && JSON.stringify(s.Resource).includes(`"${targetId}"`));
  const opFunction = (operationId: string) => built.stack.api.operationFunctions.get(operationId)!;
  const variablesOf = (fn: ServiceFunction) => (resources[logicalId(fn.function)]!.Properties.Environment as { Variables: Record<string, unknown> }).Variables;

  it('let exactly the test-send and replay operations (and the MCP function that runs them as tools, the publisher and stuck-pending repair) send delivery messages', () => {
    const senders = ops.filter((d) => d.uses?.includes('deliveryQueue')).map((d) => d.operationId);
    expect(senders.sort()).toEqual(['replayWebhookDelivery', 'sendWebhookTestEvent']);
    const queueId = logicalId(built.stack.pipeline.queue);
    const expected = new Set([
      ...senders.map((id) => opFunction(id)),
      built.stack.mcp.handler,
      built.stack.pipeline.publisher,
      built.stack.schedules.functions.get('PendingRepair')!,
    ]);
    for (const fn of allFunctions()) {
      expect(can(fn, 'sqs:SendMessage', queueId), fn.node.path).toBe(expected.has(fn));
      // Only the ones that send have the queue's URL, except the dispatcher (its backoff is ChangeMessageVisibility).
      const hasUrl = variablesOf(fn).DELIVERY_QUEUE_URL !== undefined;
      expect(hasUrl, fn.node.path).toBe(expected.has(fn) || fn === built.stack.pipeline.dispatcher);
    }
    for (const id of senders) expect(variablesOf(opFunction(id)).DELIVERY_QUEUE_URL).toEqual({ Ref: queueId });
  });

  it('let exactly the operations that use domain events (and the MCP function that runs them, and the dispatcher, for webhook.disabled) put events on the bus', () => {
    const emitters = ops.filter((d) => d.uses?.includes('domainEvents')).map((d) => d.operationId);
    expect(emitters.length).toBeGreaterThan(0);
    const busId = logicalId(built.stack.pipeline.eventBus);
    const expected = new Set([...emitters.map((id) => opFunction(id)), built.stack.mcp.handler, built.stack.pipeline.dispatcher]);
    for (const fn of allFunctions()) {
      expect(can(fn, 'events:PutEvents', busId), fn.node.path).toBe(expected.has(fn));
      expect(variablesOf(fn).EVENT_BUS_NAME !== undefined, fn.node.path).toBe(expected.has(fn));
    }
    for (const id of emitters) expect(variablesOf(opFunction(id)).EVENT_BUS_NAME).toEqual({ Ref: busId });
  });

  it('give no function any other SQS or EventBridge action, nor any on a resource it was not given', () => {
    const sqsEvents = ofType('AWS::IAM::Policy')
      .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement)
      .filter((s) => actionsOf(s).some((a) => a.startsWith('sqs:') || a.startsWith('events:')));
    const allowed = new Set(['sqs:SendMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:ChangeMessageVisibility', 'events:PutEvents']);
    for (const s of sqsEvents) {
      for (const action of actionsOf(s)) expect(allowed, action).toContain(action);
      expect(JSON.stringify(s.Resource)).not.toContain('*');
    }
  });

  it('let no operation without `uses` touch the queue or the bus', () => {
    for (const def of ops.filter((d) => !d.uses?.length)) {
      const statements = statementsOf(opFunction(def.operationId));
      expect(statements.flatMap(actionsOf).filter((a) => a.startsWith('sqs:') || a.startsWith('events:')), def.operationId).toEqual([]);
    }
  });
});

describe('the MCP endpoint', () => {
  const mcpFunction = () => built.stack.mcp.handler;
  const mcpProps = () => resources[logicalId(mcpFunction().function)]!.Properties;
  const mcpVariables = () => (mcpProps().Environment as { Variables: Record<string, unknown> }).Variables;
  const list = (header: string) => header.split(',').map((h) => h.trim());

  it('is one function URL with no AWS auth (the function checks the bearer token), buffered, on the MCP function', () => {
    template.resourceCountIs('AWS::Lambda::Url', 1);
    expect(resources[logicalId(built.stack.mcp.functionUrl)]).toMatchObject({
      Type: 'AWS::Lambda::Url',
      Properties: {
        AuthType: 'NONE',
        InvokeMode: 'BUFFERED',
        TargetFunctionArn: { 'Fn::GetAtt': [logicalId(mcpFunction().function), 'Arn'] },
      },
    });
    // The URL points at the function itself: no alias or version qualifier.
    expect(resources[logicalId(built.stack.mcp.functionUrl)]!.Properties.Qualifier).toBeUndefined();
  });

  it('answers CORS as MCP clients in browsers need: any origin by default, POST, the MCP headers, a 1-hour preflight cache', () => {
    expect(resources[logicalId(built.stack.mcp.functionUrl)]!.Properties.Cors).toEqual({
      AllowOrigins: ['*'],
      AllowMethods: ['POST'],
      AllowHeaders: ['authorization', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'],
      ExposeHeaders: ['mcp-session-id', 'mcp-protocol-version', 'x-trace-id'],
      MaxAge: 3600,
    });
  });

  it("uses the same CORS lists as the function's own OPTIONS answer (lambdas/mcp/gate.ts)", () => {
    expect([...MCP_CORS.allowedHeaders]).toEqual(list(MCP_CORS_HEADERS['access-control-allow-headers']));
    expect([...MCP_CORS.exposedHeaders]).toEqual(list(MCP_CORS_HEADERS['access-control-expose-headers']));
    // The URL answers a preflight itself, so OPTIONS is not a method to allow.
    expect([...MCP_CORS.allowedMethods, 'OPTIONS']).toEqual(list(MCP_CORS_HEADERS['access-control-allow-methods']));
  });

  it('is the only function anyone may invoke, and only through its function URL', () => {
    const fnArn = { 'Fn::GetAtt': [logicalId(mcpFunction().function), 'Arn'] };
    const open = ofType('AWS::Lambda::Permission').filter(([, p]) => p.Properties.Principal === '*');
    expect(open.map(([, p]) => p.Properties).sort((a, b) => String(a.Action).localeCompare(String(b.Action)))).toEqual([
      { Action: 'lambda:InvokeFunction', FunctionName: fnArn, Principal: '*', InvokedViaFunctionUrl: true },
      { Action: 'lambda:InvokeFunctionUrl', FunctionName: fnArn, Principal: '*', FunctionUrlAuthType: 'NONE' },
    ]);
  });

  it('gets the REST environment: the table, the rate-limit table and the quotas (its `mcp` bucket applies)', () => {
    const tableRef = { Ref: logicalId(built.stack.table.table) };
    expect(mcpVariables()).toMatchObject({ TABLE_NAME: tableRef, RATE_LIMIT_TABLE_NAME: tableRef, RATE_LIMITS: JSON.stringify(DEFAULT_QUOTAS) });
    expect(DEFAULT_QUOTAS.mcp).toBeDefined();
    // Nor any local-development switch (ALLOW_LOOPBACK_TARGETS, DYNAMODB_ENDPOINT).
    for (const name of FORBIDDEN_ENVIRONMENT) expect(Object.keys(mcpVariables())).not.toContain(name);
  });

  it('gets every resource the contract\'s operations use, as the REST function of each gets it', () => {
    const used = resourcesUsedBy(ops);
    expect([...used].sort()).toEqual(['deliveryQueue', 'domainEvents']);
    expect(mcpVariables()).toMatchObject({
      DELIVERY_QUEUE_URL: { Ref: logicalId(built.stack.pipeline.queue) },
      EVENT_BUS_NAME: { Ref: logicalId(built.stack.pipeline.eventBus) },
    });
    // Each REST function's resource statements are a subset of the MCP function's.
    const beyondTable = (fn: ServiceFunction) =>
      statementsOf(fn)
        .filter((s) => actionsOf(s).some((a) => a.startsWith('sqs:') || a.startsWith('events:')))
        .map((s) => JSON.stringify(s));
    const mcp = new Set(beyondTable(mcpFunction()));
    expect(mcp.size).toBe(used.size);
    for (const fn of built.stack.api.operationFunctions.values()) for (const s of beyondTable(fn)) expect(mcp, fn.node.path).toContain(s);
    expect(statementsOf(mcpFunction())).toContainEqual({
      Effect: 'Allow',
      Action: ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'],
      Resource: { 'Fn::GetAtt': [logicalId(built.stack.pipeline.queue), 'Arn'] },
    });
    expect(statementsOf(mcpFunction())).toContainEqual({
      Effect: 'Allow',
      Action: 'events:PutEvents',
      Resource: { 'Fn::GetAtt': [logicalId(built.stack.pipeline.eventBus), 'Arn'] },
    });
  });

  it('reads and writes table items (token lookup, the mcp counters, every tool), and nothing else of the table', () => {
    const statements = dynamoStatements(mcpFunction());
    expect(statements).toHaveLength(1);
    expect(actionsOf(statements[0]!).sort()).toEqual([...TABLE_WRITE_ACTIONS].sort());
    expect(statements[0]!.Condition).toBeUndefined();
    for (const g of INDEXES) expect(JSON.stringify(statements[0]!.Resource)).toContain(`/index/${g.name}"`);
  });
});

describe('the alarms', () => {
  const alarmProps = (alarm: { node: { defaultChild?: unknown } }) => resources[logicalId(alarm)]!.Properties;

  it('are four, none with actions when no alarmEmail is configured', () => {
    template.resourceCountIs('AWS::CloudWatch::Alarm', 4);
    template.resourceCountIs('AWS::SNS::Topic', 0);
    for (const [id, alarm] of ofType('AWS::CloudWatch::Alarm')) {
      expect(alarm.Properties.AlarmActions, id).toBeUndefined();
      expect(alarm.Properties, id).toMatchObject({ ComparisonOperator: 'GreaterThanOrEqualToThreshold', TreatMissingData: 'notBreaching' });
      expect((alarm.Properties.AlarmDescription as string).length, id).toBeGreaterThan(40);
    }
  });

  it('fire when dead letters (visible or in flight) stay in the dead-letter queue for 15 minutes', () => {
    const props = alarmProps(built.stack.monitoring.deadLettersAlarm);
    expect(props).toMatchObject({ Threshold: 1, EvaluationPeriods: 15, DatapointsToAlarm: 15 });
    const metrics = props.Metrics as { Id: string; Expression?: string; MetricStat?: { Metric: { MetricName: string; Dimensions: unknown[] }; Period: number } }[];
    expect(metrics.find((m) => m.Expression)?.Expression).toBe('visible + inFlight');
    const stats = metrics.filter((m) => m.MetricStat);
    expect(stats.map((m) => m.MetricStat!.Metric.MetricName).sort()).toEqual(['ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesVisible']);
    for (const m of stats) {
      expect(m.MetricStat!.Period).toBe(60);
      expect(m.MetricStat!.Metric.Dimensions).toEqual([{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(built.stack.pipeline.deadLetterQueue), 'QueueName'] } }]);
    }
  });

  it('fire on any event in the publisher failure queue', () => {
    expect(alarmProps(built.stack.monitoring.publishFailuresAlarm)).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(built.stack.pipeline.publishFailures), 'QueueName'] } }],
      Statistic: 'Maximum',
      Threshold: 1,
    });
  });

  it('fire when the oldest delivery message is 15 minutes old', () => {
    expect(alarmProps(built.stack.monitoring.queueAgeAlarm)).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateAgeOfOldestMessage',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(built.stack.pipeline.queue), 'QueueName'] } }],
      Statistic: 'Maximum',
      Period: 300,
      Threshold: 900,
    });
  });

  it('fire on any dispatcher error in 5 minutes', () => {
    expect(alarmProps(built.stack.monitoring.dispatcherErrorsAlarm)).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: logicalId(built.stack.pipeline.dispatcher.function) } }],
      Statistic: 'Sum',
      Period: 300,
      Threshold: 1,
      EvaluationPeriods: 1,
    });
  });
});

describe('outputs', () => {
  it('are ApiUrl, OpenApiUrl, ReferenceUrl, McpUrl, TableName, EventBusName and DeliveryQueueUrl', () => {
    expect(Object.keys(template.toJSON().Outputs as object).sort()).toEqual(['ApiUrl', 'DeliveryQueueUrl', 'EventBusName', 'McpUrl', 'OpenApiUrl', 'ReferenceUrl', 'TableName']);
    template.hasOutput('McpUrl', { Value: { 'Fn::GetAtt': [logicalId(built.stack.mcp.functionUrl), 'FunctionUrl'] } });
    template.hasOutput('TableName', { Value: { Ref: logicalId(built.stack.table.table) } });
    template.hasOutput('EventBusName', { Value: { Ref: logicalId(built.stack.pipeline.eventBus) } });
    template.hasOutput('DeliveryQueueUrl', { Value: { Ref: logicalId(built.stack.pipeline.queue) } });
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(JSON.stringify(outputs.OpenApiUrl!.Value)).toMatch(/\/openapi\.json"/);
    expect(JSON.stringify(outputs.ReferenceUrl!.Value)).toMatch(/\/reference"/);
  });
});

describe('cdk-nag (AwsSolutions)', () => {
  it('reports no unacknowledged finding, error or warning', () => {
    const report = new AwsSolutionsChecks().validateScope(built.app);
    expect(report.violations.map((v) => `${v.severity} ${v.ruleName} ${v.violatingResources.map((r) => r.constructPath).join(', ')}`)).toEqual([]);
    expect(report.success).toBe(true);
  });

  it('left a clean validation report in the cloud assembly (what `cdk synth` prints)', () => {
    const report = JSON.parse(readFileSync(join(built.app.outdir, 'validation-report.json'), 'utf8')) as { pluginReports: { violations?: unknown[] }[] };
    expect(report.pluginReports.flatMap((r) => r.violations ?? [])).toEqual([]);
  });

  it('has only the reviewed acknowledgements, each with a written reason', () => {
    const acknowledged = new Map<string, string[]>();
    for (const construct of built.app.node.findAll()) {
      for (const entry of construct.node.metadata) {
        if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
        for (const [id, reason] of Object.entries(entry.data as Record<string, string>)) {
          expect(typeof reason === 'string' && reason.length >= 80, `${id} on ${construct.node.path} needs a real reason`).toBe(true);
          const rule = id.replace(/^annotation::/i, '');
          acknowledged.set(rule, [...(acknowledged.get(rule) ?? []), construct.node.path]);
        }
      }
    }
    const stackPath = built.stack.node.path;
    expect(Object.fromEntries([...acknowledged].map(([rule, paths]) => [rule, paths.length]))).toEqual({
      'AwsSolutions-APIG2': 1,
      'AwsSolutions-APIG3': 1,
      'AwsSolutions-APIG4': DOCS_PATHS.length,
      'AwsSolutions-APIG6': 1,
      'AwsSolutions-COG4': 1,
      'AwsSolutions-IAM5[Resource::*]': FUNCTION_COUNT,
      'AwsSolutions-SQS3': 2,
    });
    // SQS3 (no dead-letter queue) only on the two queues that are dead-letter queues themselves.
    expect(acknowledged.get('AwsSolutions-SQS3')!.sort()).toEqual([`${stackPath}/Delivery/DeadLetterQueue`, `${stackPath}/Delivery/PublishFailures`]);
    expect(acknowledged.get('AwsSolutions-APIG4')).toEqual(DOCS_PATHS.map((p) => `${stackPath}/Api/RestApi/Default${p}/GET`));
    // The X-Ray acknowledgement sits on each ServiceFunction, never on the stack or the API.
    for (const path of acknowledged.get('AwsSolutions-IAM5[Resource::*]')!) expect(path.split('/').length).toBeGreaterThan(2);
  });
});
