/**
 * The fuzz's requests: generated as plain data (so fast-check can print and replay them),
 * then made concrete against the running stack (its slug, tokens and the ids it has handed
 * out so far), and judged with what the contract says such a request must get.
 */
import fc from 'fast-check';
import type { ErrorTag } from '../../lambdas/contract/errors';
import { IdempotencyKeySchema } from '../../lambdas/contract/idempotency';
import { OPERATIONS, routeKind, type OperationDef } from '../../lambdas/contract/operations';
import { permissionsOf } from '../../lambdas/contract/permissions';
import { hostileString, instantString, jsonSchemaOf, mutatedObjectArbitrary, validArbitrary, type Hints } from './schema-arbitrary';

/** Every operation, by index (generated cases name an operation by its index). */
const OPS: readonly OperationDef[] = OPERATIONS;

/** Pools of ids the stack handed out, which cases address by index. */
export type Pool = 'endpoint' | 'delivery' | 'token' | 'job' | 'cursor';

/** A path parameter: the caller's own workspace, an id of a pool, or a literal (encoded as a path segment, or sent as is). */
type ParamValue =
  { readonly self: true } | { readonly pool: Pool; readonly index: number } | { readonly literal: string; readonly raw?: boolean };

/** Which token the Authorization header carries, and how it is spelled. */
export type TokenRef = 'admin' | 'read' | 'narrow' | 'revoked' | 'minted';
type AuthSpec =
  | { readonly kind: 'none' }
  | { readonly kind: 'token'; readonly token: TokenRef; readonly form: number }
  | { readonly kind: 'literal'; readonly value: string }
  | { readonly kind: 'duplicate'; readonly first: TokenRef | null; readonly second: TokenRef | null };

/** How a request's body is made. */
type BodySpec =
  | { readonly kind: 'json'; readonly value: unknown }
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'bytes'; readonly bytes: readonly number[] }
  | { readonly kind: 'deep'; readonly depth: number; readonly shape: 'array' | 'object' }
  | { readonly kind: 'big'; readonly bytes: number }
  | { readonly kind: 'utf16'; readonly value: unknown };

/** One generated request, before the stack's values are filled in. */
export interface FuzzCase {
  /** Which family of the generator made it (for the run's summary). */
  readonly family: string;
  readonly method: string;
  /** The operation whose path template builds the target; absent: `rawTarget`. */
  readonly op?: number;
  readonly params?: Readonly<Record<string, ParamValue>>;
  readonly rawTarget?: string;
  /** Query pairs, each encoded; or a literal query string. */
  readonly query?: readonly (readonly [string, string])[];
  readonly rawQuery?: string;
  readonly body?: BodySpec;
  readonly auth: AuthSpec;
  /** Content-Type: undefined → application/json when there is a body, null → none. */
  readonly contentType?: string | null;
  readonly idempotencyKey?: string;
  readonly headers?: readonly (readonly [string, string])[];
  /** Raw socket: for what fetch cannot send. */
  readonly raw?: boolean;
}

/** The running stack as the cases need it. */
export interface FuzzEnv {
  readonly slug: string;
  readonly tokens: Readonly<Record<TokenRef, string>>;
  readonly pools: Readonly<Record<Pool, readonly string[]>>;
}

/** What the generator needs to know of the stack before it starts. */
export interface GeneratorContext {
  readonly slug: string;
  /** A loopback receiver the URL guard accepts in the local stack. */
  readonly receiverPort: number;
  /** Names of the event-type catalogue. */
  readonly eventTypes: readonly string[];
  /** Largest bodies: over the gateway's limit (413). Rare: each costs 10 MiB. */
  readonly allowOversize: boolean;
}

const ROUTE_METHODS = ['GET', 'POST', 'PATCH', 'DELETE', 'PUT', 'HEAD', 'OPTIONS'] as const;

/** Spellings of `Authorization` for a good token: the first few are accepted, the rest are not. */
const AUTH_FORMS: readonly { readonly make: (t: string) => string; readonly accepted: boolean }[] = [
  { make: (t) => `Bearer ${t}`, accepted: true },
  { make: (t) => `bearer ${t}`, accepted: true },
  { make: (t) => `BEARER   ${t}`, accepted: true },
  { make: (t) => `Bearer\t${t}`, accepted: true },
  { make: (t) => `Basic ${Buffer.from(`x:${t}`).toString('base64')}`, accepted: false },
  { make: (t) => `Token ${t}`, accepted: false },
  { make: (t) => t, accepted: false },
  { make: (t) => `Bearer ${t}x`, accepted: false },
  { make: (t) => `Bearer ${t.slice(0, -1)}`, accepted: false },
  { make: (t) => `Bearer ${t} ${t}`, accepted: false },
  { make: (t) => `Bearer ${t},Bearer ${t}`, accepted: false },
  { make: (t) => `Bearer ${t.toUpperCase()}`, accepted: false },
  { make: (t) => `Bearer "${t}"`, accepted: false },
];

