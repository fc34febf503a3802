/**
 * An endpoint's custom headers and OAuth 2.0 client credentials at the dispatcher
 * (docs/behaviour.md#custom-headers, docs/behaviour.md#oauth-20-client-credentials), against real
 * loopback receivers, a real OAuth server on loopback (`oidc-provider`, the client credentials
 * grant) and DynamoDB Local: receivers see the headers and a valid bearer token; a token the
 * server no longer honours is dropped on the receiver's 401 and the retry fetches another; a refused
 * client and a slow token endpoint fail the attempt as `auth_failed`; no secret value is ever in
 * the table or the logs.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import Provider from 'oidc-provider';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { REDACTED } from '../../lambdas/contract/limits';
import { planHeaderChange, sealHeaderPlan, type EndpointOptions } from '../../lambdas/domain/endpoint-options';
import { dispatchDelivery, type DispatchDeps } from '../../lambdas/pipeline/dispatcher';
import { createHttpSender } from '../../lambdas/pipeline/http-sender';
import { createTokenCache, type TokenCache } from '../../lambdas/pipeline/oauth-token';
import { publishEvent } from '../../lambdas/pipeline/publisher';
import { getDelivery, listAttempts } from '../../lambdas/store/deliveries';
import { capturingQueue, SEEDED_SECRET, seedEndpoint, testCatalogue, testSealer } from '../helpers/pipeline';
import { scriptedReceiver, type SeenRequest } from '../helpers/scripted-receiver';
import { freshTable } from '../helpers/table';

const API_KEY = 'api-key-value-4f1d9';
const CLIENT_SECRET = 'client-secret-value-8c2e7';

let table: Awaited<ReturnType<typeof freshTable>>;
let provider: Provider;
let oauthServer: Server;
let tokenUrl: string;
/** Token requests the OAuth server got. */
let tokenRequests = 0;
const logged: string[] = [];
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  table = await freshTable();
  oauthServer = createServer();
  await new Promise<void>((ok) => oauthServer.listen(0, '127.0.0.1', () => ok()));
  const issuer = `http://127.0.0.1:${(oauthServer.address() as AddressInfo).port}`;
  provider = new Provider(issuer, {
    clients: [
      {
        client_id: 'dispatcher',
        client_secret: CLIENT_SECRET,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_basic',
        scope: 'hooks',
      },
    ],
    scopes: ['hooks'],
    features: { clientCredentials: { enabled: true }, devInteractions: { enabled: false } },
    ttl: { ClientCredentials: 600 },
  });
  const callback = provider.callback();
  oauthServer.on('request', (req, res) => {
    if (req.url?.startsWith('/token')) tokenRequests++;
    void callback(req, res);
  });
  tokenUrl = `${issuer}/token`;
});
afterEach(async () => {
  await Promise.all(stops.splice(0).map((s) => s()));
});
afterAll(async () => {
  oauthServer?.closeAllConnections();
  await new Promise<void>((ok) => (oauthServer ? oauthServer.close(() => ok()) : ok()));
  await table?.drop();
});

function deps(tokens: TokenCache, overrides: Partial<DispatchDeps> = {}): DispatchDeps {
  const capture = (message: string, attributes: Record<string, unknown>) => void logged.push(JSON.stringify({ message, attributes }));
  return {
    table,
    now: () => new Date(),
    sender: createHttpSender({ deadlineMs: 3000, bodyReadMs: 300, bodyCapBytes: 2048 }),
    resolve: async () => [{ address: '127.0.0.1', family: 4 }],
    urlPolicy: { allowLoopback: true },
    secrets: testSealer,
    tokens,
    log: { warn: capture },
    ...overrides,
  };
}

/** A receiver that accepts a request only with a bearer token the OAuth server still honours (204), else 401. */
async function protectedReceiver() {
  const r = await scriptedReceiver((req: SeenRequest, res) => {
    const token = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
    void (async () => {
      const found = token ? await provider.ClientCredentials.find(token) : undefined;
      res.writeHead(found ? 204 : 401).end();
    })();
  });
  stops.push(() => r.stop());
  return r;
}

async function endpointOptions(auth: { tokenUrl: string; clientSecret: string }): Promise<EndpointOptions> {
  return {
    headers: await sealHeaderPlan(planHeaderChange(undefined, { 'X-Tenant': 'tenant-3', 'X-Api-Key': API_KEY }, false), testSealer),
    auth: {
      type: 'oauth2_client_credentials',
      tokenUrl: auth.tokenUrl,
      clientId: 'dispatcher',
      clientSecret: await testSealer.seal(auth.clientSecret),
      scope: 'hooks',
    },
  };
}

let n = 0;
async function published(url: string, options: EndpointOptions) {
  const workspace = `opt-${++n}`;
  const endpoint = await seedEndpoint(table, { workspace, url, options });
  const queue = capturingQueue();
  const publish = () =>
    publishEvent(
      { table, queue, eventTypes: testCatalogue, now: () => new Date() },
      { workspace, type: 'order.shipped', payload: { orderId: `o-${n}` } },
    );
  return { endpoint, publish };
}

/** Every item of the table and every captured log line, as text. */
async function everything(): Promise<string> {
  const items = await table.doc.send(new ScanCommand({ TableName: table.tableName }));
  return JSON.stringify(items.Items ?? []) + logged.join('\n');
}

