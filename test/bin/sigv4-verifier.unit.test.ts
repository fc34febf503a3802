/**
 * The local stack's SigV4 check (bin/local/sigv4-verifier.ts) against requests signed by the AWS
 * SDK's own signer: what a signature covers is checked, and any change to it is refused.
 */
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import { describe, expect, it } from 'vitest';
import { verifySigV4, type ReceivedRequest, type SigV4VerifierOptions } from '../../bin/local/sigv4-verifier';

const KEY = {
  accessKeyId: 'AKIAEXAMPLEKEY000001',
  secretAccessKey: 'local-secret-of-the-platform',
  principalArn: 'arn:aws:iam::000000000000:user/p',
};
const NOW = new Date('2026-11-25T12:00:00Z');
const OPTIONS: SigV4VerifierOptions = { region: 'us-east-1', credentials: [KEY], now: () => NOW };

interface Unsigned {
  method: string;
  path: string;
  query?: Record<string, string>;
  body?: string;
  headers?: Record<string, string>;
}

/** Signs as the AWS SDK does, and gives the request as the local front receives it. */
async function signed(
  req: Unsigned,
  opts: { secret?: string; region?: string; service?: string; at?: Date; unsignable?: string[]; checksum?: boolean } = {},
): Promise<ReceivedRequest> {
  const signer = new SignatureV4({
    credentials: { accessKeyId: KEY.accessKeyId, secretAccessKey: opts.secret ?? KEY.secretAccessKey },
    region: opts.region ?? 'us-east-1',
    service: opts.service ?? 'execute-api',
    sha256: Hash.bind(null, 'sha256'),
    applyChecksum: opts.checksum ?? true,
  });
  const body = req.body ?? '';
  const out = await signer.sign(
    {
      method: req.method,
      protocol: 'http:',
      hostname: '127.0.0.1',
      port: 3000,
      path: req.path,
      query: req.query ?? {},
      headers: { host: '127.0.0.1:3000', ...(body ? { 'content-type': 'application/json' } : {}), ...req.headers },
      ...(body ? { body } : {}),
    },
    { signingDate: opts.at ?? NOW, ...(opts.unsignable ? { unsignableHeaders: new Set(opts.unsignable) } : {}) },
  );
  const query = new URLSearchParams(req.query ?? {}).toString();
  return {
    method: req.method,
    target: `${req.path}${query ? `?${query}` : ''}`,
    headers: Object.fromEntries(Object.entries(out.headers).map(([k, v]) => [k.toLowerCase(), v])),
    body: Buffer.from(body, 'utf8'),
  };
}

const CREATE: Unsigned = { method: 'POST', path: '/platform/workspaces', body: JSON.stringify({ slug: 'acme', name: 'Acme' }) };
const LIST: Unsigned = { method: 'GET', path: '/platform/workspaces', query: { limit: '2', cursor: 'a b+c' } };

const refusedWith = (pattern: RegExp) => ({ ok: false, reason: expect.stringMatching(pattern) });