const LITERAL_AUTH = [
  '',
  'Bearer',
  'Bearer ',
  'Bearer whk_',
  `Bearer whk_${'A'.repeat(43)}`,
  `Bearer ${'a'.repeat(8000)}`,
  'Bearer null',
  'Bearer undefined',
  'Bearer \u00e9\u00e8',
  'Negotiate abc',
  'Bearer whk_../../x',
];

// ——— generation ———

function paramArbitrary(name: string, def: OperationDef): fc.Arbitrary<ParamValue> {
  if (name === 'slug') {
    return fc.oneof(
      { weight: 20, arbitrary: fc.constant<ParamValue>({ self: true }) },
      {
        weight: 1,
        arbitrary: fc.constantFrom<ParamValue>({ literal: 'other' }, { literal: 'nope' }, { literal: 'DEMO' }, { literal: 'a'.repeat(64) }),
      },
      { weight: 1, arbitrary: hostileString(63).map<ParamValue>((literal) => ({ literal })) },
    );
  }
  const pool: Pool | undefined = ({ endpointId: 'endpoint', deliveryId: 'delivery', tokenId: 'token', jobId: 'job' } as const)[
    name as 'endpointId'
  ];
  const shape = (def.params.shape as Record<string, import('zod').ZodType>)[name];
  const shaped = shape ? validArbitrary(jsonSchemaOf(shape)) : fc.string();
  return fc.oneof(
    {
      weight: 12,
      arbitrary: pool ? fc.nat().map<ParamValue>((index) => ({ pool, index })) : shaped.map<ParamValue>((v) => ({ literal: String(v) })),
    },
    // A well-shaped id nobody was given: a not-found answer.
    { weight: 3, arbitrary: shaped.map<ParamValue>((v) => ({ literal: String(v) })) },
    { weight: 2, arbitrary: hostileString(40).map<ParamValue>((literal) => ({ literal })) },
    // Another kind's id, the right prefix in lower case, a ULID that is one character off.
    {
      weight: 1,
      arbitrary: fc.constantFrom<ParamValue>(
        { literal: 'whe_01jd2y8m7k3v9q4t6w1x5z0abc' },
        { literal: 'whd_01JD2Y9P0R6S8T1V3W5X7Y9ZA' },
        { literal: 'tok_01JD2YA1B2C3D4E5F6G7H8J9KMU' },
        { literal: 'whj_' },
        { literal: 'whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC%00', raw: true },
      ),
    },
  );
}

function cursorArbitrary(): fc.Arbitrary<string | { pool: 'cursor'; index: number }> {
  const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v), 'utf8').toString('base64url');
  return fc.oneof(
    { weight: 3, arbitrary: fc.nat().map((index) => ({ pool: 'cursor' as const, index })) },
    // Cursors that decode, with hostile positions: empty and huge sort keys, other lists' ids.
    {
      weight: 3,
      arbitrary: fc
        .tuple(
          fc.oneof(fc.constantFrom('', 'x', '\u0000', 'A'.repeat(1500)), fc.string({ unit: 'binary', maxLength: 30 })),
          fc.constantFrom('whe_', 'whd_', 'tok_', 'aud_', 'ntf_', 'mem_', 'whj_', ''),
          fc.stringMatching(/^[0-9A-HJKMNP-TV-Z]{26}$/),
        )
        .map(([sortKey, prefix, ulid]) => b64([sortKey, `${prefix}${ulid}`])),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        b64('[]'),
        b64('[1,2]'),
        b64('{"a":1}'),
        b64('null'),
        b64('["a"]'),
        b64('"x"'),
        'e30',
        '!!!',
        '====',
        '-'.repeat(2049),
        'A'.repeat(2048),
      ),
    },
    { weight: 2, arbitrary: hostileString(2048) },
  );
}

/** Query pairs of an operation: mostly its own keys with valid, boundary or hostile values. */
function queryArbitrary(def: OperationDef): fc.Arbitrary<[string, string | { pool: 'cursor'; index: number }][]> {
  if (!def.query) return fc.constantFrom([], [['limit', '5']], [['x', 'y']]);
  const schema = jsonSchemaOf(def.query);
  const hints: Hints = {
    since: fc.oneof(
      instantString,
      fc.constantFrom(
        '2026-01-01',
        '2026-02-30',
        '2026-13-01T00:00:00Z',
        'yesterday',
        '+275760-09-13T00:00:00.000Z',
        '1970-01-01T00:00:00Z',
      ),
    ),
    until: fc.oneof(instantString, fc.constantFrom('2026-01-01', '2099-12-31T23:59:59.999Z', '0000-01-01T00:00:00Z')),
    status: fc.oneof(
      fc.subarray(['pending', 'delivered', 'failed', 'failed_permanent', 'dead_lettered'], { minLength: 1 }).map((s) => s.join(',')),
      fc.constantFrom('FAILED', 'failed,,', ' failed', 'x'),
    ),
    limit: fc.oneof(
      fc.integer({ min: -5, max: 250 }).map(String),
      fc.constantFrom('', '1.9', '1e2', 'NaN', 'Infinity', '-0', '0x10', '9'.repeat(400), ' 7 '),
    ),
  };
  const keys = Object.keys((schema.properties ?? {}) as Record<string, unknown>);
  const value = (key: string): fc.Arbitrary<string | { pool: 'cursor'; index: number }> => {
    if (key === 'cursor') return cursorArbitrary();
    const node = (schema.properties as Record<string, import('./schema-arbitrary').JsonSchema>)[key]!;
    return fc.oneof(
      { weight: 3, arbitrary: validArbitrary(node, schema, hints, key).map(String) },
      { weight: 1, arbitrary: hostileString(200) },
    );
  };
  const pair = fc.oneof(
    {
      weight: 6,
      arbitrary: fc.oneof(...keys.map((k) => value(k).map((v): [string, string | { pool: 'cursor'; index: number }] => [k, v]))),
    },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('LIMIT', 'limit[]', 'x', '', '__proto__', 'constructor'), hostileString(20)) },
  );
  return fc.array(pair, { maxLength: 4 });
}

