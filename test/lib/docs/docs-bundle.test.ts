/**
 * A real esbuild bundle of the docs function (the only one whose bundle holds
 * more than code): the generated docs folder lands next to `index.js`,
 * readable, and the bundled handler serves it as API Gateway would call it.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { RestApi } from 'aws-cdk-lib/aws-apigateway';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../../lambdas/contract/operations';
import { REFERENCE_ASSETS } from '../../../lambdas/http/docs';
import { DocsEndpoint } from '../../../lib/constructs/docs-endpoint';
import { cdkJsonContext } from '../synth';

type Handler = (event: Partial<APIGatewayProxyEvent>) => Promise<APIGatewayProxyResult>;

let outdir: string;
let assetDir: string;
let handler: Handler;
const savedTaskRoot = process.env.LAMBDA_TASK_ROOT;

beforeAll(() => {
  outdir = mkdtempSync(join(tmpdir(), 'webhooks-docs-test-'));
  const app = new App({ outdir, context: cdkJsonContext() });
  const stack = new Stack(app, 'DocsOnly');
  new DocsEndpoint(stack, 'Docs', { api: new RestApi(stack, 'Api') });
  // Bundling stages the asset into the app's output directory while the function is built.
  const assets = readdirSync(outdir).filter((name) => name.startsWith('asset.'));
  expect(assets).toHaveLength(1);
  assetDir = join(outdir, assets[0]!);
  // The handler resolves its docs folder from LAMBDA_TASK_ROOT when it loads, as on Lambda.
  process.env.LAMBDA_TASK_ROOT = assetDir;
  handler = (createRequire(import.meta.url)(join(assetDir, 'index.js')) as { handler: Handler }).handler;
}, 120_000);

afterAll(() => {
  if (savedTaskRoot === undefined) delete process.env.LAMBDA_TASK_ROOT;
  else process.env.LAMBDA_TASK_ROOT = savedTaskRoot;
  if (outdir) rmSync(outdir, { recursive: true, force: true });
});

const get = (path: string) =>
  handler({ path, httpMethod: 'GET', requestContext: { requestId: 'req-1' } as APIGatewayProxyEvent['requestContext'] });

describe('the docs bundle', () => {
  it('holds index.js, its source map and a world-readable docs folder', () => {
    expect(existsSync(join(assetDir, 'index.js'))).toBe(true);
    expect(existsSync(join(assetDir, 'index.js.map'))).toBe(true);
    const docsDir = join(assetDir, 'docs');
    expect(statSync(docsDir).mode & 0o005).toBe(0o005);
    for (const file of ['openapi.json', ...Object.keys(REFERENCE_ASSETS)]) {
      expect(statSync(join(docsDir, file)).mode & 0o004, file).toBe(0o004);
    }
  });

  it('bundles no build-time code (the generator stays out of the Lambda)', () => {
    const code = readFileSync(join(assetDir, 'index.js'), 'utf8');
    expect(code).not.toContain('import.meta');
    expect(code).not.toContain('OpenApiGeneratorV31');
  });

  it('serves the OpenAPI document generated at synth, with every operation', async () => {
    const res = await get('/openapi.json');
    expect(res.statusCode).toBe(200);
    expect(res.headers?.['content-type']).toBe('application/json');
    const doc = JSON.parse(res.body) as { openapi: string; paths: Record<string, Record<string, { operationId: string }>> };
    expect(doc.openapi).toBe('3.1.0');
    const operationIds = Object.values(doc.paths).flatMap((item) => Object.values(item).map((o) => o.operationId));
    expect(operationIds.sort()).toEqual(OPERATIONS.map((o) => o.operationId).sort());
  });

  it('serves the reference page and its assets', async () => {
    expect((await get('/reference')).statusCode).toBe(200);
    for (const [asset, type] of Object.entries(REFERENCE_ASSETS)) {
      const res = await get(`/reference/${asset}`);
      expect(res.statusCode, asset).toBe(200);
      expect(res.headers?.['content-type']).toBe(type);
    }
  });

  it('answers an unknown document with a RouteNotFound problem', async () => {
    const res = await get('/reference/nope.js');
    expect(res.statusCode).toBe(404);
    expect(JSON.parse(res.body)).toMatchObject({ tag: 'RouteNotFound', traceId: 'req-1' });
  });
});
