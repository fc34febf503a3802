/** The rules of an endpoint's options (docs/behaviour.md#custom-headers): names, values, limits, the merge and what readers see. */
import { describe, expect, it } from 'vitest';
import { isAppError } from '../../lambdas/contract/errors';
import { CUSTOM_HEADER_LIMITS, REDACTED } from '../../lambdas/contract/limits';
import {
  authForRead,
  headerNameRefusal,
  headersForRead,
  headerValueRefusal,
  isSecretHeaderName,
  openHeaders,
  planHeaderChange,
  rateLimitRefusal,
  redactRequestHeaders,
  sealHeaderPlan,
  type CustomHeaders,
} from '../../lambdas/domain/endpoint-options';
import { localSecretSealer } from '../../lambdas/store/secret-sealing';

const sealer = localSecretSealer();

/** The problem a change is refused with. */
function refusal(fn: () => unknown): { detail: string; issues: { path: string; message: string }[] } {
  try {
    fn();
  } catch (error) {
    if (isAppError(error) && error.tag === 'InvalidHeader')
      return { detail: error.detail, issues: error.extensions.issues as { path: string; message: string }[] };
    throw error;
  }
  throw new Error('not refused');
}

describe('secret header names', () => {
  it.each(['Authorization', 'cookie', 'X-Api-Key', 'x-auth-token', 'Client-Secret', 'X-PASSWORD', 'apikey'])('%s is a secret', (name) => {
    expect(isSecretHeaderName(name)).toBe(true);
  });
  it.each(['X-Tenant', 'Accept-Language', 'X-Region', 'Set-Cookies-Policy'])('%s is not', (name) => {
    // Only `cookie` exactly; the words key/token/secret/password anywhere.
    expect(isSecretHeaderName(name)).toBe(false);
  });
});

describe('header names', () => {
  it.each([
    'webhook-id',
    'Webhook-Signature',
    'webhook-anything',
    'Content-Type',
    'content-length',
    'Host',
    'Transfer-Encoding',
    'Connection',
    'User-Agent',
    'X-Trace-Id',
    'Keep-Alive',
    'Proxy-Authorization',
    'proxy-connection',
    'TE',
    'Trailer',
    'Upgrade',
    'X-Amz-Date',
    'x-amz-security-token',
  ])('%s is refused, and the refusal names it', (name) => {
    expect(headerNameRefusal(name, false)).toContain(name);
  });
  it('authorization is refused only when the endpoint uses OAuth', () => {
    expect(headerNameRefusal('Authorization', false)).toBeNull();
    expect(headerNameRefusal('Authorization', true)).toContain('Authorization');
  });
  it.each(['X Api', 'X-Api:', 'X-Ä', '', 'a\nb', '(x)'])('%j is no token', (name) => {
    expect(headerNameRefusal(name, false)).toMatch(/not a valid header name/);
  });
  it('__proto__ is refused by name, never dropped without a word (as a key it would set the prototype)', () => {
    const change = JSON.parse('{"__proto__": "x", "X-Tenant": "t"}') as Record<string, string>;
    expect(() => planHeaderChange(undefined, change, false)).toThrow(/__proto__ is not allowed/);
    expect(headerNameRefusal('constructor', false)).toBeNull();
  });
  it.each(['X-Api-Key', 'x_custom', "a!#$%&'*+-.^_`|~9"])('%s is allowed', (name) => {
    expect(headerNameRefusal(name, false)).toBeNull();
  });
});

describe('header values', () => {
  it.each(['a\r\nX-Injected: 1', 'a\nb', 'a\0b', 'a\x07b', 'a\x7fb', ' lead', 'trail ', 'emoji 😀'])('%j is refused', (value) => {
    expect(headerValueRefusal('X-Test', value)).toContain('X-Test');
  });
  it.each(['', 'plain', 'a\tb', 'Basic dXNlcjpwYXNz', 'café'])('%j is allowed', (value) => {
    expect(headerValueRefusal('X-Test', value)).toBeNull();
  });
});