function bodyHints(ctx: GeneratorContext): Hints {
  const receiver = (host: string) => fc.webPath().map((p) => `http://${host}:${ctx.receiverPort}${p || '/'}`);
  return {
    url: fc.oneof(
      { weight: 6, arbitrary: receiver('127.0.0.1') },
      { weight: 1, arbitrary: fc.constantFrom('127.1', '0x7f.0.0.1', '2130706433', '0177.0.0.1', '127.0.0.1.').chain(receiver) },
      // Refused by the URL guard: scheme, credentials, private and metadata addresses, single labels, too long, malformed.
      {
        weight: 3,
        arbitrary: fc.constantFrom(
          `ftp://127.0.0.1:${ctx.receiverPort}/`,
          'javascript:alert(1)',
          `http://user:pw@127.0.0.1:${ctx.receiverPort}/`,
          'https://10.0.0.1/hook',
          'https://169.254.169.254/latest/meta-data',
          'https://[::ffff:10.0.0.1]/',
          'https://[fe80::1%25eth0]/',
          'https://192.168.0.010/',
          'https://0/',
          'https://intranet/hook',
          'https://localhost.localdomain/',
          'https://a..b/',
          'https:///nohost',
          'http://127.0.0.1:0/',
          `https://${'a'.repeat(2040)}.io/`,
          'https://exa mple.com/',
          'https://%31%30.0.0.1/',
          'https://[::]/',
          'https://100.64.0.1/',
          'not a url',
        ),
      },
    ),
    eventTypes: fc.oneof(
      {
        weight: 6,
        arbitrary: fc.uniqueArray(fc.constantFrom(...ctx.eventTypes), { minLength: 1, maxLength: Math.min(5, ctx.eventTypes.length) }),
      },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          ['order.nope'],
          ['webhook.test_event', 'webhook.test_event'],
          ['WEBHOOK.TEST_EVENT'],
          [''],
          ['x'.repeat(201)],
          ['*'],
          ['webhook.*'],
        ),
      },
      { weight: 1, arbitrary: fc.array(fc.constantFrom(...ctx.eventTypes, 'order.nope'), { minLength: 101, maxLength: 101 }) },
    ),
    since: fc.oneof(instantString, fc.constantFrom('2026-01-01', '2026-02-30T00:00:00Z', 'now', '1970-01-01T00:00:00Z')),
    until: fc.oneof(instantString, fc.constantFrom('2026-01-01', '0001-01-01T00:00:00Z')),
  };
}

function jsonBodyArbitrary(def: OperationDef, ctx: GeneratorContext): fc.Arbitrary<BodySpec> {
  if (!def.body) return fc.constant<BodySpec>({ kind: 'json', value: {} });
  const schema = jsonSchemaOf(def.body);
  const hints = bodyHints(ctx);
  return fc
    .oneof(
      { weight: 5, arbitrary: validArbitrary(schema, schema, hints) },
      { weight: 4, arbitrary: mutatedObjectArbitrary(schema, schema, hints) },
    )
    .map<BodySpec>((value) => ({ kind: 'json', value }));
}

