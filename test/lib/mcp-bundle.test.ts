/**
 * A real esbuild bundle of the MCP function: the MCP SDK and the AWS SDK v3 (but for what it
 * leaves out, docs/scaling.md#the-aws-sdk-in-the-bundles) are bundled in, and the bundled handler
 * loads and answers function URL events (payload format 2.0) the way the URL
 * delivers them, up to the point where it would need AWS.
 */
import { builtinModules, createRequire } from 'node:module';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, AssetStaging, Stack } from 'aws-cdk-lib';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_CORS_HEADERS } from '../../lambdas/mcp/gate';
import { functionEntry, ServiceFunction } from '../../lib/constructs/service-function';
import { cdkJsonContext } from './synth';

type Handler = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;

/** What the handler reads from its environment when it builds its runtime (nothing here reaches AWS). */
const ENVIRONMENT = { TABLE_NAME: 'webhooks-test', AWS_REGION: 'eu-west-1' } as const;

let outdir: string;
let assetDir: string;
let code: string;
let externals: readonly string[];
let handler: Handler;
const saved = new Map<string, string | undefined>();

beforeAll(() => {
  outdir = mkdtempSync(join(tmpdir(), 'webhooks-mcp-bundle-'));
  const app = new App({ outdir, context: cdkJsonContext() });
  const stack = new Stack(app, 'McpBundle');
  const fn = new ServiceFunction(stack, 'Mcp', { entry: functionEntry('mcp') });
  externals = fn.externalModules;
  assetDir = fn.node.findAll().find((c): c is AssetStaging => c instanceof AssetStaging)!.absoluteStagedPath;
  code = readFileSync(join(assetDir, 'index.js'), 'utf8');
  // Outside the project (whose package.json says "type": "module"), the bundle loads as
  // CommonJS, as on Lambda; nothing it loads comes from node_modules.
  for (const [name, value] of Object.entries(ENVIRONMENT)) {
    saved.set(name, process.env[name]);
    process.env[name] = value;
  }
  handler = (createRequire(import.meta.url)(join(assetDir, 'index.js')) as { handler: Handler }).handler;
}, 120_000);

afterAll(() => {
  for (const [name, value] of saved) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  if (outdir) rmSync(outdir, { recursive: true, force: true });
});

/** A function URL event (payload format 2.0). */
function event(method: string, headers: Record<string, string> = {}, body?: string): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: '/',
    rawQueryString: '',
    headers: { host: 'abc.lambda-url.eu-west-1.on.aws', ...headers },
    requestContext: {
      requestId: 'req-mcp-1',
      domainName: 'abc.lambda-url.eu-west-1.on.aws',
      http: { method, path: '/', protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: 'test' },
    } as APIGatewayProxyEventV2['requestContext'],
    body,
    isBase64Encoded: false,
  };
}

/** The modules a minified CommonJS bundle requires (see pipeline-bundle.test.ts for the ajv caveat). */
function requiredModules(source: string): Set<string> {
  return new Set([...source.matchAll(/(?<!['"`])require\("([^"]+)"\)/g)].map((m) => m[1]!));
}

describe('the MCP bundle', () => {
  it('bundles the MCP SDK rather than leaving it external', () => {
    const map = JSON.parse(readFileSync(join(assetDir, 'index.js.map'), 'utf8')) as { sources: string[] };
    expect(map.sources.some((s) => s.includes('node_modules/@modelcontextprotocol/sdk/'))).toBe(true);
    expect(map.sources.some((s) => s.endsWith('lambdas/functions/mcp.ts'))).toBe(true);
    expect(code).not.toMatch(/require\("@modelcontextprotocol\//);
  });

  it('carries the AWS SDK, and requires only Node.js built-ins and the modules it leaves out', () => {
    const builtins = new Set(builtinModules);
    const modules = [...requiredModules(code)];
    expect(modules.length).toBeGreaterThan(0);
    expect(modules).not.toContain('@aws-sdk/client-dynamodb');
    for (const name of modules) {
      const ok = name.startsWith('node:') || builtins.has(name) || externals.includes(name) || name.startsWith('@aws-sdk/nested-clients/');
      expect(ok, `the MCP bundle requires ${name}, which it does not leave out`).toBe(true);
    }
  });

  it('is CommonJS, with no import.meta, and of a size a Lambda loads quickly', () => {
    expect(code).not.toContain('import.meta');
    expect(code).not.toMatch(/^export /m);
    // About 1 MB today; several MB would mean something large got pulled in by accident.
    expect(statSync(join(assetDir, 'index.js')).size).toBeLessThan(3 * 1024 * 1024);
  });

  it('answers a preflight with the CORS headers', async () => {
    const res = await handler(event('OPTIONS', { origin: 'https://app.example.com', 'access-control-request-method': 'POST' }));
    expect(res.statusCode).toBe(204);
    expect(res.headers).toMatchObject(MCP_CORS_HEADERS);
  });

  it.each(['GET', 'DELETE'])('refuses %s with 405 (stateless: no event stream, no session)', async (method) => {
    const res = await handler(event(method, { accept: 'text/event-stream' }));
    expect(res.statusCode).toBe(405);
    expect(res.headers).toMatchObject({ 'content-type': 'application/problem+json', allow: 'POST, OPTIONS', 'x-trace-id': 'req-mcp-1' });
    expect(JSON.parse(res.body!)).toMatchObject({ tag: 'MethodNotAllowed', traceId: 'req-mcp-1' });
  });

  it('refuses a POST without a bearer token with 401, before any tool runs', async () => {
    const res = await handler(
      event(
        'POST',
        { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      ),
    );
    expect(res.statusCode).toBe(401);
    expect(res.headers).toMatchObject({ 'www-authenticate': 'Bearer', 'content-type': 'application/problem+json' });
    expect(JSON.parse(res.body!)).toMatchObject({ tag: 'Unauthorized', traceId: 'req-mcp-1' });
  });
});
