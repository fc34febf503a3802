/**
 * What only the whole stack of the default stage (cdk.json's context) can
 * show, built once: that every function is a ServiceFunction, least privilege
 * across all roles, the grants beyond the table compared across functions, the
 * outputs, and cdk-nag (AwsSolutions) with its reviewed acknowledgements.
 * Each construct's own properties are tested on a bare stack in
 * ./constructs/<construct>.test.ts. Bundling is skipped here (see
 * docs-bundle.test.ts for a real bundle).
 */
import * as kms from '@aws-sdk/client-kms';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS, routeKind, type OperationDef } from '../../lambdas/contract/operations';
import type { WebhooksApp } from '../../lib/app';
import { CONSOLE_PATHS } from '../../lib/constructs/console-endpoint';
import { DOCS_PATHS } from '../../lib/constructs/docs-endpoint';
import { resourcesUsedBy } from '../../lib/constructs/operation-resources';
import { SCHEDULED_JOBS } from '../../lambdas/domain/scheduled-jobs';
import { LOCAL_ONLY_ENV } from '../../lambdas/contract/deployment';
import { DEFAULT_RECOVERY_JOBS_PER_WORKSPACE } from '../../lambdas/contract/jobs';
import { SQS_MESSAGE_BYTES } from '../../lambdas/contract/aws-limits';
import { PROJECT_ROOT, ServiceFunction } from '../../lib/constructs/service-function';
import { tableGrantOf } from './constructs/table-grant';
import { buildTestApp } from './synth';
import * as read from './template';
import { actionsOf, logicalId, type Resource, type Statement } from './template';

const ops = OPERATIONS as readonly OperationDef[];

/** The item actions the service's DynamoDB requests need (a transaction's items are checked as these); no Scan, no table-level action. */
const ITEM_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:Query',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:ConditionCheckItem',
];
/** Publisher, the two lanes' dispatchers, dead-letter consumer, the recovery job worker, the outbox relay and one function per scheduled job. */
const PIPELINE_FUNCTIONS = 6 + SCHEDULED_JOBS.length;
/** Every function of the stack: the operations, the authorizer, the docs function, the console function, the MCP function and the pipeline's. */
const FUNCTION_COUNT = ops.length + 4 + PIPELINE_FUNCTIONS;

/** CloudFormation's hard limit of resources in one stack. */
const STACK_RESOURCE_LIMIT = 500;
/**
 * The stack's resource budget. A REST operation costs about 5 (function, role, policy, invoke
 * permission, method) plus one per new path segment: the budget trips with room for about ten
 * more, time enough to split the stack or share more before a deploy fails at the limit.
 */
const RESOURCE_BUDGET = 450;

let built: WebhooksApp;
let template: Template;
let resources: Record<string, Resource>;

const ofType = (type: string) => read.ofType(template, type);

/** The statements of a function's role policy. */
const statementsOf = (fn: ServiceFunction): Statement[] => read.statementsOf(template, fn);

/** The DynamoDB statements of a function. */
const dynamoStatements = (fn: ServiceFunction) => read.dynamoStatements(template, fn);

beforeAll(() => {
  built = buildTestApp();
  // Synthesizes the app, validation plugins (cdk-nag, CloudFormation schema) included.
  template = Template.fromStack(built.stack);
  resources = read.resourcesOf(template);
}, 120_000);

afterAll(() => {
  if (built) rmSync(built.app.outdir, { recursive: true, force: true });
});