/** Bodies that are not what a JSON API expects: broken bytes, other encodings, depth, size. */
function hostileBodyArbitrary(ctx: GeneratorContext): fc.Arbitrary<BodySpec> {
  const text = fc.constantFrom(
    '',
    '   ',
    '{',
    '{"url":',
    '{}x',
    '{}{}',
    'null',
    '0',
    '"string"',
    '[]',
    'url=https%3A%2F%2Fa.example.com&eventTypes=x',
    '{"url":"x","url":1}',
    '{"name":"\\ud800","scopes":["read"]}',
    '{"since":1e999}',
    '{"__proto__":{"dryRun":true},"since":"2026-01-01T00:00:00Z"}',
    '{"constructor":{"prototype":{"enabled":false}}}',
    '\ufeff{"enabled":true}',
    '{"enabled":true}\u0000',
    '<xml/>',
    "{'single':'quotes'}",
    '{"a":NaN}',
  );
  const bytes = fc.constantFrom(
    [0xff, 0xfe, 0x7b, 0x7d],
    [0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d],
    [0xc0, 0xaf],
    [0xed, 0xa0, 0x80],
    [0xf4, 0x90, 0x80, 0x80],
    [0x00, 0x00, 0x00],
    [0x1f, 0x8b, 0x08, 0x00],
  );
  return fc.oneof(
    { weight: 6, arbitrary: text.map<BodySpec>((t) => ({ kind: 'text', text: t })) },
    { weight: 3, arbitrary: bytes.map<BodySpec>((b) => ({ kind: 'bytes', bytes: b })) },
    {
      weight: 2,
      arbitrary: fc
        .record({ depth: fc.integer({ min: 100, max: 100_000 }), shape: fc.constantFrom<'array' | 'object'>('array', 'object') })
        .map<BodySpec>((d) => ({ kind: 'deep', ...d })),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(...(ctx.allowOversize ? [10 * 1024 * 1024 + 1, 1_000_000, 4_000_000] : [1_000_000, 4_000_000]))
        .map<BodySpec>((n) => ({ kind: 'big', bytes: n })),
    },
    { weight: 1, arbitrary: fc.constant<BodySpec>({ kind: 'utf16', value: { enabled: true } }) },
  );
}

const CONTENT_TYPES = [
  'application/json; charset=utf-8',
  'application/json;charset=UTF-8',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'APPLICATION/JSON',
  'application/merge-patch+json',
  'application/vnd.api+json',
  'application/jsonx',
  'text/plain',
  'text/json',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  '*/*',
  'application/json, text/plain',
  'application/octet-stream',
];

const ODD_HEADERS: readonly (readonly [string, string])[] = [
  ['content-encoding', 'gzip'],
  ['content-encoding', 'br, identity'],
  ['accept', 'text/html'],
  ['accept', 'application/xml;q=1, */*;q=0'],
  ['accept-charset', 'utf-16'],
  ['x-http-method-override', 'DELETE'],
  ['x-forwarded-for', '127.0.0.1, 10.0.0.1'],
  ['x-amzn-trace-id', 'Root=1-00000000-000000000000000000000000'],
  ['cookie', 'token=whk_x; session=1'],
  ['origin', 'https://evil.example'],
  ['expect', '100-continue'],
  ['if-none-match', '*'],
  ['range', 'bytes=0-1'],
  ['x-idempotency-key', 'k'],
  ['user-agent', '\u00ff'.repeat(300)],
  ['upgrade', 'websocket'],
];

/** Idempotency keys: fresh, reused across requests (a repeat or another request), or invalid. */
const idempotencyKey = fc.oneof(
  { weight: 3, arbitrary: fc.uuid() },
  { weight: 2, arbitrary: fc.constantFrom('fuzz-key-1', 'fuzz-key-2', 'fuzz-key-3') },
  { weight: 2, arbitrary: fc.constantFrom('', 'k'.repeat(256), 'key with space', '\u00e9t\u00e9', 'k'.repeat(255)) },
);

