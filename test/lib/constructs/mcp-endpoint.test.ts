/**
 * The MCP endpoint (lib/constructs/mcp-endpoint.ts) on a bare stack with the
 * siblings it is given (the table, a delivery queue, a bus): its function and
 * function URL, and the grants and environment it derives from the contract.
 * That it gets what each REST function gets, and that it is the only function
 * anyone may invoke, needs the whole stack: ../webhooks-stack.test.ts.
 */
import { SecretsKey } from '../../../lib/constructs/secrets-key';
import { Template } from 'aws-cdk-lib/assertions';
import { EventBus } from 'aws-cdk-lib/aws-events';
import { Outbox } from '../../../lib/constructs/outbox';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS, TOKEN_OPERATIONS, type OperationDef } from '../../../lambdas/contract/operations';
import { DEFAULT_QUOTAS } from '../../../lambdas/contract/rate-limits';
import { DEFAULT_WORKSPACE_LIMITS } from '../../../lambdas/contract/limits';
import { LOCAL_ONLY_ENV, MCP_CORS } from '../../../lambdas/contract/deployment';
import { MCP_CORS_HEADERS } from '../../../lambdas/mcp/gate';
import { McpEndpoint } from '../../../lib/constructs/mcp-endpoint';
import { resourcesUsedBy } from '../../../lib/constructs/operation-resources';
import type { ServiceFunction } from '../../../lib/constructs/service-function';
import { ServiceTable } from '../../../lib/constructs/table';
import { tableGrantOf } from './table-grant';
import { buildTestStack, removeTestOutput, type TestStack } from '../synth';
import { actionsOf, logicalId, resourcesOf, statementsOf, type Resource } from '../template';

const ops = OPERATIONS as readonly OperationDef[];

let built: TestStack;
let table: ServiceTable;
let queue: Queue;
let outbox: Outbox;
let jobQueue: Queue;
let mcp: McpEndpoint;
let template: Template;
let resources: Record<string, Resource>;

beforeAll(() => {
  built = buildTestStack();
  table = new ServiceTable(built.stack, 'Data');
  queue = new Queue(built.stack, 'DeliveryQueue');
  outbox = new Outbox(built.stack, 'Outbox', { eventBus: new EventBus(built.stack, 'EventBus'), stage: 'test' });
  jobQueue = new Queue(built.stack, 'JobQueue');
  mcp = new McpEndpoint(built.stack, 'Mcp', {
    table,
    deliveryQueue: queue,
    outbox,
    jobQueue,
    secretsKey: new SecretsKey(built.stack, 'Secrets'),
    portalLinks: { consoleUrl: 'https://console.example.test/', frameAncestors: [] },
  });
  template = Template.fromStack(built.stack);
  resources = resourcesOf(template);
}, 120_000);

afterAll(() => removeTestOutput(built?.app));