describe('the merge', () => {
  const stored = async (): Promise<CustomHeaders> =>
    (await sealHeaderPlan(planHeaderChange(undefined, { 'X-Tenant': 't1', 'X-Api-Key': 'k-1' }, false), sealer))!;

  it('seals secret values and keeps others plain', async () => {
    const headers = await stored();
    expect(headers.plain).toEqual({ 'X-Tenant': 't1' });
    expect(Object.keys(headers.sealed)).toEqual(['X-Api-Key']);
    expect(JSON.stringify(headers)).not.toContain('k-1');
    expect(await openHeaders(headers, sealer)).toEqual({ 'X-Tenant': 't1', 'X-Api-Key': 'k-1' });
  });

  it('merges by name in any case, keeps unsent secrets, and null removes one', async () => {
    const headers = await stored();
    const plan = planHeaderChange(headers, { 'x-tenant': 't2', 'X-Region': 'eu' }, false);
    expect(plan.plain).toEqual({ 'x-tenant': 't2', 'X-Region': 'eu' });
    expect(plan.keptSealed['X-Api-Key']).toEqual(headers.sealed['X-Api-Key']);
    const removed = planHeaderChange(headers, { 'x-api-key': null, 'X-Absent': null }, false);
    expect(removed).toEqual({ plain: { 'X-Tenant': 't1' }, toSeal: {}, keptSealed: {} });
    expect(await sealHeaderPlan(planHeaderChange(headers, { 'X-Tenant': null, 'X-Api-Key': null }, false), sealer)).toBeUndefined();
  });

  it('refuses a name sent twice, a reserved name and a bad value, naming the header', () => {
    expect(refusal(() => planHeaderChange(undefined, { 'X-A': '1', 'x-a': '2' }, false)).issues[0]!.path).toBe('body.headers["x-a"]');
    const reserved = refusal(() => planHeaderChange(undefined, { 'X-Ok': '1', 'Webhook-Id': 'x' }, false));
    expect(reserved.issues).toEqual([{ path: 'body.headers["Webhook-Id"]', message: expect.stringContaining('Webhook-Id') }]);
    expect(refusal(() => planHeaderChange(undefined, { 'X-Bad': 'a\r\nb' }, false)).detail).toContain('X-Bad');
  });

  it('refuses a stored authorization once OAuth is on', async () => {
    const headers = (await sealHeaderPlan(planHeaderChange(undefined, { Authorization: 'Basic abc' }, false), sealer))!;
    expect(refusal(() => planHeaderChange(headers, {}, true)).detail).toContain('Authorization');
    expect(planHeaderChange(headers, { authorization: null }, true)).toEqual({ plain: {}, toSeal: {}, keptSealed: {} });
  });

  it(`allows ${CUSTOM_HEADER_LIMITS.maxHeaders} headers and ${CUSTOM_HEADER_LIMITS.maxTotalBytes} bytes, no more`, async () => {
    const many = Object.fromEntries(Array.from({ length: CUSTOM_HEADER_LIMITS.maxHeaders }, (_, i) => [`X-H${i}`, 'v']));
    const headers = (await sealHeaderPlan(planHeaderChange(undefined, many, false), sealer))!;
    expect(refusal(() => planHeaderChange(headers, { 'X-One-More': 'v' }, false)).detail).toMatch(/21 headers; .* at most 20/);
    // Names and values: 'X-Big' (5 bytes) and a value filling the rest, the secret one counted by its plaintext.
    const fill = CUSTOM_HEADER_LIMITS.maxTotalBytes - 'X-Big'.length - 'X-Key'.length - 100;
    const big = (await sealHeaderPlan(
      planHeaderChange(undefined, { 'X-Big': 'a'.repeat(fill), 'X-Key': 'k'.repeat(100) }, false),
      sealer,
    ))!;
    expect(refusal(() => planHeaderChange(big, { 'X-Key': 'k'.repeat(101) }, false)).detail).toContain(
      `${CUSTOM_HEADER_LIMITS.maxTotalBytes + 1} bytes`,
    );
    expect(planHeaderChange(big, { 'X-Key': 'k'.repeat(99) }, false).toSeal['X-Key']).toHaveLength(99);
  });
});

describe('what readers see', () => {
  it('write scope: plain values; read scope: names only; secrets never', async () => {
    const headers = (await sealHeaderPlan(planHeaderChange(undefined, { 'X-Tenant': 't1', Cookie: 'c=1' }, false), sealer))!;
    expect(headersForRead(headers, 'write')).toEqual({ 'X-Tenant': 't1', Cookie: REDACTED });
    expect(headersForRead(headers, 'read')).toEqual({ 'X-Tenant': REDACTED, Cookie: REDACTED });
    expect(headersForRead(undefined, 'write')).toEqual({});
  });
  it('the evidence redacts every secret name, authorization included', () => {
    expect(redactRequestHeaders({ 'x-tenant': 't', authorization: 'Bearer abc', 'X-Api-Key': 'k', 'webhook-id': 'msg' })).toEqual({
      'x-tenant': 't',
      authorization: REDACTED,
      'X-Api-Key': REDACTED,
      'webhook-id': 'msg',
    });
  });
  it('auth reads back without its client secret', async () => {
    const auth = {
      type: 'oauth2_client_credentials' as const,
      tokenUrl: 'https://auth.example.com/token',
      clientId: 'c',
      clientSecret: await sealer.seal('s3cret'),
      scope: 'hooks',
    };
    expect(authForRead(auth)).toEqual({
      type: 'oauth2_client_credentials',
      tokenUrl: 'https://auth.example.com/token',
      clientId: 'c',
      scope: 'hooks',
    });
    expect(authForRead(undefined)).toBeNull();
  });
});

describe('rateLimitPerSecond', () => {
  it.each([1, 5, 1000, null])('%s is valid', (n) => expect(rateLimitRefusal(n)).toBeNull());
  it.each([0, 1001, 1.5, '5', -1])('%s is not', (n) => expect(rateLimitRefusal(n)).toMatch(/1 to 1000/));
});