/** The generator of one request. */
export function caseArbitrary(ctx: GeneratorContext): fc.Arbitrary<FuzzCase> {
  const opIndex = fc.nat({ max: OPS.length - 1 });
  const tokenRef = fc.oneof(
    { weight: 12, arbitrary: fc.constant<TokenRef>('admin') },
    { weight: 2, arbitrary: fc.constantFrom<TokenRef>('read', 'narrow') },
    { weight: 1, arbitrary: fc.constantFrom<TokenRef>('revoked', 'minted') },
  );
  const goodAuth = fc.constant<AuthSpec>({ kind: 'token', token: 'admin', form: 0 });
  // Built once per operation: schema export and regex compilation are too slow per case.
  const paramsByOp = new Map(
    OPS.map((def) => [def, fc.record(Object.fromEntries(Object.keys(def.params.shape).map((name) => [name, paramArbitrary(name, def)])))]),
  );
  const queryByOp = new Map(OPS.map((def) => [def, queryArbitrary(def)]));
  const bodyByOp = new Map(OPS.map((def) => [def, def.body ? jsonBodyArbitrary(def, ctx) : fc.constant(undefined)]));
  const paramsOf = (def: OperationDef) => paramsByOp.get(def)!;
  const bodyOf = (def: OperationDef) => bodyByOp.get(def)!;

  // The operation, as its schemas say, from the admin token (the bulk of the run).
  const schemaCase = opIndex.chain((i) => {
    const def = OPS[i]!;
    return fc
      .record({
        params: paramsOf(def),
        query: queryByOp.get(def)!,
        body: bodyOf(def),
        key: def.idempotent ? fc.option(idempotencyKey, { freq: 2 }) : fc.constant(null),
        token: tokenRef,
      })
      .map(({ params, query, body, key, token }): FuzzCase => ({
        family: 'schema',
        method: def.method,
        op: i,
        params,
        query: query as FuzzCase['query'],
        ...(body ? { body } : {}),
        auth: { kind: 'token', token, form: 0 },
        ...(key !== null ? { idempotencyKey: key } : {}),
      }));
  });

  // Bodies and content types nobody should send.
  const bodyCase = fc
    .record({
      i: fc.constantFrom(...OPS.flatMap((d, i) => (d.body || d.method === 'POST' ? [i] : []))),
      body: hostileBodyArbitrary(ctx),
      contentType: fc.option(fc.constantFrom(...CONTENT_TYPES), { freq: 2, nil: undefined }),
    })
    .chain(({ i, body, contentType }) =>
      paramsOf(OPS[i]!).map((params): FuzzCase => ({
        family: 'body',
        method: OPS[i]!.method,
        op: i,
        params,
        body,
        auth: { kind: 'token', token: 'admin', form: 0 },
        ...(contentType !== undefined ? { contentType } : {}),
      })),
    );

  // A valid body under a wrong or odd content type, or with odd headers.
  const headerCase = fc
    .record({
      i: opIndex,
      contentType: fc.option(fc.constantFrom(...CONTENT_TYPES, ''), { nil: null }),
      headers: fc.subarray([...ODD_HEADERS], { maxLength: 3 }),
    })
    .chain(({ i, contentType, headers }) => {
      const def = OPS[i]!;
      return fc.record({ params: paramsOf(def), body: bodyOf(def) }).map(({ params, body }): FuzzCase => ({
        family: 'headers',
        method: def.method,
        op: i,
        params,
        ...(body ? { body } : {}),
        auth: { kind: 'token', token: 'admin', form: 0 },
        contentType,
        headers,
        // Odd header bytes and duplicate lines need the raw socket.
        raw: headers.some(([, v]) => /[^\x20-\x7e]/.test(v)),
      }));
    });

  // Authorization in every spelling, and none.
  const authCase = fc
    .record({
      i: opIndex,
      auth: fc.oneof(
        fc.constant<AuthSpec>({ kind: 'none' }),
        fc
          .record({ token: tokenRef, form: fc.nat({ max: AUTH_FORMS.length - 1 }) })
          .map<AuthSpec>(({ token, form }) => ({ kind: 'token', token, form })),
        fc.constantFrom(...LITERAL_AUTH).map<AuthSpec>((value) => ({ kind: 'literal', value })),
        fc
          .record({ first: fc.option(tokenRef, { nil: null }), second: fc.option(tokenRef, { nil: null }) })
          .map<AuthSpec>((d) => ({ kind: 'duplicate', ...d })),
      ),
    })
    .chain(({ i, auth }) => {
      const def = OPS[i]!;
      return fc.record({ params: paramsOf(def), body: bodyOf(def) }).map(({ params, body }): FuzzCase => ({
        family: 'auth',
        method: def.method,
        op: i,
        params,
        ...(body ? { body } : {}),
        auth,
        raw: auth.kind === 'duplicate' || (auth.kind === 'literal' && /[^\x20-\x7e]/.test(auth.value)),
      }));
    });

  // Every route with every method, including the ones it does not have.
  const methodCase = fc
    .record({ i: opIndex, method: fc.constantFrom(...ROUTE_METHODS, 'patch', 'get', 'TRACE', 'CONNECT', 'FOO', 'PROPFIND') })
    .chain(({ i, method }) =>
      paramsOf(OPS[i]!).map((params): FuzzCase => ({
        family: 'method',
        method,
        op: i,
        params,
        auth: goodAuthSpec,
        // fetch refuses TRACE and CONNECT and upper-cases only the standard methods.
        raw: !['GET', 'POST', 'PATCH', 'DELETE', 'PUT', 'HEAD', 'OPTIONS', 'patch'].includes(method),
      })),
    );

  // Targets that are no route, or a route spelled oddly.
  const targetCase = fc
    .record({
      target: fc.oneof(
        fc.constantFrom(
          '/',
          '/workspaces',
          '/workspaces/',
          '/workspaces/{slug}',
          '/workspaces/{slug}/',
          '/workspaces/{slug}/nope',
          '/workspaces/{slug}//webhooks',
          '/workspaces/{slug}/webhooks/',
          '/workspaces/{slug}/./webhooks',
          '/workspaces/{slug}/x/../webhooks',
          '/workspaces/{slug}/%2e%2e/{slug}/webhooks',
          '/workspaces/{slug}%2Fwebhooks',
          '/WORKSPACES/{slug}/webhooks',
          '/workspaces/{slug}/Webhooks',
          '/workspaces/{slug}/webhooks/deliveries',
          '/workspaces/{slug}/webhooks/deliveries/',
          '/workspaces/{slug}/jobs',
          '/workspaces/{slug}/webhooks;x=1',
          '/workspaces/{slug}/webhooks%00',
          '/workspaces/{slug}/webhooks%',
          '/workspaces/{slug}/webhooks#frag',
          '/workspaces/{slug}/webhooks/whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC/health/x',
          `/workspaces/{slug}/${'a'.repeat(4000)}`,
          '//workspaces/{slug}/webhooks',
          '/openapi.json/x',
          '/local/events',
          '/mcp',
          '*',
          'http://evil.example/workspaces/{slug}/webhooks',
          'http://[',
          '/\u00e9',
        ),
        fc.webPath().filter((p) => !/^\/(openapi\.json|reference|console|local|mcp)(\/|$)/.test(p)),
      ),
      method: fc.constantFrom('GET', 'POST', 'DELETE', 'PATCH', 'PUT', 'HEAD'),
    })
    .map(({ target, method }): FuzzCase => ({
      family: 'target',
      method,
      rawTarget: target,
      auth: goodAuthSpec,
      // The special targets only a raw socket sends as they are.
      raw: !target.startsWith('/') || /[^\x21-\x7e]|%$|%00|#/.test(target) || target.includes('/./') || target.includes('/../'),
    }));

  return fc.oneof(
    { weight: 40, arbitrary: schemaCase },
    { weight: 10, arbitrary: bodyCase },
    { weight: 10, arbitrary: headerCase },
    { weight: 12, arbitrary: authCase },
    { weight: 10, arbitrary: methodCase },
    { weight: 6, arbitrary: targetCase },
    {
      weight: 2,
      arbitrary: goodAuth.map((auth): FuzzCase => ({ family: 'target', method: 'GET', rawTarget: '/workspaces/{slug}/overview', auth })),
    },
  );
}