describe('verifySigV4', () => {
  it("accepts the SDK's signature of a GET with a query and of a POST with a body, naming the key's principal", async () => {
    expect(verifySigV4(await signed(LIST), OPTIONS)).toEqual({ ok: true, principalArn: KEY.principalArn });
    expect(verifySigV4(await signed(CREATE), OPTIONS)).toEqual({ ok: true, principalArn: KEY.principalArn });
    expect(verifySigV4(await signed({ ...CREATE, headers: { 'x-amz-content-sha256': await bodyHash(CREATE.body!) } }), OPTIONS)).toEqual({
      ok: true,
      principalArn: KEY.principalArn,
    });
  });

  it('refuses a request without a signature, or with another scheme', async () => {
    const req = await signed(LIST);
    const { authorization: _a, ...unsigned } = req.headers;
    expect(verifySigV4({ ...req, headers: unsigned }, OPTIONS)).toEqual(refusedWith(/^Missing Authentication Token$/));
    expect(verifySigV4({ ...req, headers: { ...req.headers, authorization: 'Bearer whk_x' } }, OPTIONS)).toEqual(
      refusedWith(/not AWS Signature Version 4/),
    );
    expect(verifySigV4({ ...req, headers: { ...req.headers, authorization: 'AWS4-HMAC-SHA256 Credential=x' } }, OPTIONS)).toEqual(
      refusedWith(/requires 'SignedHeaders', 'Signature'/),
    );
  });

  it('refuses a wrong secret, an unknown key, and another region or service in the scope', async () => {
    expect(verifySigV4(await signed(LIST, { secret: 'not-the-secret' }), OPTIONS)).toEqual(
      refusedWith(/signature we calculated does not match/),
    );
    expect(verifySigV4(await signed(LIST), { ...OPTIONS, credentials: [{ ...KEY, accessKeyId: 'AKIAOTHERKEY00000001' }] })).toEqual(
      refusedWith(/security token included in the request is invalid/),
    );
    expect(verifySigV4(await signed(LIST, { region: 'eu-west-1' }), OPTIONS)).toEqual(refusedWith(/valid region/));
    expect(verifySigV4(await signed(LIST, { service: 'lambda' }), OPTIONS)).toEqual(refusedWith(/correct service/));
  });

  it('allows 15 minutes of clock skew either way, no more (a replay 16 minutes later is refused)', async () => {
    const minutes = (m: number) => new Date(NOW.getTime() + m * 60_000);
    expect(verifySigV4(await signed(LIST, { at: minutes(-14) }), OPTIONS).ok).toBe(true);
    expect(verifySigV4(await signed(LIST, { at: minutes(14) }), OPTIONS).ok).toBe(true);
    expect(verifySigV4(await signed(LIST, { at: minutes(-16) }), OPTIONS)).toEqual(refusedWith(/Signature expired/));
    expect(verifySigV4(await signed(LIST, { at: minutes(16) }), OPTIONS)).toEqual(refusedWith(/Signature expired/));
  });

  it('refuses any change to the method, path, query, a signed header or the body', async () => {
    const list = await signed(LIST);
    const mismatch = refusedWith(/signature we calculated does not match/);
    expect(verifySigV4({ ...list, method: 'DELETE' }, OPTIONS)).toEqual(mismatch);
    expect(verifySigV4({ ...list, target: list.target.replace('/workspaces', '/workspaces/acme') }, OPTIONS)).toEqual(mismatch);
    expect(verifySigV4({ ...list, target: list.target.replace('limit=2', 'limit=3') }, OPTIONS)).toEqual(mismatch);
    expect(verifySigV4({ ...list, headers: { ...list.headers, host: 'evil.example:3000' } }, OPTIONS)).toEqual(mismatch);
    // The SDK sends the body's hash as x-amz-content-sha256: a changed body no longer matches it.
    const create = await signed(CREATE);
    expect(create.headers['x-amz-content-sha256']).toBe(await bodyHash(CREATE.body!));
    expect(verifySigV4({ ...create, body: Buffer.from(CREATE.body!.replace('acme', 'evil')) }, OPTIONS)).toEqual(
      refusedWith(/x-amz-content-sha256 header does not match/),
    );
    // A signer that sends no such header: the body's hash is still part of what is signed.
    const bare = await signed(CREATE, { checksum: false });
    expect(bare.headers['x-amz-content-sha256']).toBeUndefined();
    expect(verifySigV4(bare, OPTIONS).ok).toBe(true);
    expect(verifySigV4({ ...bare, body: Buffer.from('{}') }, OPTIONS)).toEqual(mismatch);
  });

  it('refuses UNSIGNED-PAYLOAD and a request whose host is not signed', async () => {
    expect(verifySigV4(await signed({ ...CREATE, headers: { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } }), OPTIONS)).toEqual(
      refusedWith(/UNSIGNED-PAYLOAD/),
    );
    expect(verifySigV4(await signed(LIST, { unsignable: ['host'] }), OPTIONS)).toEqual(refusedWith(/'host' must be a signed header/));
  });
});

async function bodyHash(body: string): Promise<string> {
  const h = new Hash('sha256');
  h.update(body);
  return Buffer.from(await h.digest()).toString('hex');
}
