/**
 * The console endpoint (lib/constructs/console-endpoint.ts) on a bare stack with a REST API,
 * its function really bundled: the two public GET routes, the function, and the console
 * folder built at synth inside the function's asset, served by the bundled handler. The
 * `ConsoleUrl` output and cdk-nag are checked on the whole stack (../webhooks-stack.test.ts).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Validations } from 'aws-cdk-lib';
import { RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Template } from 'aws-cdk-lib/assertions';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP } from '../../../lambdas/http/console';
import type { ConsoleBundle } from '../../../lib/console/console-bundle';
import { CONSOLE_PATHS, ConsoleEndpoint } from '../../../lib/constructs/console-endpoint';
import { SERVICE_RUNTIME } from '../../../lib/constructs/service-function';
import { buildTestStack, removeTestOutput, type TestStack } from '../synth';
import { ENV } from '../../../lambdas/contract/deployment';
import { logicalId, ofType, propertiesOf, variablesOf, type Resource } from '../template';

type Handler = (event: Partial<APIGatewayProxyEvent>) => Promise<APIGatewayProxyResult>;

let built: TestStack;
let api: RestApi;
let endpoint: ConsoleEndpoint;
let bundle: ConsoleBundle;
let template: Template;
let assetDir: string;
const savedTaskRoot = process.env.LAMBDA_TASK_ROOT;

beforeAll(() => {
  built = buildTestStack({ bundle: true });
  api = new RestApi(built.stack, 'Api');
  endpoint = new ConsoleEndpoint(built.stack, 'Console', { api });
  if (!endpoint.bundle) throw new Error('the console was not built although the stack is bundled');
  bundle = endpoint.bundle;
  template = Template.fromStack(built.stack);
  // The function's code is the asset `<hash>.zip`, staged in the cloud assembly as `asset.<hash>/`.
  const code = propertiesOf(template, endpoint.handler.function).Code as { S3Key: string };
  assetDir = join(built.app.outdir, `asset.${code.S3Key.replace(/\.zip$/, '')}`);
}, 120_000);

afterAll(() => {
  if (savedTaskRoot === undefined) delete process.env.LAMBDA_TASK_ROOT;
  else process.env.LAMBDA_TASK_ROOT = savedTaskRoot;
  removeTestOutput(built?.app);
});

/** The template's GET methods on the console's resources, as [logical id, resource]. */
const consoleMethods = (): [string, Resource][] =>
  endpoint.methods.map((m) => [logicalId(m), template.toJSON().Resources[logicalId(m)] as Resource]);