const goodAuthSpec: AuthSpec = { kind: 'token', token: 'admin', form: 0 };

// ——— making a case concrete ———

/** A request ready to send. */
export interface WireRequest {
  readonly method: string;
  /** The request target (path and query), as sent. */
  readonly target: string;
  readonly headers: readonly (readonly [string, string | Buffer])[];
  readonly body?: Buffer;
  readonly raw: boolean;
}

/** Headers fetch will not send as given (it owns them, or refuses them). */
const FETCH_OWNED_HEADERS = new Set([
  'expect',
  'connection',
  'transfer-encoding',
  'upgrade',
  'keep-alive',
  'te',
  'host',
  'content-length',
  'trailer',
]);

/** A path segment percent-encoded as a browser would, lone surrogates included (as U+FFFD). */
function encodeSegment(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return [...Buffer.from(text, 'utf8')]
      .map((b) =>
        /[A-Za-z0-9\-_.~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
      )
      .join('');
  }
}

function pick(pool: readonly string[], index: number): string | undefined {
  return pool.length ? pool[index % pool.length] : undefined;
}

function paramString(v: ParamValue, env: FuzzEnv, name: string): { text: string; raw: boolean } {
  if ('self' in v) return { text: env.slug, raw: false };
  if ('pool' in v) {
    const fallback =
      {
        endpointId: 'whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC',
        deliveryId: 'whd_01JD2Y9P0R6S8T1V3W5X7Y9ZAB',
        tokenId: 'tok_01JD2YA1B2C3D4E5F6G7H8J9KM',
        jobId: 'whj_01JD2YC5D6E7F8G9H0J1K2M3NP',
      }[name] ?? 'x';
    return { text: pick(env.pools[v.pool], v.index) ?? fallback, raw: false };
  }
  return { text: v.literal, raw: v.raw === true };
}

function bodyBytes(spec: BodySpec): Buffer {
  switch (spec.kind) {
    case 'json':
      return Buffer.from(JSON.stringify(spec.value) ?? 'null', 'utf8');
    case 'text':
      return Buffer.from(spec.text, 'utf8');
    case 'bytes':
      return Buffer.from(spec.bytes);
    case 'deep':
      return Buffer.from(
        spec.shape === 'array'
          ? `${'['.repeat(spec.depth)}${']'.repeat(spec.depth)}`
          : `${'{"a":'.repeat(spec.depth)}1${'}'.repeat(spec.depth)}`,
      );
    case 'big': {
      // Exactly `bytes` long: one past the gateway's limit is the boundary that matters.
      const frame = ['{"name":"', '","scopes":["read"]}'] as const;
      return Buffer.from(`${frame[0]}${'n'.repeat(Math.max(0, spec.bytes - frame[0].length - frame[1].length))}${frame[1]}`);
    }
    case 'utf16':
      return Buffer.from(JSON.stringify(spec.value), 'utf16le');
  }
}

function authHeaders(auth: AuthSpec, env: FuzzEnv): [string, string][] {
  switch (auth.kind) {
    case 'none':
      return [];
    case 'token':
      return [['authorization', AUTH_FORMS[auth.form]!.make(env.tokens[auth.token])]];
    case 'literal':
      return [['authorization', auth.value]];
    case 'duplicate':
      return [
        ['authorization', auth.first ? `Bearer ${env.tokens[auth.first]}` : 'Bearer nope'],
        ['authorization', auth.second ? `Bearer ${env.tokens[auth.second]}` : 'Bearer nope'],
      ];
  }
}

