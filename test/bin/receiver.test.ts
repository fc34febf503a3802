/**
 * The demo receiver of `npm run receiver`, over real HTTP, with requests signed
 * by the `standardwebhooks` library as a third party would sign them.
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES, ReceiverConfigError, startReceiver, type Receiver, type ReceiverOptions } from '../../bin/local/receiver-server';

const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

const running: Receiver[] = [];
// Stopped even when a test fails, so no port or socket outlives its test.
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.stop()));
});

async function start(options: ReceiverOptions = {}): Promise<Receiver & { lines: string[] }> {
  const lines: string[] = [];
  const receiver = await startReceiver({ port: 0, log: (l) => lines.push(l), ...options });
  running.push(receiver);
  return Object.assign(receiver, { lines });
}

let seq = 0;
function delivery(eventType = 'webhook.test_event') {
  seq += 1;
  const id = `whd_TEST${String(seq).padStart(4, '0')}`;
  return { id, body: JSON.stringify({ deliveryId: id, eventType, payload: { message: 'hello', n: seq } }) };
}

/** The headers the service sends, signed with the library. */
function signedHeaders(secret: string, id: string, body: string, at = new Date()): Record<string, string> {
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, at, body),
    'x-trace-id': 'trace-123',
  };
}

function post(receiver: Receiver, body: string, headers: Record<string, string>) {
  return fetch(`${receiver.url}/hooks`, { method: 'POST', body, headers });
}