describe('the functions', () => {
  it("are one per operation, the authorizer, the docs function, the console function, the MCP function, and the pipeline's (publisher, two dispatchers, dead letters, recovery worker, outbox relay, three schedules)", () => {
    expect(FUNCTION_COUNT).toBe(ops.length + 13);
    template.resourceCountIs('AWS::Lambda::Function', FUNCTION_COUNT);
    expect(built.stack.node.findAll().filter((c) => c instanceof ServiceFunction)).toHaveLength(FUNCTION_COUNT);
  });

  it('name their stage in STAGE (the `stage` dimension of the metrics the dashboard and alarms read)', () => {
    const functions = ofType('AWS::Lambda::Function');
    expect(functions).toHaveLength(FUNCTION_COUNT);
    for (const [id, fn] of functions)
      expect((fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables.STAGE, id).toBe('dev');
  });

  it('never set ALLOW_LOOPBACK_TARGETS (or any local-only switch) in a deployed function', () => {
    const functions = ofType('AWS::Lambda::Function');
    expect(functions.length).toBeGreaterThan(0);
    for (const [id, fn] of functions) {
      const variables = Object.keys((fn.Properties.Environment as { Variables?: object } | undefined)?.Variables ?? {});
      for (const name of LOCAL_ONLY_ENV) expect(variables, id).not.toContain(name);
    }
    expect(JSON.stringify(template.toJSON())).not.toContain('ALLOW_LOOPBACK_TARGETS');
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

  it('has Resource "*" only for the X-Ray actions and the outbox relay\'s ListStreams, which have no resource-level permissions', () => {
    const statements = ofType('AWS::IAM::Policy').flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
    const wildcard = statements.filter((s) => JSON.stringify(s.Resource).includes('*'));
    expect(wildcard.length).toBe(FUNCTION_COUNT);
    // The relay's event source lists the streams (Lambda's poller does, with the function's role): IAM merges it into the X-Ray statement.
    const relayWildcard = statementsOf(built.stack.outbox.relay).filter((s) => s.Resource === '*');
    expect(relayWildcard.flatMap(actionsOf).sort()).toEqual(['dynamodb:ListStreams', 'xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
    for (const s of wildcard.filter((w) => !relayWildcard.some((r) => JSON.stringify(r) === JSON.stringify(w)))) {
      expect(s.Resource).toBe('*');
      expect(actionsOf(s).sort()).toEqual(['xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
    }
  });

  it('never grants Scan or table-level DynamoDB actions (the outbox relay reads its stream only)', () => {
    const STREAM_READ = ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator', 'dynamodb:ListStreams'];
    const actions = ofType('AWS::IAM::Policy')
      .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement)
      .flatMap(actionsOf)
      .filter((a) => a.startsWith('dynamodb:'));
    expect(new Set(actions)).toEqual(new Set([...ITEM_ACTIONS, ...STREAM_READ]));
    const relayActions = statementsOf(built.stack.outbox.relay)
      .flatMap(actionsOf)
      .filter((a) => a.startsWith('dynamodb:'));
    expect(new Set(relayActions)).toEqual(new Set(STREAM_READ));
    for (const fn of built.stack.node
      .findAll()
      .filter((c): c is ServiceFunction => c instanceof ServiceFunction && c !== built.stack.outbox.relay))
      expect(
        statementsOf(fn)
          .flatMap(actionsOf)
          .filter((a) => STREAM_READ.includes(a)),
        fn.node.path,
      ).toEqual([]);
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
    const sources = readdirSync(storeDir)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => readFileSync(join(storeDir, f), 'utf8'));
    // The secret sealer's KMS commands are granted by the secrets key (test/lib/constructs/secrets-key.test.ts).
    const commands = new Set(
      sources.flatMap((src) => [...src.matchAll(/new (\w+Command)\(/g)].map((m) => m[1]!)).filter((c) => !(c in kms)),
    );
    expect(commands.size).toBeGreaterThan(0);
    for (const command of commands) {
      expect(Object.keys(actionsOfCommand), `${command} needs a grant in lib/constructs/table.ts`).toContain(command);
      for (const action of actionsOfCommand[command]!) expect(ITEM_ACTIONS).toContain(action);
    }
  });

  it('lets a read-only operation read only what its code reads, and bump only its own rate-limit bucket', () => {
    const reads = ops.filter((d) => d.readOnly);
    expect(reads.length).toBeGreaterThan(0);
    for (const def of reads) {
      const grant = tableGrantOf(template, built.stack.api.operationFunctions.get(def.operationId)!);
      expect(
        grant.items.filter((a) => !['dynamodb:GetItem', 'dynamodb:BatchGetItem'].includes(a)),
        def.operationId,
      ).toEqual([]);
      // A POST also re-reads its caller's token hash (the caller re-check of every change); a workspace
      // route that reads no item of its own reads the workspace item for a staff session (`WS#` partitions only).
      const recheck = def.method === 'GET' ? [] : ['TOKENHASH#*'];
      const workspaceLookup = routeKind(def) !== 'token' || def.workspaceless || grant.items.includes('dynamodb:GetItem') ? [] : ['WS#*'];
      expect(grant.leadingKeys, def.operationId).toEqual([`RL#${def.rateLimit}#*`, ...recheck, ...workspaceLookup].sort());
    }
    const grantOf = (id: string) => tableGrantOf(template, built.stack.api.operationFunctions.get(id)!);
    // A list reads its partition by Query only; the event types are the contract's, no read at all.
    expect(grantOf('listWebhooks')).toMatchObject({ items: [], queries: ['table'] });
    expect(grantOf('listEventTypes')).toMatchObject({ items: [], queries: [] });
    // …but for the workspace item a staff session's call reads first.
    expect(grantOf('listEventTypes').leadingKeys).toContain('WS#*');
    expect(grantOf('listWorkspaces').leadingKeys).not.toContain('WS#*');
    // An index only where a Query on it happens: the log, an endpoint's shards when filtered by endpoint, an event's partition when filtered by event.
    expect(grantOf('listDeliveries')).toMatchObject({
      items: ['dynamodb:BatchGetItem', 'dynamodb:GetItem'],
      queries: ['index/deliveryLog', 'index/eventDeliveries', 'index/gsi2'],
    });
    expect(grantOf('listWebhookDeliveries')).toMatchObject({ queries: ['index/gsi2'] });
    expect(grantOf('getJob')).toMatchObject({ items: ['dynamodb:GetItem'], queries: [] });
  });

  it('lets a mutating operation write only what its code writes, with no condition', () => {
    // These update no item of their own: their UpdateItem is the rate-limit counters' alone, by leading key, checked below.
    const countersOnly = ['platformCreateWorkspace', 'createConsoleNonce', 'createConsoleSession', 'revokeConsoleSession'];
    for (const def of ops.filter((d) => !d.readOnly && !countersOnly.includes(d.operationId))) {
      const grant = tableGrantOf(template, built.stack.api.operationFunctions.get(def.operationId)!);
      expect(grant.leadingKeys, def.operationId).toEqual([]);
      expect(grant.items, def.operationId).toContain('dynamodb:UpdateItem');
      // Idempotency keys: the claim, its answer and its release.
      if (def.idempotent)
        expect(grant.items, def.operationId).toEqual(
          expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:DeleteItem']),
        );
    }
    const grantOf = (id: string) => tableGrantOf(template, built.stack.api.operationFunctions.get(id)!);
    // No operation writes in batches (a deleted endpoint's history goes in the recovery worker's purge job), but
    // the erasure's start, which deletes the workspace's credentials so access ends before it answers;
    // none checks a condition on another item alone.
    expect(ops.filter((d) => grantOf(d.operationId).items.includes('dynamodb:BatchWriteItem')).map((d) => d.operationId)).toEqual([
      'platformDeleteWorkspace',
    ]);
    expect(ops.filter((d) => grantOf(d.operationId).items.includes('dynamodb:ConditionCheckItem'))).toEqual([]);
    expect(grantOf('deleteWebhook').queries).toEqual([]);
    for (const id of countersOnly) {
      expect(grantOf(id).leadingKeys, id).toEqual(['RL#rest_write#*']);
      expect(grantOf(id).items, id).not.toContain('dynamodb:UpdateItem');
    }
    expect(grantOf('createApiToken')).toEqual({
      items: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
      queries: ['table'],
      leadingKeys: [],
    });
    expect(grantOf('rotateWebhookSecret')).toEqual({
      items: ['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
      queries: [],
      leadingKeys: [],
    });
  });

  it('lets the authorizer only get token-hash items; the docs and console functions touch no table', () => {
    expect(dynamoStatements(built.stack.api.authorizerFunction)).toEqual([
      {
        Effect: 'Allow',
        Action: 'dynamodb:GetItem',
        Resource: { 'Fn::GetAtt': [logicalId(built.stack.table.table), 'Arn'] },
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['TOKENHASH#*'] } },
      },
    ]);
    expect(dynamoStatements(built.stack.api.docs.handler)).toEqual([]);
    expect(dynamoStatements(built.stack.api.console.handler)).toEqual([]);
  });

  it('lets API Gateway (each method, the authorizer), EventBridge (each rule) and the MCP function URL invoke functions, nothing else', () => {
    const permissions = ofType('AWS::Lambda::Permission').filter(([, p]) => p.Properties.Principal === 'apigateway.amazonaws.com');
    // One per method and one for the authorizer (each for the deployed stage only: ./constructs/rest-api.test.ts).
    expect(permissions).toHaveLength(ops.length + DOCS_PATHS.length + CONSOLE_PATHS.length + 1);
    // The others: EventBridge invoking the publisher and the scheduled functions, each from its own rule,
    // and the MCP function URL's two public permissions (see the next test).
    const events = ofType('AWS::Lambda::Permission').filter(([, p]) => p.Properties.Principal === 'events.amazonaws.com');
    expect(events).toHaveLength(1 + SCHEDULED_JOBS.length);
    const functionUrl = ofType('AWS::Lambda::Permission').filter(([, p]) => p.Properties.Principal === '*');
    expect(functionUrl).toHaveLength(2);
    expect(ofType('AWS::Lambda::Permission')).toHaveLength(permissions.length + events.length + functionUrl.length);
  });

  it('lets anyone invoke only the MCP function, and only through its function URL', () => {
    const fnArn = { 'Fn::GetAtt': [logicalId(built.stack.mcp.handler.function), 'Arn'] };
    const open = ofType('AWS::Lambda::Permission').filter(([, p]) => p.Properties.Principal === '*');
    expect(open.map(([, p]) => p.Properties).sort((a, b) => String(a.Action).localeCompare(String(b.Action)))).toEqual([
      { Action: 'lambda:InvokeFunction', FunctionName: fnArn, Principal: '*', InvokedViaFunctionUrl: true },
      { Action: 'lambda:InvokeFunctionUrl', FunctionName: fnArn, Principal: '*', FunctionUrlAuthType: 'NONE' },
    ]);
  });
});

describe('the log groups', () => {
  /** The logical id of the log group a function's LoggingConfig names. */
  const groupOf = (fn: ServiceFunction) =>
    (resources[logicalId(fn.function)]!.Properties.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;

  it("are one shared by the REST operations', docs and console functions, and one of its own for every other function (the pipeline's, the authorizer's and MCP's, which the runbook and the alarms read)", () => {
    const functions = built.stack.node.findAll().filter((c): c is ServiceFunction => c instanceof ServiceFunction);
    const { api } = built.stack;
    const routeFunctions = new Set<ServiceFunction>([...api.operationFunctions.values(), api.docs.handler, api.console.handler]);
    const shared = logicalId(api.functionLogs);
    expect(routeFunctions.size).toBe(ops.length + 2);
    for (const fn of routeFunctions) expect(groupOf(fn), fn.node.path).toBe(shared);
    const others = functions.filter((fn) => !routeFunctions.has(fn));
    expect(others).toHaveLength(FUNCTION_COUNT - ops.length - 2);
    for (const fn of others) {
      // Its own: created inside it, and named by no other function.
      expect(groupOf(fn), fn.node.path).toBe(logicalId(fn.node.findChild('Logs')));
      expect(
        functions.filter((f) => groupOf(f) === groupOf(fn)),
        fn.node.path,
      ).toEqual([fn]);
    }
    const { pipeline, mcp } = built.stack;
    for (const watched of [
      pipeline.dispatcher,
      pipeline.slowDispatcher,
      pipeline.publisher,
      pipeline.deadLetterConsumer,
      mcp.handler,
      api.authorizerFunction,
    ])
      expect(others, watched.node.path).toContain(watched);
    // The other functions' groups, the API's access log and the shared group; nothing else logs.
    expect(ofType('AWS::Logs::LogGroup')).toHaveLength(others.length + 2);
  });

  it("keep the stage's retention and removal policy, the shared group too", () => {
    expect(resources[logicalId(built.stack.api.functionLogs)]).toMatchObject({
      Type: 'AWS::Logs::LogGroup',
      Properties: { RetentionInDays: 30 },
      DeletionPolicy: 'Retain',
    });
    for (const [id, group] of ofType('AWS::Logs::LogGroup'))
      expect(group, id).toMatchObject({ Properties: { RetentionInDays: 30 }, DeletionPolicy: 'Retain' });
  });
});

describe('the stack size', () => {
  it(`stays within ${RESOURCE_BUDGET} resources, leaving room under CloudFormation's ${STACK_RESOURCE_LIMIT} before a feature hits it`, () => {
    const counts = new Map<string, number>();
    for (const r of Object.values(resources)) counts.set(r.Type, (counts.get(r.Type) ?? 0) + 1);
    const total = Object.keys(resources).length;
    const byType = [...counts]
      .sort(([, a], [, b]) => b - a)
      .map(([type, n]) => `${n} ${type}`)
      .join(', ');
    expect(
      total,
      `${total} resources, budget ${RESOURCE_BUDGET}, CloudFormation's limit ${STACK_RESOURCE_LIMIT} (docs/deploy.md#bootstrap); by type: ${byType}`,
    ).toBeLessThanOrEqual(RESOURCE_BUDGET);
  });
});

describe('the queues', () => {
  it('each refuse a message over SQS_MESSAGE_BYTES, as the local queues do', () => {
    const queues = ofType('AWS::SQS::Queue');
    expect(queues.length).toBeGreaterThanOrEqual(7);
    for (const [id, q] of queues) expect(q.Properties.MaximumMessageSize, id).toBe(SQS_MESSAGE_BYTES);
  });
});

describe('grants beyond the table', () => {
  /** Every ServiceFunction of the stack, by construct path. */
  const allFunctions = () => built.stack.node.findAll().filter((c): c is ServiceFunction => c instanceof ServiceFunction);
  /** Whether a function may do `action` on the resource of `logical id`. */
  const can = (fn: ServiceFunction, action: string, targetId: string) =>
    statementsOf(fn).some((s) => actionsOf(s).includes(action) && JSON.stringify(s.Resource).includes(`"${targetId}"`));
  const opFunction = (operationId: string) => built.stack.api.operationFunctions.get(operationId)!;
  const variablesOf = (fn: ServiceFunction) =>
    (resources[logicalId(fn.function)]!.Properties.Environment as { Variables: Record<string, unknown> }).Variables;

  it('let exactly the test-send and replay operations (and the MCP function that runs them as tools, the publisher, stuck-pending repair, the recovery worker, the fast-lane dispatcher and the dead-letter consumer) send delivery messages', () => {
    const senders = ops.filter((d) => d.uses?.includes('deliveryQueue')).map((d) => d.operationId);
    expect(senders.sort()).toEqual(['replayWebhookDelivery', 'sendWebhookTestEvent']);
    const queueId = logicalId(built.stack.pipeline.queue);
    const expected = new Set([
      ...senders.map((id) => opFunction(id)),
      built.stack.mcp.handler,
      built.stack.pipeline.publisher,
      built.stack.schedules.functions.get('PendingRepair')!,
      built.stack.recovery.worker,
      // A retry due past the queue's last receive is a new message; a dead letter with retries left goes back.
      built.stack.pipeline.dispatcher,
      built.stack.pipeline.deadLetterConsumer,
    ]);
    for (const fn of allFunctions()) {
      expect(can(fn, 'sqs:SendMessage', queueId), fn.node.path).toBe(expected.has(fn));
      // Exactly the ones that send have the queue's URL.
      const hasUrl = variablesOf(fn).DELIVERY_QUEUE_URL !== undefined;
      expect(hasUrl, fn.node.path).toBe(expected.has(fn));
    }
    for (const id of senders) expect(variablesOf(opFunction(id)).DELIVERY_QUEUE_URL).toEqual({ Ref: queueId });
  });

  it('let exactly the dispatchers (moves, deferrals) send to the slow lane, and only the dispatchers to the dead-letter queue', () => {
    const { pipeline } = built.stack;
    const slowId = logicalId(pipeline.slowQueue);
    const dlqId = logicalId(pipeline.deadLetterQueue);
    for (const fn of allFunctions()) {
      const slowSender = fn === pipeline.dispatcher || fn === pipeline.slowDispatcher;
      expect(can(fn, 'sqs:SendMessage', slowId), fn.node.path).toBe(slowSender);
      expect(variablesOf(fn).SLOW_DELIVERY_QUEUE_URL, fn.node.path).toEqual(slowSender ? { Ref: slowId } : undefined);
      const dispatcher = fn === pipeline.dispatcher || fn === pipeline.slowDispatcher;
      expect(can(fn, 'sqs:SendMessage', dlqId), fn.node.path).toBe(dispatcher);
      expect(variablesOf(fn).DEAD_LETTER_QUEUE_URL, fn.node.path).toEqual(dispatcher ? { Ref: dlqId } : undefined);
      // Only the slow dispatcher consumes the slow lane.
      expect(can(fn, 'sqs:ReceiveMessage', slowId), fn.node.path).toBe(fn === pipeline.slowDispatcher);
    }
  });

  it('let exactly the recover and delete operations (and the MCP function that runs them as tools, and the worker re-enqueuing its job) send job messages', () => {
    const starters = ops.filter((d) => d.uses?.includes('jobQueue')).map((d) => d.operationId);
    // Recovery, an endpoint's purge and a workspace's erasure (the platform API's DELETE).
    expect(starters.sort()).toEqual(['deleteWebhook', 'platformDeleteWorkspace', 'recoverWebhookDeliveries']);
    const queueId = logicalId(built.stack.recovery.queue);
    const expected = new Set([...starters.map((id) => opFunction(id)), built.stack.mcp.handler, built.stack.recovery.worker]);
    for (const fn of allFunctions()) {
      expect(can(fn, 'sqs:SendMessage', queueId), fn.node.path).toBe(expected.has(fn));
      expect(variablesOf(fn).JOB_QUEUE_URL !== undefined, fn.node.path).toBe(expected.has(fn));
      // The job starters learn the stage's cap on running recovery jobs with the queue.
      if (fn !== built.stack.recovery.worker)
        expect(variablesOf(fn).RECOVERY_JOBS_PER_WORKSPACE, fn.node.path).toBe(
          expected.has(fn) ? String(DEFAULT_RECOVERY_JOBS_PER_WORKSPACE) : undefined,
        );
    }
    // Only the worker consumes it; nobody may touch its dead-letter queue.
    const dlqId = logicalId(built.stack.recovery.deadLetterQueue);
    for (const fn of allFunctions()) {
      expect(can(fn, 'sqs:ReceiveMessage', queueId), fn.node.path).toBe(fn === built.stack.recovery.worker);
      expect(
        statementsOf(fn).some((s) => JSON.stringify(s.Resource).includes(`"${dlqId}"`)),
        fn.node.path,
      ).toBe(false);
    }
    expect(variablesOf(built.stack.recovery.worker).RECOVERY_RATE_PER_SECOND).toBe('20');
  });

  it('let exactly the operations that use domain events (and the MCP function that runs them, and the dispatchers, for webhook.disabled) write outbox items, and the relay put them on the bus', () => {
    const emitters = ops.filter((d) => d.uses?.includes('domainEvents')).map((d) => d.operationId);
    expect(emitters.length).toBeGreaterThan(0);
    const outboxId = logicalId(built.stack.outbox.table);
    const busId = logicalId(built.stack.pipeline.eventBus);
    const writers = new Set([
      ...emitters.map((id) => opFunction(id)),
      built.stack.mcp.handler,
      built.stack.pipeline.dispatcher,
      built.stack.pipeline.slowDispatcher,
    ]);
    const { relay } = built.stack.outbox;
    for (const fn of allFunctions()) {
      expect(can(fn, 'dynamodb:PutItem', outboxId), fn.node.path).toBe(writers.has(fn));
      expect(variablesOf(fn).OUTBOX_TABLE_NAME !== undefined, fn.node.path).toBe(writers.has(fn));
      // Only the relay puts on the bus: every other function's events go to the outbox.
      expect(can(fn, 'events:PutEvents', busId), fn.node.path).toBe(fn === relay);
      expect(variablesOf(fn).EVENT_BUS_NAME !== undefined, fn.node.path).toBe(fn === relay);
    }
    for (const id of emitters) expect(variablesOf(opFunction(id)).OUTBOX_TABLE_NAME).toEqual({ Ref: outboxId });
    // Nothing but PutItem on the outbox: a writer never reads, updates or deletes an event.
    for (const fn of writers)
      expect(
        statementsOf(fn)
          .filter((s) => JSON.stringify(s.Resource).includes(outboxId))
          .flatMap(actionsOf),
        fn.node.path,
      ).toEqual(['dynamodb:PutItem']);
  });

  it('give no function any other SQS or EventBridge action, nor any on a resource it was not given', () => {
    const sqsEvents = ofType('AWS::IAM::Policy')
      .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement)
      .filter((s) => actionsOf(s).some((a) => a.startsWith('sqs:') || a.startsWith('events:')));
    const allowed = new Set([
      'sqs:SendMessage',
      'sqs:GetQueueAttributes',
      'sqs:ReceiveMessage',
      'sqs:DeleteMessage',
      'sqs:ChangeMessageVisibility',
      'events:PutEvents',
    ]);
    for (const s of sqsEvents) {
      for (const action of actionsOf(s)) expect(allowed, action).toContain(action);
      expect(JSON.stringify(s.Resource)).not.toContain('*');
    }
  });

  it('let no operation without `uses` touch the queue or the bus', () => {
    for (const def of ops.filter((d) => !d.uses?.length)) {
      const statements = statementsOf(opFunction(def.operationId));
      expect(
        statements.flatMap(actionsOf).filter((a) => a.startsWith('sqs:') || a.startsWith('events:')),
        def.operationId,
      ).toEqual([]);
    }
  });

  it('let only the dispatchers open sealed secrets, and only the functions taking them seal (docs/architecture.md#secrets)', () => {
    const kmsByRole = new Map<string, string[]>();
    for (const [, policy] of ofType('AWS::IAM::Policy')) {
      const actions = (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement.flatMap(actionsOf).filter((a) =>
        a.startsWith('kms:'),
      );
      for (const role of policy.Properties.Roles as { Ref: string }[])
        if (actions.length) kmsByRole.set(role.Ref, [...(kmsByRole.get(role.Ref) ?? []), ...actions]);
    }
    const roleOf = (fn: ServiceFunction) => read.logicalId(fn.role);
    const minting = (OPERATIONS as readonly OperationDef[]).filter((d) => d.uses?.includes('secretSealing')).map((d) => d.operationId);
    // Signing secrets are minted by create and rotate; secret header values and OAuth client secrets are taken by create and update.
    expect(minting.sort()).toEqual(['createWebhook', 'rotateWebhookSecret', 'updateWebhook']);
    expect(Object.fromEntries(kmsByRole)).toEqual({
      [roleOf(built.stack.pipeline.dispatcher)]: ['kms:Decrypt'],
      [roleOf(built.stack.pipeline.slowDispatcher)]: ['kms:Decrypt'],
      [roleOf(built.stack.mcp.handler)]: ['kms:GenerateDataKey'],
      ...Object.fromEntries(minting.map((id) => [roleOf(built.stack.api.operationFunctions.get(id)!), ['kms:GenerateDataKey']])),
    });
    const keys = ofType('AWS::KMS::Key');
    expect(keys).toHaveLength(1);
    expect(keys[0]![1].Properties).toMatchObject({ EnableKeyRotation: true });
  });

  it('give the MCP function every queue and bus statement a REST function gets (its tools run the same operations)', () => {
    // Each grant as (effect, action, resource): IAM merges identical grants on the two queues into one statement.
    const outboxId = logicalId(built.stack.outbox.table);
    const beyondTable = (fn: ServiceFunction) =>
      statementsOf(fn)
        .filter(
          (s) =>
            JSON.stringify(s.Resource).includes(outboxId) ||
            actionsOf(s).some((a) => a.startsWith('sqs:') || a.startsWith('events:') || a.startsWith('kms:')),
        )
        .flatMap((s) => actionsOf(s).flatMap((action) => [s.Resource].flat().map((r) => JSON.stringify([s.Effect, action, r]))));
    const mcp = new Set(beyondTable(built.stack.mcp.handler));
    // One target per used resource that is granted (portal links are an address, the identity provider is
    // reached over HTTPS: neither is a resource).
    const targets = new Set([...mcp].map((g) => JSON.stringify((JSON.parse(g) as unknown[])[2])));
    expect(targets.size).toBe([...resourcesUsedBy(ops)].filter((r) => r !== 'portalLinks' && r !== 'consoleOidc').length);
    // Each REST function's resource grants are a subset of the MCP function's.
    for (const fn of built.stack.api.operationFunctions.values()) for (const g of beyondTable(fn)) expect(mcp, fn.node.path).toContain(g);
  });
});

describe('outputs', () => {
  it('are ApiUrl, OpenApiUrl, ReferenceUrl, ConsoleUrl, McpUrl, TableName, EventBusName, DeliveryQueueUrl, DashboardName, AlarmTopicArn and SecretsKeyArn', () => {
    expect(Object.keys(template.toJSON().Outputs as object).sort()).toEqual([
      'AlarmTopicArn',
      'ApiUrl',
      'ConsoleUrl',
      'DashboardName',
      'DeliveryQueueUrl',
      'EventBusName',
      'McpUrl',
      'OpenApiUrl',
      'PlatformApiUrl',
      'PlatformInvokePolicyArn',
      'ReferenceUrl',
      'SecretsKeyArn',
      'TableName',
    ]);
    template.hasOutput('DashboardName', { Value: { Ref: logicalId(built.stack.dashboard.dashboard) } });
    // Dashboards are global to the account: the region keeps two regions' stages apart.
    template.hasResourceProperties('AWS::CloudWatch::Dashboard', {
      DashboardName: { 'Fn::Join': ['', ['webhooks-dev-', { Ref: 'AWS::Region' }]] },
    });
    template.hasOutput('McpUrl', { Value: { 'Fn::GetAtt': [logicalId(built.stack.mcp.functionUrl), 'FunctionUrl'] } });
    template.hasOutput('TableName', { Value: { Ref: logicalId(built.stack.table.table) } });
    template.hasOutput('EventBusName', { Value: { Ref: logicalId(built.stack.pipeline.eventBus) } });
    template.hasOutput('DeliveryQueueUrl', { Value: { Ref: logicalId(built.stack.pipeline.queue) } });
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown; Description: string }>;
    expect(JSON.stringify(outputs.OpenApiUrl!.Value)).toMatch(/\/openapi\.json"/);
    expect(JSON.stringify(outputs.ReferenceUrl!.Value)).toMatch(/\/reference"/);
  });

  it('name the alarm topic (for a pager) and the secrets key (kept with the table), saying what each is for', () => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown; Description: string }>;
    template.hasOutput('AlarmTopicArn', { Value: { Ref: logicalId(built.stack.monitoring.topic) } });
    expect(outputs.AlarmTopicArn!.Description).toMatch(/every alarm notifies.*subscribe a pager/i);
    template.hasOutput('SecretsKeyArn', { Value: { 'Fn::GetAtt': [logicalId(built.stack.secretsKey.key), 'Arn'] } });
    expect(outputs.SecretsKeyArn!.Description).toMatch(/KMS key sealing endpoint signing secrets.*table is unreadable without it/);
  });

  it('give the console as ConsoleUrl: the stage URL (ApiUrl) followed by `console`', () => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: { 'Fn::Join': [string, unknown[]] }; Description?: string }>;
    const api = outputs.ApiUrl!.Value['Fn::Join'];
    const consoleUrl = outputs.ConsoleUrl!.Value['Fn::Join'];
    expect(consoleUrl[0]).toBe(api[0]);
    // The stage URL ends with '/', so the console is `<stage URL>console`, served by GET /console.
    expect(consoleUrl[1]).toEqual([...api[1].slice(0, -1), `${String(api[1].at(-1))}console`]);
    expect(String(api[1].at(-1))).toMatch(/\/$/);
    expect(outputs.ConsoleUrl!.Description).toMatch(/console/i);
  });
});

describe('cdk-nag (AwsSolutions)', () => {
  it('reports no unacknowledged finding, error or warning', () => {
    const report = new AwsSolutionsChecks().validateScope(built.app);
    expect(
      report.violations.map((v) => `${v.severity} ${v.ruleName} ${v.violatingResources.map((r) => r.constructPath).join(', ')}`),
    ).toEqual([]);
    expect(report.success).toBe(true);
  });

  it('left a clean validation report in the cloud assembly (what `cdk synth` prints)', () => {
    const report = JSON.parse(readFileSync(join(built.app.outdir, 'validation-report.json'), 'utf8')) as {
      pluginReports: { violations?: unknown[] }[];
    };
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
    // The platform invoke policy's routes with a path parameter, one acknowledgement each, on that policy alone.
    const platformRoutes = [...acknowledged].filter(([rule]) =>
      rule.startsWith('AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:execute-api:'),
    );
    expect(platformRoutes.length).toBeGreaterThan(0);
    for (const [rule, paths] of platformRoutes) {
      expect(rule).toMatch(/\/platform\//);
      expect(paths).toEqual([`${stackPath}/Api/PlatformInvokePolicy`]);
      acknowledged.delete(rule);
    }
    expect(Object.fromEntries([...acknowledged].map(([rule, paths]) => [rule, paths.length]))).toEqual({
      'AwsSolutions-APIG2': 1,
      'AwsSolutions-APIG3': 1,
      // The docs and console routes, and the contract's public routes (the portal link's exchange).
      'AwsSolutions-APIG4': DOCS_PATHS.length + CONSOLE_PATHS.length + ops.filter((d) => d.auth === 'public').length,
      'AwsSolutions-APIG6': 1,
      'AwsSolutions-COG4': 1,
      'AwsSolutions-IAM5[Resource::*]': FUNCTION_COUNT,
      'AwsSolutions-SQS3': 4,
    });
    // SQS3 (no dead-letter queue) only on the four queues that are dead-letter or on-failure queues themselves.
    expect(acknowledged.get('AwsSolutions-SQS3')!.sort()).toEqual([
      `${stackPath}/Delivery/DeadLetterQueue`,
      `${stackPath}/Delivery/PublishFailures`,
      `${stackPath}/Outbox/RelayFailures`,
      `${stackPath}/Recovery/DeadLetterQueue`,
    ]);
    expect(acknowledged.get('AwsSolutions-APIG4')!.sort()).toEqual(
      [
        ...[...DOCS_PATHS, ...CONSOLE_PATHS].map((p) => `${stackPath}/Api/RestApi/Default${p}/GET`),
        ...ops.filter((d) => d.auth === 'public').map((d) => `${stackPath}/Api/RestApi/Default${d.path}/${d.method}`),
      ].sort(),
    );
    // The X-Ray acknowledgement sits on each ServiceFunction, never on the stack or the API.
    for (const path of acknowledged.get('AwsSolutions-IAM5[Resource::*]')!) expect(path.split('/').length).toBeGreaterThan(2);
  });
});