/** The case with the stack's slug, tokens and ids filled in. */
export function materialize(c: FuzzCase, env: FuzzEnv): WireRequest {
  let target: string;
  let raw = c.raw === true;
  const body = c.body ? bodyBytes(c.body) : undefined;
  if (c.op !== undefined) {
    const def = OPS[c.op]!;
    let path = def.path;
    for (const [name, v] of Object.entries(c.params ?? {})) {
      const { text, raw: asIs } = paramString(v, env, name);
      if (asIs) raw = true;
      path = path.replace(`{${name}}`, asIs ? text : encodeSegment(text));
    }
    const search = new URLSearchParams();
    for (const [k, v] of c.query ?? [])
      search.append(k, typeof v === 'string' ? v : (pick(env.pools.cursor, (v as { index: number }).index) ?? ''));
    const qs = c.rawQuery ?? search.toString();
    target = qs ? `${path}?${qs}` : path;
  } else {
    target = (c.rawTarget ?? '/').replaceAll('{slug}', env.slug);
  }
  // What fetch cannot carry: a body on GET/HEAD, methods it forbids.
  if (body && ['GET', 'HEAD'].includes(c.method.toUpperCase())) raw = true;
  const headers: [string, string | Buffer][] = [...authHeaders(c.auth, env)];
  if (c.contentType !== null && (c.contentType !== undefined || body)) headers.push(['content-type', c.contentType ?? 'application/json']);
  if (c.idempotencyKey !== undefined) headers.push(['idempotency-key', c.idempotencyKey]);
  for (const [k, v] of c.headers ?? []) headers.push([k, v]);
  // fetch refuses header values outside latin1 and with control characters, and owns a few headers.
  if (headers.some(([k, v]) => FETCH_OWNED_HEADERS.has(k) || (typeof v === 'string' && /[^\x20-\x7e\t\u00a0-\u00ff]/.test(v)))) raw = true;
  // fetch upper-cases the methods it knows (PATCH is not among them); a raw socket sends them as they are.
  const method =
    !raw && ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT'].includes(c.method.toUpperCase()) ? c.method.toUpperCase() : c.method;
  return { method, target, headers, ...(body ? { body } : {}), raw };
}

/** The values the server parses out of a request that reaches `def` (path parameters decoded, query last-wins). */
interface Logical {
  readonly params: Record<string, string>;
  readonly query: Record<string, string>;
  readonly body: Buffer | undefined;
}

/** The path parameters and query a request to `def` carries, as the gateway hands them over. */
function logicalOf(def: OperationDef, wire: WireRequest): Logical | undefined {
  const route = ROUTES.find((r) => r.def === def);
  let url: URL;
  try {
    url = new URL(wire.target, 'http://localhost');
  } catch {
    return undefined;
  }
  const m = route?.pattern.exec(url.pathname);
  if (!route || !m) return undefined;
  const params: Record<string, string> = {};
  route.names.forEach((name, i) => {
    const segment = m[i + 1] ?? '';
    try {
      params[name] = decodeURIComponent(segment);
    } catch {
      params[name] = segment;
    }
  });
  return { params, query: Object.fromEntries(url.searchParams), body: wire.body };
}

// ——— what the contract says a request gets ———

interface Route {
  readonly def: OperationDef;
  readonly pattern: RegExp;
  readonly names: string[];
}

const ROUTES: Route[] = OPS.map((def) => {
  const names: string[] = [];
  const source = def.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    names.push(name);
    return '([^/]+)';
  });
  return { def, pattern: new RegExp(`^${source}/?$`), names };
}).sort((a, b) => literals(b.def.path) - literals(a.def.path));

function literals(path: string): number {
  return path.split('/').filter((s) => s && !s.startsWith('{')).length;
}

/** The operation a method and target reach, as API Gateway routes them (a literal segment before a `{param}`). */
export function routeOf(method: string, target: string): OperationDef | undefined {
  let pathname: string;
  try {
    pathname = new URL(target, 'http://localhost').pathname;
  } catch {
    return undefined;
  }
  // The path alone picks the resource (a literal segment before a `{param}`), then its methods
  // (case-sensitive, RFC 9110: `patch` is not PATCH): DELETE on /webhooks/filter-test is no route,
  // never deleteWebhook.
  const resource = ROUTES.find((r) => r.pattern.test(pathname))?.def.path;
  return ROUTES.find((r) => r.def.path === resource && r.def.method === method)?.def;
}

/** What the contract says the request must get, beyond "declared": exactly these tags, or a success among them. */
export interface Expectation {
  readonly tags: readonly ErrorTag[];
  readonly successAllowed: boolean;
  readonly why: string;
}