describe('with a secret', () => {
  it('accepts a valid delivery, records it as verified and logs one line', async () => {
    const secret = newSecret();
    const r = await start({ secret });
    const { id, body } = delivery();
    const res = await post(r, body, signedHeaders(secret, id, body));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
    expect(r.received).toEqual([
      expect.objectContaining({
        webhookId: id,
        deliveryId: id,
        eventType: 'webhook.test_event',
        payload: { message: 'hello', n: seq },
        verified: true,
        verifiedBySecret: 1,
        traceId: 'trace-123',
        attempt: 1,
        path: '/hooks',
        rawBody: body,
      }),
    ]);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatch(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\S+Z  ${id}  webhook.test_event  verified  200 ok`));
  });

  it('rejects a tampered body with 401 and records nothing', async () => {
    const secret = newSecret();
    const r = await start({ secret });
    const { id, body } = delivery();
    const res = await post(r, body.replace('hello', 'HELLO'), signedHeaders(secret, id, body));
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'No matching signature found' });
    expect(r.received).toEqual([]);
    expect(r.lines[0]).toContain('REJECTED  401');
  });

  it('rejects a body that is only re-serialised (verification is on the raw bytes)', async () => {
    const secret = newSecret();
    const r = await start({ secret });
    const { id, body } = delivery();
    const res = await post(r, JSON.stringify(JSON.parse(body), null, 2), signedHeaders(secret, id, body));
    expect(res.status).toBe(401);
  });

  it('rejects a delivery signed with another secret', async () => {
    const r = await start({ secret: newSecret() });
    const { id, body } = delivery();
    const res = await post(r, body, signedHeaders(newSecret(), id, body));
    expect(res.status).toBe(401);
    expect(r.received).toEqual([]);
  });

  it('accepts a delivery signed by either secret of a rotation grace window', async () => {
    const [oldSecret, newer] = [newSecret(), newSecret()];
    const r = await start({ secret: [newer, oldSecret] });
    const a = delivery();
    const b = delivery();
    expect((await post(r, a.body, signedHeaders(oldSecret, a.id, a.body))).status).toBe(200);
    expect((await post(r, b.body, signedHeaders(newer, b.id, b.body))).status).toBe(200);
    expect(r.received.map((d) => [d.webhookId, d.verifiedBySecret])).toEqual([
      [a.id, 2],
      [b.id, 1],
    ]);
    expect(r.lines[0]).toContain('verified (secret 2 of 2)');
  });

  it('accepts when any of several v1 signature entries matches', async () => {
    const secret = newSecret();
    const r = await start({ secret });
    const { id, body } = delivery();
    const headers = signedHeaders(secret, id, body);
    headers['webhook-signature'] = `${new Webhook(newSecret()).sign(id, new Date(), body)} ${headers['webhook-signature']}`;
    expect((await post(r, body, headers)).status).toBe(200);
  });

  it('answers a repeated webhook-id 200 duplicate without recording it again', async () => {
    const secret = newSecret();
    const r = await start({ secret });
    const { id, body } = delivery();
    expect((await post(r, body, signedHeaders(secret, id, body))).status).toBe(200);
    const again = await post(r, body, signedHeaders(secret, id, body));
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ ok: true, duplicate: true });
    expect(r.received).toHaveLength(1);
    expect(r.lines[1]).toContain('200 duplicate');
  });

  it('answers 401 when signature headers are missing', async () => {
    const secret = newSecret();
    const r = await start({ secret });
    const { id, body } = delivery();
    const { 'webhook-signature': _sig, ...noSignature } = signedHeaders(secret, id, body);
    const none = await post(r, body, { 'content-type': 'application/json' });
    const unsigned = await post(r, body, noSignature);
    expect([none.status, unsigned.status]).toEqual([401, 401]);
    expect(await none.json()).toEqual({ error: 'Missing required headers' });
    expect(r.received).toEqual([]);
  });

  it('answers 401 for a timestamp outside the 5 minute tolerance', async () => {
    const secret = newSecret();
    const r = await start({ secret });
    const { id, body } = delivery();
    const res = await post(r, body, signedHeaders(secret, id, body, new Date(Date.now() - 10 * 60_000)));
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'Message timestamp too old' });
  });

  it('answers 400 for a correctly signed body that is not JSON', async () => {
    const secret = newSecret();
    const r = await start({ secret });
    const res = await post(r, 'not json', signedHeaders(secret, 'whd_X', 'not json'));
    expect(res.status).toBe(400);
    expect(r.received).toEqual([]);
  });
});

describe('failures on purpose', () => {
  it('answers 503 to every request at fail rate 1, before processing', async () => {
    const secret = newSecret();
    const r = await start({ secret, failRate: 1 });
    const { id, body } = delivery();
    const res = await post(r, body, signedHeaders(secret, id, body));
    expect(res.status).toBe(503);
    expect(r.received).toEqual([]);
    expect(r.lines[0]).toContain('503 simulated failure');
  });

  it('decides with the injected random source and the configured status, and processes the retry', async () => {
    const secret = newSecret();
    const rolls = [0.2, 0.9];
    const r = await start({ secret, failRate: 0.5, failStatus: 500, random: () => rolls.shift() ?? 0 });
    const { id, body } = delivery();
    expect((await post(r, body, signedHeaders(secret, id, body))).status).toBe(500);
    expect((await post(r, body, signedHeaders(secret, id, body))).status).toBe(200);
    expect(r.received).toEqual([expect.objectContaining({ webhookId: id, attempt: 2 })]);
  });

  it('can be toggled while running', async () => {
    const secret = newSecret();
    const r = await start({ secret });
    r.setFailRate(1);
    const a = delivery();
    expect((await post(r, a.body, signedHeaders(secret, a.id, a.body))).status).toBe(503);
    r.setFailRate(0);
    expect((await post(r, a.body, signedHeaders(secret, a.id, a.body))).status).toBe(200);
    expect(r.failRate).toBe(0);
    expect(() => r.setFailRate(2)).toThrow(ReceiverConfigError);
  });
});

describe('without a secret', () => {
  it('accepts and records deliveries as unverified, saying so in the log', async () => {
    const r = await start();
    const { id, body } = delivery();
    const res = await post(r, body, { 'content-type': 'application/json', 'webhook-id': id });
    expect(res.status).toBe(200);
    expect(r.received).toEqual([expect.objectContaining({ webhookId: id, verified: false, verifiedBySecret: undefined })]);
    expect(r.lines[0]).toContain('UNVERIFIED');
  });

  it('still needs a webhook-id to dedupe on', async () => {
    const r = await start();
    expect((await post(r, delivery().body, {})).status).toBe(400);
  });
});

describe('limits and configuration', () => {
  it('answers 413 to a body over 1 MiB', async () => {
    const secret = newSecret();
    const r = await start({ secret });
    const body = JSON.stringify({ deliveryId: 'whd_BIG', eventType: 'x.y', payload: 'a'.repeat(MAX_BODY_BYTES) });
    const res = await post(r, body, signedHeaders(secret, 'whd_BIG', body));
    expect(res.status).toBe(413);
    expect(r.received).toEqual([]);
  });

  it('answers 405 to anything but POST', async () => {
    const r = await start();
    expect((await fetch(`${r.url}/hooks`)).status).toBe(405);
  });

  it('refuses a malformed secret at start', async () => {
    await expect(startReceiver({ secret: 'not-a-secret' })).rejects.toThrow(ReceiverConfigError);
    await expect(startReceiver({ failRate: 1.5 })).rejects.toThrow(ReceiverConfigError);
  });

  it('rejects with EADDRINUSE when the port is taken', async () => {
    const first = await start();
    await expect(startReceiver({ port: first.port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });

  it('stop() is idempotent and frees the port', async () => {
    const r = await startReceiver();
    await Promise.all([r.stop(), r.stop()]);
    await expect(fetch(`${r.url}/hooks`, { method: 'POST', body: '{}' })).rejects.toThrow();
  });
});