describe('custom headers and OAuth 2.0', () => {
  it('sends the headers and a valid bearer token on every attempt, caches the token, and records neither secret', async () => {
    const r = await protectedReceiver();
    const tokens = createTokenCache();
    const { publish } = await published(r.url, await endpointOptions({ tokenUrl, clientSecret: CLIENT_SECRET }));
    const before = tokenRequests;
    const first = (await publish()).deliveryIds[0]!;
    expect(await dispatchDelivery(deps(tokens), first)).toMatchObject({ kind: 'ack', reason: 'delivered' });
    const second = (await publish()).deliveryIds[0]!;
    expect(await dispatchDelivery(deps(tokens), second)).toMatchObject({ kind: 'ack', reason: 'delivered' });
    // One token for both deliveries.
    expect(tokenRequests - before).toBe(1);

    const req = r.seen[0]!;
    expect(req.headers['x-tenant']).toBe('tenant-3');
    expect(req.headers['x-api-key']).toBe(API_KEY);
    expect(req.headers.authorization).toMatch(/^Bearer \S+$/);
    expect(r.seen[1]!.headers.authorization).toBe(req.headers.authorization);
    // The signature still verifies: the custom headers are outside it.
    expect(
      new Webhook(SEEDED_SECRET).verify(req.body, {
        'webhook-id': String(req.headers['webhook-id']),
        'webhook-timestamp': String(req.headers['webhook-timestamp']),
        'webhook-signature': String(req.headers['webhook-signature']),
      }),
    ).toEqual(JSON.parse(req.body));

    const attempts = await listAttempts(table, first, 10);
    expect(attempts.items[0]!.requestHeaders).toMatchObject({ 'X-Tenant': 'tenant-3', 'X-Api-Key': REDACTED, authorization: REDACTED });
    const text = await everything();
    for (const secret of [API_KEY, CLIENT_SECRET, String(req.headers.authorization).slice('Bearer '.length)])
      expect(text).not.toContain(secret);
  });

  it('drops a token the receiver refuses (401): the attempt is retried, and the retry fetches a new token', async () => {
    const r = await protectedReceiver();
    const tokens = createTokenCache();
    const { publish } = await published(r.url, await endpointOptions({ tokenUrl, clientSecret: CLIENT_SECRET }));
    const warmUp = (await publish()).deliveryIds[0]!;
    expect(await dispatchDelivery(deps(tokens), warmUp)).toMatchObject({ kind: 'ack', reason: 'delivered' });
    // The server no longer honours the cached token (expired or revoked before its expires_in).
    const stale = String(r.seen[0]!.headers.authorization).slice('Bearer '.length);
    await (await provider.ClientCredentials.find(stale))!.destroy();

    const deliveryId = (await publish()).deliveryIds[0]!;
    const before = tokenRequests;
    expect(await dispatchDelivery(deps(tokens), deliveryId)).toMatchObject({ kind: 'retry' });
    expect(r.seen[1]!.headers.authorization).toBe(`Bearer ${stale}`);
    expect(tokenRequests - before).toBe(0);
    expect(await getDelivery(table, deliveryId)).toMatchObject({ status: 'failed', lastResponseStatus: 401, attempts: 1 });

    expect(await dispatchDelivery(deps(tokens), deliveryId)).toMatchObject({ kind: 'ack', reason: 'delivered' });
    expect(tokenRequests - before).toBe(1);
    expect(r.seen[2]!.headers.authorization).not.toBe(`Bearer ${stale}`);
    // One POST per attempt.
    expect(r.seen).toHaveLength(3);
  });

  it('fails the attempt as auth_failed, nothing sent, when the token endpoint refuses the client', async () => {
    const r = await protectedReceiver();
    const { publish } = await published(r.url, await endpointOptions({ tokenUrl, clientSecret: 'not-the-secret' }));
    const deliveryId = (await publish()).deliveryIds[0]!;
    expect(await dispatchDelivery(deps(createTokenCache()), deliveryId)).toMatchObject({ kind: 'retry' });
    expect(r.seen).toHaveLength(0);
    const attempts = await listAttempts(table, deliveryId, 10);
    expect(attempts.items[0]).toMatchObject({ outcome: 'failed', failureReason: 'auth_failed', responseStatus: null, responseBody: null });
    expect(await getDelivery(table, deliveryId)).toMatchObject({ status: 'failed', lastError: 'auth_failed' });
    expect(logged.some((l) => l.includes('"tokenStatus":401'))).toBe(true);
    expect(await everything()).not.toContain(CLIENT_SECRET);
  });

  it('fails the attempt as auth_failed at the token request deadline when the token endpoint is slow', async () => {
    const slow = await scriptedReceiver(() => undefined);
    stops.push(() => slow.stop());
    const r = await protectedReceiver();
    const { publish } = await published(r.url, await endpointOptions({ tokenUrl: slow.url, clientSecret: CLIENT_SECRET }));
    const deliveryId = (await publish()).deliveryIds[0]!;
    const started = performance.now();
    expect(await dispatchDelivery(deps(createTokenCache({ deadlineMs: 400 })), deliveryId)).toMatchObject({ kind: 'retry' });
    expect(performance.now() - started).toBeLessThan(2000);
    expect(slow.seen).toHaveLength(1);
    expect(r.seen).toHaveLength(0);
    const attempt = (await listAttempts(table, deliveryId, 10)).items[0]!;
    expect(attempt).toMatchObject({ failureReason: 'auth_failed' });
    expect(attempt.durationMs).toBeGreaterThanOrEqual(390);
  });
});
