/**
 * Requests the HTTP parser or the URL parser refuses, as the fuzz found them: each is answered
 * as a problem+json refusal like any other (never Node's bare status line, never a 500).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/local-api';
import { judge } from './oracle';
import { buildRawRequest, rawRequest, type WireResponse } from './raw-http';

let api: TestApi;
let port: number;
const ws = () => `/workspaces/${api.workspace}`;

beforeAll(async () => {
  api = await startTestApi({ schedules: false });
  port = Number(new URL(api.apiUrl).port);
});
afterAll(async () => {
  await api?.close();
});

type Header = readonly [string, string | Buffer];

function send(method: string, target: string, headers: readonly Header[], body?: Buffer): Promise<WireResponse> {
  return rawRequest(
    port,
    buildRawRequest({ method, target, headers: [['host', '127.0.0.1'], ...headers, ['connection', 'close']], ...(body ? { body } : {}) }),
  );
}

describe('requests the local front cannot parse', () => {
  const cases: [string, string, () => string, readonly Header[], Buffer | undefined, number, string][] = [
    ['a method HTTP does not know', 'FOO', () => `${ws()}/webhooks`, [], undefined, 400, 'ValidationError'],
    [
      'a broken chunk size',
      'POST',
      () => `${ws()}/webhooks`,
      [
        ['content-type', 'application/json'],
        ['transfer-encoding', 'chunked'],
      ],
      Buffer.from('zz\r\n{}\r\n0\r\n\r\n'),
      400,
      'ValidationError',
    ],
    ['headers over 16 KiB', 'GET', () => `${ws()}/webhooks`, [['x-padding', 'a'.repeat(20_000)]], undefined, 413, 'PayloadTooLarge'],
    ['a request target that is not a URL', 'GET', () => 'http://[', [], undefined, 400, 'ValidationError'],
  ];
  it.each(cases)('%s: a problem+json refusal', async (_name, method, target, headers, body, status, tag) => {
    const res = await send(method, target(), [['authorization', `Bearer ${api.token}`], ...headers], body);
    const verdict = judge({ method }, res);
    expect(verdict.violations).toEqual([]);
    expect([res.status, verdict.tag]).toEqual([status, tag]);
  });

  it('CONNECT: a RouteNotFound refusal, not a closed connection', async () => {
    const res = await send('CONNECT', '127.0.0.1:443', [['authorization', `Bearer ${api.token}`]]);
    const verdict = judge({ method: 'CONNECT' }, res);
    expect(verdict.violations).toEqual([]);
    expect([res.status, verdict.tag]).toEqual([404, 'RouteNotFound']);
  });

  it('an Upgrade header is ignored: the request is routed like any other', async () => {
    const res = await send('GET', `${ws()}/webhooks`, [
      ['authorization', `Bearer ${api.token}`],
      ['upgrade', 'websocket'],
    ]);
    expect(res.status).toBe(200);
  });

  it('a request without Host is routed like any other', async () => {
    const res = await rawRequest(
      port,
      buildRawRequest({
        method: 'GET',
        target: `${ws()}/webhooks`,
        headers: [
          ['authorization', `Bearer ${api.token}`],
          ['connection', 'close'],
        ],
      }),
    );
    expect(res.status).toBe(200);
  });
});