describe('the MCP endpoint', () => {
  const mcpFunction = () => mcp.handler;
  const mcpProps = () => resources[logicalId(mcpFunction().function)]!.Properties;
  const mcpVariables = () => (mcpProps().Environment as { Variables: Record<string, unknown> }).Variables;
  const list = (header: string) => header.split(',').map((h) => h.trim());

  it('gives the MCP function 512 MB and 30 s', () => {
    expect(mcpProps()).toMatchObject({ MemorySize: 512, Timeout: 30 });
  });

  it('is one function URL with no AWS auth (the function checks the bearer token), buffered, on the MCP function', () => {
    template.resourceCountIs('AWS::Lambda::Url', 1);
    expect(resources[logicalId(mcp.functionUrl)]).toMatchObject({
      Type: 'AWS::Lambda::Url',
      Properties: {
        AuthType: 'NONE',
        InvokeMode: 'BUFFERED',
        TargetFunctionArn: { 'Fn::GetAtt': [logicalId(mcpFunction().function), 'Arn'] },
      },
    });
    // The URL points at the function itself: no alias or version qualifier.
    expect(resources[logicalId(mcp.functionUrl)]!.Properties.Qualifier).toBeUndefined();
  });

  it('gives the public function reserved concurrency (10 by default), so a flood is throttled, not billed', () => {
    expect(mcpProps().ReservedConcurrentExecutions).toBe(10);
  });

  it('takes another reservation, or none (null), any origin when asked (["*"]), and other workspace limits', () => {
    const other = buildTestStack();
    try {
      const t = new ServiceTable(other.stack, 'Data');
      const siblings = {
        table: t,
        deliveryQueue: new Queue(other.stack, 'Q'),
        outbox: new Outbox(other.stack, 'OutboxB', { eventBus: new EventBus(other.stack, 'B'), stage: 'test' }),
        jobQueue: new Queue(other.stack, 'J'),
        secretsKey: new SecretsKey(other.stack, 'K'),
        portalLinks: { consoleUrl: 'https://console.example.test/', frameAncestors: [] },
      };
      const five = new McpEndpoint(other.stack, 'Five', {
        ...siblings,
        reservedConcurrency: 5,
        allowedOrigins: ['*'],
        workspaceLimits: { ...DEFAULT_WORKSPACE_LIMITS, endpoints: 7 },
      });
      const none = new McpEndpoint(other.stack, 'None', { ...siblings, reservedConcurrency: null });
      const all = resourcesOf(Template.fromStack(other.stack));
      expect(all[logicalId(five.handler.function)]!.Properties.ReservedConcurrentExecutions).toBe(5);
      expect(all[logicalId(none.handler.function)]!.Properties).not.toHaveProperty('ReservedConcurrentExecutions');
      expect(all[logicalId(five.functionUrl)]!.Properties.Cors).toMatchObject({ AllowOrigins: ['*'], AllowMethods: ['POST'] });
      expect(all[logicalId(none.functionUrl)]!.Properties.Cors).not.toHaveProperty('AllowOrigins');
      const variables = (f: typeof five) =>
        (all[logicalId(f.handler.function)]!.Properties.Environment as { Variables: Record<string, string> }).Variables;
      expect(JSON.parse(variables(five).WORKSPACE_LIMITS!)).toEqual({ ...DEFAULT_WORKSPACE_LIMITS, endpoints: 7 });
      expect(JSON.parse(variables(none).WORKSPACE_LIMITS!)).toEqual(DEFAULT_WORKSPACE_LIMITS);
    } finally {
      removeTestOutput(other.app);
    }
  }, 120_000);

  it('allows no browser origin by default (no AllowOrigins: CloudFormation takes no empty list), POST, the MCP headers, a 1-hour preflight cache', () => {
    expect(MCP_CORS.defaultAllowedOrigins).toEqual([]);
    expect(resources[logicalId(mcp.functionUrl)]!.Properties.Cors).toEqual({
      AllowMethods: ['POST'],
      AllowHeaders: ['authorization', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'],
      ExposeHeaders: ['mcp-session-id', 'mcp-protocol-version', 'x-trace-id'],
      MaxAge: 3600,
    });
  });

  it("deploys the same CORS lists as the function's own OPTIONS answer (lambdas/mcp/gate.ts)", () => {
    const cors = resources[logicalId(mcp.functionUrl)]!.Properties.Cors as {
      AllowHeaders: string[];
      ExposeHeaders: string[];
      AllowMethods: string[];
      MaxAge: number;
    };
    expect(cors.AllowHeaders).toEqual(list(MCP_CORS_HEADERS['access-control-allow-headers']));
    expect(cors.ExposeHeaders).toEqual(list(MCP_CORS_HEADERS['access-control-expose-headers']));
    // The URL answers a preflight itself, so OPTIONS is not a method to allow.
    expect([...cors.AllowMethods, 'OPTIONS']).toEqual(list(MCP_CORS_HEADERS['access-control-allow-methods']));
    expect(cors.MaxAge).toBe(Number(MCP_CORS_HEADERS['access-control-max-age']));
  });

  it('gets the REST environment: the table, the rate-limit table, the quotas (its `mcp` bucket applies) and the workspace limits', () => {
    const tableRef = { Ref: logicalId(table.table) };
    expect(mcpVariables()).toMatchObject({
      TABLE_NAME: tableRef,
      RATE_LIMIT_TABLE_NAME: tableRef,
      RATE_LIMITS: JSON.stringify(DEFAULT_QUOTAS),
      WORKSPACE_LIMITS: JSON.stringify(DEFAULT_WORKSPACE_LIMITS),
    });
    expect(DEFAULT_QUOTAS.mcp).toBeDefined();
    // Nor any local-development switch (ALLOW_LOOPBACK_TARGETS, DYNAMODB_ENDPOINT).
    for (const name of LOCAL_ONLY_ENV) expect(Object.keys(mcpVariables())).not.toContain(name);
  });

  it("gets every resource the contract's operations use", () => {
    const used = resourcesUsedBy(ops);
    expect([...used].sort()).toEqual(['consoleOidc', 'deliveryQueue', 'domainEvents', 'jobQueue', 'portalLinks', 'secretSealing']);
    // Staff sign-in is a public route's, never a tool's: the MCP function does not carry the setting.
    expect(resourcesUsedBy(TOKEN_OPERATIONS)).not.toContain('consoleOidc');
    expect(mcpVariables()).not.toHaveProperty('CONSOLE_OIDC');
    // Its create_portal_session tool mints links to the console: an address, no grant.
    expect(mcpVariables()).toMatchObject({
      CONSOLE_URL: 'https://console.example.test/',
      DELIVERY_QUEUE_URL: { Ref: logicalId(queue) },
      OUTBOX_TABLE_NAME: { Ref: logicalId(outbox.table) },
      JOB_QUEUE_URL: { Ref: logicalId(jobQueue) },
    });
    const onOutbox = (s: { Resource: unknown }) => JSON.stringify(s.Resource).includes(logicalId(outbox.table));
    const beyondTable = (fn: ServiceFunction) =>
      statementsOf(template, fn)
        .filter((s) => onOutbox(s) || actionsOf(s).some((a) => a.startsWith('sqs:') || a.startsWith('events:') || a.startsWith('kms:')))
        .map((s) => JSON.stringify(s));
    // Its rotate and create tools mint secrets: seal only, never open (docs/architecture.md#secrets).
    const kms = statementsOf(template, mcpFunction()).filter((s) => actionsOf(s).some((a) => a.startsWith('kms:')));
    expect(kms.flatMap(actionsOf)).toEqual(['kms:GenerateDataKey']);
    // One target per used resource (IAM merges the two queues' identical send grants into one statement).
    const targets = new Set(
      beyondTable(mcpFunction()).flatMap((s) => [(JSON.parse(s) as { Resource: unknown }).Resource].flat().map((r) => JSON.stringify(r))),
    );
    // Less the two that grant nothing: portal links (an address) and staff sign-in (no tool uses it).
    expect(targets.size).toBe(used.size - 2);
    // The delivery queue (test sends, replays) and the jobs queue (recover_webhook_deliveries starts a job): exactly the send grant.
    expect(statementsOf(template, mcpFunction())).toContainEqual({
      Effect: 'Allow',
      Action: 'sqs:SendMessage',
      Resource: [{ 'Fn::GetAtt': [logicalId(queue), 'Arn'] }, { 'Fn::GetAtt': [logicalId(jobQueue), 'Arn'] }],
    });
    // Domain events: written to the outbox in the tools' transactions, never put on the bus.
    expect(statementsOf(template, mcpFunction())).toContainEqual({
      Effect: 'Allow',
      Action: 'dynamodb:PutItem',
      Resource: { 'Fn::GetAtt': [logicalId(outbox.table), 'Arn'] },
    });
    expect(statementsOf(template, mcpFunction()).flatMap(actionsOf)).not.toContain('events:PutEvents');
  });

  it("does to the table what its tools' operations do, plus the token lookup, and nothing else", () => {
    // The union of the operations' access (lib/constructs/function-access.ts): no tool scans, none checks a condition on another item alone.
    expect(tableGrantOf(template, mcpFunction())).toEqual({
      items: ['dynamodb:BatchGetItem', 'dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
      // The repair index (gsi3) is the schedules' alone.
      // gsi1: the workspace registry, which list_workspaces reads for a staff session.
      queries: ['index/deliveryLog', 'index/eventDeliveries', 'index/gsi1', 'index/gsi2', 'table'],
      leadingKeys: ['TOKENHASH#*'],
    });
  });
});