/** The refusal a token route's Authorization, workspace and permission imply (check order); undefined: none is sure; null: none. */
function tokenRefusal(c: FuzzCase, def: OperationDef, env: FuzzEnv, logical: ReturnType<typeof logicalOf>): Expectation | undefined | null {
  if (c.auth.kind === 'none' || c.auth.kind === 'literal') return { tags: ['Unauthorized'], successAllowed: false, why: 'no usable token' };
  if (c.auth.kind === 'duplicate') return undefined;
  if (!AUTH_FORMS[c.auth.form]!.accepted)
    return { tags: ['Unauthorized'], successAllowed: false, why: `Authorization spelled "${AUTH_FORMS[c.auth.form]!.make('<token>')}"` };
  const token: TokenRef = c.auth.token;
  if (token === 'revoked') return { tags: ['Unauthorized'], successAllowed: false, why: 'revoked token' };
  if (token === 'minted') return undefined; // the fuzz may have revoked it meanwhile
  if (!logical) return undefined;
  // A workspace-less route (docs/behaviour.md#staff-sign-in) names no workspace to check.
  if (!def.workspaceless && logical.params.slug !== env.slug)
    return { tags: ['WorkspaceNotFound'], successAllowed: false, why: 'another workspace' };
  // The fuzz's tokens are workspace tokens: a staff-only route refuses them whatever their scopes.
  if (def.staffOnly) return { tags: ['Forbidden'], successAllowed: false, why: 'a workspace token on a staff-only route' };
  const scopes = token === 'admin' ? ['admin'] : token === 'read' ? ['read'] : ['webhook:list'];
  if (def.permission && !permissionsOf(scopes).has(def.permission))
    return { tags: ['Forbidden'], successAllowed: false, why: `${token} token lacks ${def.permission}` };
  return null;
}

/** The answer the contract implies for a case, where it implies one (check order: docs/behaviour.md#check-order). */
export function expectationOf(c: FuzzCase, wire: WireRequest, env: FuzzEnv, def: OperationDef | undefined): Expectation | undefined {
  if (!def) {
    const path = (() => {
      try {
        return new URL(wire.target, 'http://localhost').pathname;
      } catch {
        return null;
      }
    })();
    // The local stack's own extra routes answer for themselves.
    if (path === null || /^\/(mcp|local\/events|openapi\.json|reference|console)(\/|$)/.test(path)) return undefined;
    // A method HTTP does not know (or spelled in lower case) may be refused by the HTTP parser itself.
    const standard = ['GET', 'POST', 'PATCH', 'DELETE', 'PUT', 'HEAD', 'OPTIONS', 'TRACE', 'CONNECT'].includes(wire.method);
    // fetch sends the target appended to the API's address, dot segments removed (`/////.` goes
    // out as `/////`): a path the front cannot read as one (it starts with `//`) is its 400.
    const unreadable = (() => {
      try {
        new URL(new URL(`http://localhost${wire.target}`).pathname, 'http://localhost');
        return false;
      } catch {
        return true;
      }
    })();
    return {
      tags: wire.raw || !standard || unreadable ? ['RouteNotFound', 'ValidationError'] : ['RouteNotFound'],
      successAllowed: false,
      why: 'no route',
    };
  }
  if (wire.body && wire.body.length > 10 * 1024 * 1024)
    return { tags: ['PayloadTooLarge'], successAllowed: false, why: 'body over 10 MiB' };
  const kind = routeKind(def);
  // A platform route (`iam`): the fuzz holds no SigV4 credential, so every request is API Gateway's 403 before anything else.
  if (kind === 'iam') return { tags: ['Forbidden'], successAllowed: false, why: 'platform route without a valid SigV4 signature' };
  const logical = logicalOf(def, wire);
  // A public route takes no token: its input decides.
  if (kind === 'token') {
    const refused = tokenRefusal(c, def, env, logical);
    if (refused !== null) return refused;
  }
  if (!logical) return undefined;
  // Input, as the contract's own schemas parse it. Path, query and body are one step of the
  // check order ("input parsing: 400, 415"): a body refused as not JSON may come before a bad path.
  let body: { tag: ErrorTag; why: string } | null = null;
  if (def.body) {
    const text = logical.body?.toString('utf8') ?? '';
    if (text.trim() === '') body = { tag: 'ValidationError', why: 'no body' };
    else {
      try {
        if (!def.body.safeParse(JSON.parse(text)).success) body = { tag: 'ValidationError', why: 'body fails its schema' };
      } catch {
        const type = wire.headers.find(([k]) => k === 'content-type')?.[1];
        const typeText = typeof type === 'string' ? type.trim() : undefined;
        const json = !typeText || /^application\/([a-z.+-]*\+)?json\b/i.test(typeText);
        body = { tag: json ? 'ValidationError' : 'UnsupportedMediaType', why: 'body is not JSON' };
      }
    }
  }
  const params = def.params.safeParse(logical.params);
  const query = def.query?.safeParse(logical.query);
  if (!params.success || (query && !query.success)) {
    return {
      tags: ['ValidationError', ...(body ? [body.tag] : [])],
      successAllowed: false,
      why: `${params.success ? 'query' : 'path'} fails its schema`,
    };
  }
  if (body) return { tags: [body.tag], successAllowed: false, why: body.why };
  if (def.idempotent && c.idempotencyKey !== undefined && !IdempotencyKeySchema.safeParse(c.idempotencyKey).success) {
    return { tags: ['ValidationError'], successAllowed: false, why: 'Idempotency-Key fails its schema' };
  }
  // Valid input: a success, or one of the operation's own refusals, never a ValidationError.
  const domain = def.errors.filter((t) => t !== 'ValidationError');
  return {
    tags: [...domain, ...(def.idempotent ? (['IdempotencyKeyReused', 'IdempotencyKeyInProgress'] as const) : []), 'RateLimited'],
    successAllowed: true,
    why: 'valid input',
  };
}
