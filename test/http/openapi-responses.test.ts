/**
 * The OpenAPI document the local stack serves, checked against what the stack really answers:
 * real HTTP requests, each response validated (ajv, JSON Schema 2020-12) against the response the
 * document declares for its status: the body's schema, the content type (none on a 204), and
 * every declared header (present when required, its value matching its schema). Request values
 * a generated client would send from the document (any `limit`, the status list, the instants,
 * an http URL on this loopback stack) are checked against the parameter schemas and sent.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS, type OperationDef } from '../../lambdas/contract/operations';
import { startTestApi, type ApiResponse, type TestApi } from '../helpers/local-api';

let api: TestApi;
let doc: any;
const DOC_ID = 'https://local.test/openapi.json';
const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
const compiled = new Map<unknown, ValidateFunction>();

/** A schema of the document, its `#/components/...` references pointed at the document itself. */
function validatorOf(schema: unknown): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    const rebased = JSON.parse(JSON.stringify(schema).replaceAll('"$ref":"#/', `"$ref":"${DOC_ID}#/`)) as object;
    validate = ajv.compile(rebased);
    compiled.set(schema, validate);
  }
  return validate;
}

function resolve(node: any): any {
  return node?.$ref
    ? node.$ref
        .replace(/^#\//, '')
        .split('/')
        .reduce((at: any, key: string) => at[key], doc)
    : node;
}

function operation(operationId: string): { def: OperationDef; entry: any } {
  const def = (OPERATIONS as readonly OperationDef[]).find((o) => o.operationId === operationId)!;
  return { def, entry: doc.paths[def.path][def.method.toLowerCase()] };
}

/** What breaks the document in this answer of `operationId` (empty when it matches). */
function violations(operationId: string, res: ApiResponse): string[] {
  const { entry } = operation(operationId);
  const declared = entry.responses[String(res.status)];
  if (!declared) return [`status ${res.status} is not declared (${Object.keys(entry.responses).join(', ')})`];
  const out: string[] = [];
  for (const [name, ref] of Object.entries<any>(declared.headers ?? {})) {
    const header = resolve(ref);
    const value = res.headers.get(name);
    if (value === null) {
      if (header.required) out.push(`required header ${name} is missing`);
      continue;
    }
    const schema = header.schema.type === 'integer' ? { ...header.schema, type: 'string', pattern: '^[0-9]+$' } : header.schema;
    if (!validatorOf(schema)(value)) out.push(`header ${name}: ${JSON.stringify(value)} does not match ${JSON.stringify(header.schema)}`);
  }
  const type = res.headers.get('content-type');
  if (!declared.content) {
    if (type !== null) out.push(`no content is declared, but content-type is ${type}`);
    if (res.text !== '') out.push(`no content is declared, but the body is ${JSON.stringify(res.text.slice(0, 80))}`);
    return out;
  }
  const media = Object.keys(declared.content).find((m) => type?.split(';')[0]?.trim() === m);
  if (!media) return [...out, `content-type ${type} is not among ${Object.keys(declared.content).join(', ')}`];
  const validate = validatorOf(declared.content[media].schema);
  if (!validate(res.body)) out.push(`body: ${ajv.errorsText(validate.errors)}`);
  return out;
}

/** Whether a value a client would send passes the parameter's declared schema. */
function parameterAccepts(operationId: string, name: string, value: unknown): boolean {
  const param = operation(operationId).entry.parameters.find((p: any) => p.name === name);
  return validatorOf(param.schema)(value);
}

/** A value of an array parameter in its declared wire form (`form` without explode: comma-separated). */
function serialize(operationId: string, name: string, value: readonly string[]): string {
  const param = operation(operationId).entry.parameters.find((p: any) => p.name === name);
  expect({ style: param.style, explode: param.explode }).toEqual({ style: 'form', explode: false });
  return value.map(encodeURIComponent).join(',');
}

beforeAll(async () => {
  api = await startTestApi({ schedules: false });
  doc = await (await fetch(`${api.apiUrl}/openapi.json`)).json();
  ajv.addSchema({ ...doc, $id: DOC_ID });
}, 60_000);
afterAll(async () => {
  await api?.close();
});

describe('answers of the local stack, validated against the document it serves', () => {
  let endpointId: string;
  const receiver = 'http://127.0.0.1:9/hook';

  it('creates an endpoint at an http loopback URL, which this stack\u2019s document admits', async () => {
    const body = { url: receiver, eventTypes: ['webhook.test_event'], description: 'validated' };
    const schema = resolve(operation('createWebhook').entry.requestBody.content['application/json'].schema);
    expect(validatorOf(schema)(body)).toBe(true);
    const res = await api.call('POST', `/workspaces/${api.workspace}/webhooks`, { body, headers: { 'idempotency-key': 'openapi-1' } });
    expect(res.status).toBe(201);
    expect(violations('createWebhook', res)).toEqual([]);
    endpointId = res.body.endpointId;
    const again = await api.call('POST', `/workspaces/${api.workspace}/webhooks`, { body, headers: { 'idempotency-key': 'openapi-1' } });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(violations('createWebhook', again)).toEqual([]);
  });

  it('takes and answers the endpoint options as declared, set and removed', async () => {
    const body = {
      url: receiver,
      eventTypes: ['webhook.test_event'],
      headers: { 'X-Tenant': 'acme', 'X-Api-Key': 'k-1' },
      auth: {
        type: 'oauth2_client_credentials',
        tokenUrl: 'https://auth.example.com/token',
        clientId: 'c',
        clientSecret: 's',
        scope: 'hooks',
      },
      rateLimitPerSecond: 5,
      filter: { 'data.region': 'eu' },
    };
    const create = resolve(operation('createWebhook').entry.requestBody.content['application/json'].schema);
    expect(validatorOf(create)(body)).toBe(true);
    const res = await api.call('POST', `/workspaces/${api.workspace}/webhooks`, { body });
    expect(res.status).toBe(201);
    expect(violations('createWebhook', res)).toEqual([]);
    const removal = { headers: { 'X-Api-Key': null }, auth: null, rateLimitPerSecond: null, filter: null };
    const update = resolve(operation('updateWebhook').entry.requestBody.content['application/json'].schema);
    expect(validatorOf(update)(removal)).toBe(true);
    const patched = await api.call('PATCH', `/workspaces/${api.workspace}/webhooks/${res.body.endpointId}`, { body: removal });
    expect(patched.status).toBe(200);
    expect(violations('updateWebhook', patched)).toEqual([]);
  });

  it('answers reads and updates as declared, with x-trace-id and cache-control', async () => {
    const slug = api.workspace;
    const checks: [string, ApiResponse][] = [
      ['getWebhook', await api.call('GET', `/workspaces/${slug}/webhooks/${endpointId}`)],
      ['updateWebhook', await api.call('PATCH', `/workspaces/${slug}/webhooks/${endpointId}`, { body: { description: 'renamed' } })],
      ['listWebhooks', await api.call('GET', `/workspaces/${slug}/webhooks`)],
      ['getWorkspaceOverview', await api.call('GET', `/workspaces/${slug}/overview`)],
      ['listEventTypes', await api.call('GET', `/workspaces/${slug}/event-types`)],
      ['listApiTokens', await api.call('GET', `/workspaces/${slug}/api-tokens`)],
      ['getWebhookHealth', await api.call('GET', `/workspaces/${slug}/webhooks/${endpointId}/health`)],
    ];
    for (const [id, res] of checks) {
      expect(res.status, id).toBeLessThan(300);
      expect(res.headers.get('x-trace-id'), id).toBeTruthy();
      expect(res.headers.get('cache-control'), id).toBe('no-store');
      expect(violations(id, res), id).toEqual([]);
    }
  });

  it('takes any limit the document allows, 0 and 10000 included, and clamps it', async () => {
    for (const limit of [0, 10_000, 1, 200]) {
      expect(parameterAccepts('listWebhooks', 'limit', limit), String(limit)).toBe(true);
      const res = await api.call('GET', `/workspaces/${api.workspace}/webhooks?limit=${limit}`);
      expect(res.status, String(limit)).toBe(200);
      expect(violations('listWebhooks', res)).toEqual([]);
    }
  });

  it('filters the delivery log by a status list and instants as the document declares them', async () => {
    const statuses = ['failed', 'dead_lettered'];
    const since = '2026-01-01';
    const until = '2099-12-31T23:59:59.999+02:00';
    expect(parameterAccepts('listDeliveries', 'status', statuses)).toBe(true);
    expect(parameterAccepts('listDeliveries', 'since', since)).toBe(true);
    expect(parameterAccepts('listDeliveries', 'until', until)).toBe(true);
    const query = `status=${serialize('listDeliveries', 'status', statuses)}&since=${since}&until=${encodeURIComponent(until)}`;
    const res = await api.call('GET', `/workspaces/${api.workspace}/deliveries?${query}`);
    expect(res.status).toBe(200);
    expect(violations('listDeliveries', res)).toEqual([]);
  });

  it('refuses what the document refuses, with a problem the document declares', async () => {
    for (const [name, value, query] of [
      ['status', ['bogus'], 'status=bogus'],
      ['since', '2026-11-25T12:00:00', 'since=2026-11-25T12:00:00'],
      ['until', '25/11/2026', 'until=25%2F11%2F2026'],
    ] as const) {
      expect(parameterAccepts('listDeliveries', name, value), name).toBe(false);
      const res = await api.call('GET', `/workspaces/${api.workspace}/deliveries?${query}`);
      expect(res.status, name).toBe(400);
      expect(res.body.tag).toBe('ValidationError');
      expect(violations('listDeliveries', res), name).toEqual([]);
    }
    const schema = resolve(operation('createWebhook').entry.requestBody.content['application/json'].schema);
    const ftp = { url: 'ftp://hooks.example.com/x', eventTypes: ['webhook.test_event'] };
    expect(validatorOf(schema)(ftp)).toBe(false);
    const refused = await api.call('POST', `/workspaces/${api.workspace}/webhooks`, { body: ftp });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ tag: 'InvalidWebhookUrl', rule: 'scheme' });
    expect(violations('createWebhook', refused)).toEqual([]);
  });

  it('answers problems with the declared headers: 404 and 401', async () => {
    const missing = await api.call('GET', `/workspaces/${api.workspace}/webhooks/whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC`);
    expect(missing.status).toBe(404);
    expect(violations('getWebhook', missing)).toEqual([]);
    const anonymous = await api.call('GET', `/workspaces/${api.workspace}/webhooks`, { token: null });
    expect(anonymous.status).toBe(401);
    expect(violations('listWebhooks', anonymous)).toEqual([]);
  });

  it('answers a 204 with no content type and no body: revoke a token, delete an endpoint', async () => {
    const created = await api.call('POST', `/workspaces/${api.workspace}/api-tokens`, { body: { name: 'short-lived', scopes: ['read'] } });
    expect(created.status).toBe(201);
    expect(violations('createApiToken', created)).toEqual([]);
    const revoked = await api.call('DELETE', `/workspaces/${api.workspace}/api-tokens/${created.body.tokenId}`);
    const deleted = await api.call('DELETE', `/workspaces/${api.workspace}/webhooks/${endpointId}`);
    for (const [id, res] of [
      ['revokeApiToken', revoked],
      ['deleteWebhook', deleted],
    ] as const) {
      expect(res.status, id).toBe(204);
      expect(res.headers.get('content-type'), id).toBeNull();
      expect(res.headers.get('content-length'), id).toBeNull();
      expect(res.text, id).toBe('');
      expect(res.headers.get('x-trace-id'), id).toBeTruthy();
      expect(violations(id, res), id).toEqual([]);
    }
  });
});