describe('the console routes', () => {
  it('are GET /console and GET /console/{asset}, in that order', () => {
    expect(CONSOLE_PATHS).toEqual(['/console', '/console/{asset}']);
    expect(endpoint.methods.map((m) => `${m.httpMethod} ${m.resource.path}`)).toEqual(['GET /console', 'GET /console/{asset}']);
    expect(api.root.getResource('console')?.getResource('{asset}')).toBeDefined();
    expect(
      ofType(template, 'AWS::ApiGateway::Resource')
        .map(([, r]) => r.Properties.PathPart)
        .sort(),
    ).toEqual(['console', '{asset}']);
  });

  it('need no authorizer and invoke the console function through a Lambda proxy integration', () => {
    const functionId = logicalId(endpoint.handler.function);
    expect(ofType(template, 'AWS::ApiGateway::Method')).toHaveLength(CONSOLE_PATHS.length);
    const names = consoleMethods().map(([id, method]) => {
      expect(method.Properties, id).toMatchObject({
        HttpMethod: 'GET',
        AuthorizationType: 'NONE',
        Integration: { Type: 'AWS_PROXY', IntegrationHttpMethod: 'POST' },
      });
      expect(method.Properties.AuthorizerId, id).toBeUndefined();
      expect(JSON.stringify(method.Properties.Integration), id).toContain(`"${functionId}"`);
      return method.Properties.OperationName;
    });
    expect(names).toEqual(['getConsole', 'getConsoleAsset']);
  });

  it('let API Gateway invoke the function for the deployed stage only, one permission per method', () => {
    const permissions = ofType(template, 'AWS::Lambda::Permission');
    expect(permissions).toHaveLength(CONSOLE_PATHS.length);
    for (const [id, p] of permissions) {
      expect(p.Properties.Principal, id).toBe('apigateway.amazonaws.com');
      expect(JSON.stringify(p.Properties.SourceArn), id).not.toContain('test-invoke-stage');
    }
  });

  it('acknowledge cdk-nag APIG4 (no authorization) on each method, with the reason', () => {
    for (const method of endpoint.methods) {
      const acknowledged = method.node.metadata
        .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
        .flatMap((entry) => Object.entries(entry.data as Record<string, string>))
        // Recorded as `Annotation::<rule>`, as in ../webhooks-stack.test.ts.
        .map(([id, reason]) => [id.replace(/^annotation::/i, ''), reason]);
      expect(
        acknowledged.map(([id]) => id),
        method.node.path,
      ).toEqual(['AwsSolutions-APIG4']);
      expect(acknowledged[0]![1]).toMatch(/no workspace data.*user's token/);
    }
  });
});

describe('the console function', () => {
  it("runs the serve-console entry's handler on the service runtime, with nothing but the common environment", () => {
    const props = propertiesOf(template, endpoint.handler.function);
    expect(props).toMatchObject({
      Handler: 'index.handler',
      Runtime: SERVICE_RUNTIME.name,
      Architectures: ['arm64'],
      MemorySize: 256,
      Timeout: 10,
    });
    const variables = Object.keys((props.Environment as { Variables: object }).Variables);
    for (const name of ['TABLE_NAME', 'CONSOLE_DIR', 'DELIVERY_QUEUE_URL', 'EVENT_BUS_NAME']) expect(variables).not.toContain(name);
    // Its role may write its logs and traces, nothing more.
    const statements = ofType(template, 'AWS::IAM::Policy').flatMap(
      ([, p]) => (p.Properties.PolicyDocument as { Statement: { Action: string | string[] }[] }).Statement,
    );
    expect(statements.flatMap((s) => [s.Action].flat()).sort()).toEqual([
      'logs:CreateLogStream',
      'logs:PutLogEvents',
      'xray:PutTelemetryRecords',
      'xray:PutTraceSegments',
    ]);
  });

  it('ships the console built at synth in its asset: index.html and the hashed script and stylesheet, world-readable', () => {
    expect(existsSync(join(assetDir, 'index.js'))).toBe(true);
    const consoleDir = join(assetDir, 'console');
    expect(statSync(consoleDir).mode & 0o005).toBe(0o005);
    const files = readdirSync(consoleDir).sort();
    expect(files).toEqual(['index.html', bundle.script, bundle.stylesheet].sort());
    expect(bundle.script).toMatch(/^console-[A-Z0-9]+\.js$/i);
    expect(bundle.stylesheet).toMatch(/^console-[A-Z0-9]+\.css$/i);
    for (const file of files) expect(statSync(join(consoleDir, file)).mode & 0o004, file).toBe(0o004);
    const html = readFileSync(join(consoleDir, 'index.html'), 'utf8');
    expect(html).toContain(`src="console/${bundle.script}"`);
    expect(html).toContain(`href="console/${bundle.stylesheet}"`);
  });

  it('serves that folder from $LAMBDA_TASK_ROOT once bundled: the page with its CSP, the assets, and 404 for anything else', async () => {
    // The handler resolves its folder from LAMBDA_TASK_ROOT when it loads, as on Lambda.
    const savedConsoleDir = process.env.CONSOLE_DIR;
    delete process.env.CONSOLE_DIR;
    process.env.LAMBDA_TASK_ROOT = assetDir;
    let handler: Handler;
    try {
      handler = (createRequire(import.meta.url)(join(assetDir, 'index.js')) as { handler: Handler }).handler;
    } finally {
      if (savedConsoleDir !== undefined) process.env.CONSOLE_DIR = savedConsoleDir;
    }
    const get = (path: string) =>
      handler({ path, httpMethod: 'GET', requestContext: { requestId: 'req-1' } as APIGatewayProxyEvent['requestContext'] });

    const page = await get('/console');
    expect(page.statusCode).toBe(200);
    expect(page.headers).toMatchObject({
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': CONSOLE_CSP,
      'cache-control': 'no-cache',
    });
    expect(page.body).toBe(readFileSync(join(assetDir, 'console', 'index.html'), 'utf8'));
    for (const file of [bundle.script, bundle.stylesheet]) {
      const asset = await get(`/console/${file}`);
      expect(asset.statusCode, file).toBe(200);
      expect(asset.headers?.['cache-control'], file).toBe('public, max-age=31536000, immutable');
      expect(asset.body, file).toBe(readFileSync(join(assetDir, 'console', file), 'utf8'));
    }
    const missing = await get('/console/console-NOPE1234.js');
    expect(missing.statusCode).toBe(404);
    expect(JSON.parse(missing.body)).toMatchObject({ tag: 'RouteNotFound', traceId: 'req-1' });
  });

  it("tells the function no framing origin by default, and the stage's consoleFrameAncestors as JSON when there are some", () => {
    expect(variablesOf(template, endpoint.handler)).not.toHaveProperty(ENV.CONSOLE_FRAME_ANCESTORS);
    const bare = buildTestStack();
    try {
      const framed = new ConsoleEndpoint(bare.stack, 'Console', {
        api: new RestApi(bare.stack, 'Api'),
        frameAncestors: ['https://app.example.com', 'http://localhost:5173'],
      });
      expect(variablesOf(Template.fromStack(bare.stack), framed.handler)).toMatchObject({
        [ENV.CONSOLE_FRAME_ANCESTORS]: '["https://app.example.com","http://localhost:5173"]',
      });
    } finally {
      removeTestOutput(bare.app);
    }
  });

  it('is not built when the stack skips bundling (nothing would copy it), with the same routes', () => {
    const bare = buildTestStack();
    try {
      const skipped = new ConsoleEndpoint(bare.stack, 'Console', { api: new RestApi(bare.stack, 'Api') });
      expect(skipped.bundle).toBeUndefined();
      expect(skipped.methods.map((m) => m.resource.path)).toEqual([...CONSOLE_PATHS]);
    } finally {
      removeTestOutput(bare.app);
    }
  });
});
