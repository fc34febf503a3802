/**
 * The local stand-in for API Gateway and for the MCP function's URL: routes HTTP to the same
 * Lambda handlers, authorizer first, exactly as the deployed REST API runs them, and refuses or
 * gives up where AWS would (docs/behaviour.md#limits). Holds no product logic: errors come from
 * the same problem builder.
 */
import { randomUUID } from 'node:crypto';
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyEventV2,
  APIGatewayProxyResult,
  APIGatewayTokenAuthorizerEvent,
  Context,
} from 'aws-lambda';
import {
  API_GATEWAY_INTEGRATION_TIMEOUT_SECONDS,
  API_GATEWAY_PAYLOAD_BYTES,
  FUNCTION_URL_REFUSALS,
  LAMBDA_SYNC_PAYLOAD_BYTES,
} from '#lambdas/contract/aws-limits';
import { AppError, GATEWAY_DETAILS } from '#lambdas/contract/errors';
import { kebab, OPERATIONS, routeKind, type OperationDef } from '#lambdas/contract/operations';
import { problemResponse } from '#lambdas/composition/tools';
import { lambdaContext, loadHandler } from './lambda-loader';
import type { ReceivedRequest } from './sigv4-verifier';

type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
type AuthorizerHandler = (event: APIGatewayTokenAuthorizerEvent) => Promise<APIGatewayAuthorizerResult>;

/** API Gateway's payload limit; a function URL's is lower, so no body over it is ever used. */
const MAX_BODY_BYTES = API_GATEWAY_PAYLOAD_BYTES;

/** How long the front waits for a REST function by default: API Gateway's integration timeout. */
export const INTEGRATION_TIMEOUT_MS = API_GATEWAY_INTEGRATION_TIMEOUT_SECONDS * 1000;

/** Bytes of a Lambda request or response as Lambda counts them: the serialized JSON. */
function lambdaPayloadBytes(payload: unknown): number {
  return Buffer.byteLength(JSON.stringify(payload), 'utf8');
}

/**
 * What API Gateway answers for a function's answer over Lambda's response limit, or an event
 * over its request limit: the 502 of its gateway responses (lib/constructs/problem-responses.ts).
 */
function noUsableAnswer(requestId: string): APIGatewayProxyResult {
  return problemResponse(new AppError('BadGateway', GATEWAY_DETAILS.noUsableAnswer), requestId);
}

/** A function's answer as API Gateway passes it on: over Lambda's response limit, Lambda refuses it. */
function asDelivered(result: APIGatewayProxyResult, requestId: string): APIGatewayProxyResult {
  return lambdaPayloadBytes(result) > LAMBDA_SYNC_PAYLOAD_BYTES ? noUsableAnswer(requestId) : result;
}

interface Route {
  readonly def: OperationDef;
  readonly pattern: RegExp;
  readonly names: string[];
}

const routes: Route[] = (OPERATIONS as readonly OperationDef[])
  .map((def) => {
    const names: string[] = [];
    // Contract paths are plain segments and `{param}`s.
    const source = def.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
      names.push(name);
      return '([^/]+)';
    });
    return { def, pattern: new RegExp(`^${source}/?$`), names };
  })
  // As API Gateway: a literal segment wins over a `{param}` sibling (`/webhooks/deliveries/…` vs `/webhooks/{endpointId}`).
  .sort((a, b) => bySpecificity(a.def.path, b.def.path));

/**
 * Resource paths as API Gateway prefers them for a request: segment by segment, a literal before a
 * `{param}` (paths of different lengths never match one request; they are ordered by length).
 */
function bySpecificity(a: string, b: string): number {
  const as = a.split('/');
  const bs = b.split('/');
  if (as.length !== bs.length) return as.length - bs.length;
  for (let i = 0; i < as.length; i++) {
    const aLiteral = !as[i]!.startsWith('{');
    if (aLiteral !== !bs[i]!.startsWith('{')) return aLiteral ? -1 : 1;
  }
  return 0;
}

function readBody(req: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    // Past the limit the rest is drained, not kept, so the client still gets its 413.
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY_BYTES) chunks.push(c);
    });
    req.on('end', () => resolveBody(size > MAX_BODY_BYTES ? null : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Statuses that carry no content, so no content length either (RFC 9110 §8.6, §15.4.5). */
const NO_CONTENT = new Set([204, 304]);

function send(res: ServerResponse, result: APIGatewayProxyResult): void {
  const body = result.isBase64Encoded ? Buffer.from(result.body, 'base64') : Buffer.from(result.body ?? '', 'utf8');
  if (NO_CONTENT.has(result.statusCode)) {
    res.writeHead(result.statusCode, result.headers as Record<string, string>);
    res.end();
    return;
  }
  res.writeHead(result.statusCode, { ...(result.headers as Record<string, string>), 'content-length': String(body.length) });
  res.end(body);
}

/**
 * A REST function's answer, or API Gateway's 504 once `timeoutMs` passed without one (its
 * INTEGRATION_TIMEOUT gateway response). The function keeps running, as a Lambda invocation does
 * after API Gateway stopped waiting; what it answers then goes nowhere.
 */
async function withinIntegrationTimeout(
  answer: Promise<APIGatewayProxyResult>,
  timeoutMs: number,
  requestId: string,
): Promise<APIGatewayProxyResult> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<APIGatewayProxyResult>((resolve) => {
    timer = setTimeout(() => resolve(problemResponse(new AppError('GatewayTimeout', GATEWAY_DETAILS.timeout), requestId)), timeoutMs);
  });
  // A late failure is the invocation's own (logged by its handler), not the client's.
  answer.catch(() => undefined);
  try {
    return await Promise.race([answer, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/** A function URL's own answer (no gateway responses there): its status and Lambda's short JSON message. */
function functionUrlRefusal(refusal: { readonly status: number; readonly message: string }): APIGatewayProxyResult {
  return {
    statusCode: refusal.status,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ Message: refusal.message }),
  };
}

/**
 * A function behind a Lambda function URL in BUFFERED mode (the MCP function), served on its own
 * path: `function` is its entry in `lambdas/functions/`.
 */
interface FunctionUrlRoute {
  readonly path: string;
  readonly function: string;
}

/**
 * Invokes a function URL's function as the URL does (payload format 2.0): an event over the
 * buffered payload limit is refused with 413 before the function runs, a result over it becomes
 * the URL's 502. No API Gateway limit applies here.
 */
async function invokeFunctionUrl(
  route: FunctionUrlRoute,
  req: IncomingMessage,
  body: Buffer,
  url: URL,
  requestId: string,
): Promise<APIGatewayProxyResult> {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(',') : v;
  const event = {
    version: '2.0',
    routeKey: '$default',
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    headers,
    isBase64Encoded: false,
    ...(body.length ? { body: body.toString('utf8') } : {}),
    requestContext: {
      requestId,
      domainName: headers.host ?? 'localhost',
      http: {
        method: req.method ?? 'GET',
        path: url.pathname,
        protocol: 'HTTP/1.1',
        sourceIp: '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
    },
  } as unknown as APIGatewayProxyEventV2;
  if (lambdaPayloadBytes(event) > LAMBDA_SYNC_PAYLOAD_BYTES) return functionUrlRefusal(FUNCTION_URL_REFUSALS.requestTooLarge);
  const handler = await loadHandler<(e: APIGatewayProxyEventV2) => Promise<APIGatewayProxyResult>>(route.function);
  const result = await handler(event);
  return lambdaPayloadBytes(result) > LAMBDA_SYNC_PAYLOAD_BYTES ? functionUrlRefusal(FUNCTION_URL_REFUSALS.responseTooLarge) : result;
}

/** Extra routes served before the REST operations (docs, MCP). */
export type ExtraRoute = (req: IncomingMessage, body: Buffer, url: URL, requestId: string) => Promise<APIGatewayProxyResult | null>;

/** Writes a refusal straight to the socket (no response object exists here) and closes it. */
function refuseOnSocket(socket: Duplex, refusal: AppError): void {
  const result = problemResponse(refusal, randomUUID());
  const body = Buffer.from(result.body, 'utf8');
  const headers = Object.entries({
    ...(result.headers as Record<string, string>),
    'content-length': String(body.length),
    connection: 'close',
  })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.end(
    Buffer.concat([
      Buffer.from(`HTTP/1.1 ${result.statusCode} ${STATUS_CODES[result.statusCode] ?? ''}\r\n${headers}\r\n`, 'latin1'),
      body,
    ]),
  );
}

/**
 * A request Node's HTTP parser refused (bad method, header or chunk, headers over its 16 KiB
 * limit, a request that timed out): answered as problem+json like every other refusal (API
 * Gateway renders its own refusals the same way), instead of Node's bare status line.
 */
function refuseUnparsable(error: NodeJS.ErrnoException, socket: Duplex): void {
  // Node's own guard: write only if the socket can take it and no response is under way on it.
  const inProgress = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
  if (error.code === 'ECONNRESET' || !socket.writable || inProgress) {
    socket.destroy();
    return;
  }
  refuseOnSocket(
    socket,
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new AppError('PayloadTooLarge', 'The request line and headers exceed 16 KiB')
      : new AppError('ValidationError', `The request is not valid HTTP/1.1 (${error.code ?? 'unparsable'})`),
  );
}

/** CONNECT (a tunnel): no route takes it (without this Node just closes the connection). */
function refuseTunnel(req: IncomingMessage, socket: Duplex): void {
  socket.on('error', () => socket.destroy());
  refuseOnSocket(socket, new AppError('RouteNotFound', `No route ${req.method ?? ''} ${req.url ?? ''}`));
}

/**
 * API Gateway's `AWS_IAM` check with the resource policy, for an `iam` route: the verified
 * principal's ARN, or the refusal's detail (403).
 */
export type PlatformAuthenticator = (request: ReceivedRequest) => { readonly principalArn: string } | { readonly refused: string };

/** Options of {@link createHttpFront}. */
export interface HttpFrontOptions {
  /** The `iam` routes' check (bin/local/sigv4-verifier.ts). @default every `iam` request refused (403) */
  readonly platformAuth?: PlatformAuthenticator;
  /** Routes served before the REST operations, behind the same API Gateway limits. */
  readonly extraRoutes?: readonly ExtraRoute[];
  /** Functions behind their own function URL, with the URL's limits instead of API Gateway's. */
  readonly functionUrls?: readonly FunctionUrlRoute[];
  /** How long a REST function may take before API Gateway's 504 (tests shorten it). @default INTEGRATION_TIMEOUT_MS */
  readonly integrationTimeoutMs?: number;
}

/** What API Gateway puts in `requestContext` about the caller, by the route's kind. */
interface CallerContext {
  readonly authorizer?: Record<string, unknown>;
  readonly identity: { readonly sourceIp: string; readonly userArn: string | null };
}

/**
 * The caller of a request as API Gateway establishes it before the function runs, or its refusal:
 * a token route's TOKEN authorizer (no header → 401 without a call), an `iam` route's signature
 * and allowed principal (403), nothing for a `public` route.
 */
async function callerIdentity(
  def: OperationDef,
  req: IncomingMessage,
  body: Buffer,
  path: string,
  options: HttpFrontOptions,
  method: string,
): Promise<CallerContext | AppError> {
  const sourceIp = req.socket.remoteAddress ?? '127.0.0.1';
  const kind = routeKind(def);
  if (kind === 'public') return { identity: { sourceIp, userArn: null } };
  if (kind === 'iam') {
    const verdict = options.platformAuth?.({ method, target: req.url ?? '/', headers: req.headers, body }) ?? {
      refused: 'No IAM principal is allowed to call the platform API here',
    };
    if ('refused' in verdict) return new AppError('Forbidden', verdict.refused);
    return { identity: { sourceIp, userArn: verdict.principalArn } };
  }
  const authorization = req.headers.authorization;
  if (!authorization) return new AppError('Unauthorized', 'Send a workspace API token as `Authorization: Bearer <token>`');
  const authorizer = await loadHandler<AuthorizerHandler>('authorizer');
  let policy: APIGatewayAuthorizerResult;
  try {
    policy = await authorizer({
      type: 'TOKEN',
      authorizationToken: authorization,
      methodArn: `arn:aws:execute-api:local:000000000000:local/local/${method}${path}`,
    });
  } catch (e) {
    if ((e as Error).message === 'Unauthorized') return new AppError('Unauthorized', 'Unknown or revoked API token');
    throw e;
  }
  if (policy.policyDocument.Statement.some((s) => s.Effect === 'Deny')) {
    return new AppError('Forbidden', 'The token is not allowed to call this API');
  }
  return {
    authorizer: { ...(policy.context ?? {}), principalId: policy.principalId },
    identity: { sourceIp, userArn: null },
  };
}

/** Creates the local API server. */
export function createHttpFront(options: HttpFrontOptions = {}): Server {
  // No Host header is not worth a bare 400 from Node: nothing here routes on the host.
  const server = createServer({ requireHostHeader: false }, (req, res) => {
    const requestId = randomUUID();
    handle(req, requestId, options)
      .then((result) => send(res, result))
      .catch((error: unknown) => send(res, problemResponse(error, requestId)));
  });
  server.on('clientError', refuseUnparsable);
  server.on('connect', refuseTunnel);
  return server;
}

/** The request target as a URL; null when it does not parse (`GET http://[ HTTP/1.1`). */
function targetOf(req: IncomingMessage): URL | null {
  try {
    return new URL(req.url ?? '/', 'http://localhost');
  } catch {
    return null;
  }
}

async function handle(req: IncomingMessage, requestId: string, options: HttpFrontOptions): Promise<APIGatewayProxyResult> {
  const body = await readBody(req);
  const url = targetOf(req);
  if (!url) return problemResponse(new AppError('ValidationError', 'The request target is not a valid path'), requestId);
  const functionUrl = options.functionUrls?.find((f) => f.path === url.pathname);
  if (functionUrl)
    return body === null
      ? functionUrlRefusal(FUNCTION_URL_REFUSALS.requestTooLarge)
      : invokeFunctionUrl(functionUrl, req, body, url, requestId);
  if (body === null) return problemResponse(new AppError('PayloadTooLarge', GATEWAY_DETAILS.requestTooLarge), requestId);
  for (const extra of options.extraRoutes ?? []) {
    const result = await extra(req, body, url, requestId);
    if (result) return asDelivered(result, requestId);
  }
  const method = (req.method ?? 'GET').toUpperCase();
  // As API Gateway: the path alone picks the resource, then the method must be one of its own
  // (`GET /webhooks/filter-test` is no route, never `GET /webhooks/{endpointId}`).
  let match: { route: Route; values: string[] } | undefined;
  const resource = routes.find((route) => route.pattern.test(url.pathname));
  const chosen = routes.find((r) => r.def.path === resource?.def.path && r.def.method === method);
  const m = chosen?.pattern.exec(url.pathname);
  if (chosen && m) match = { route: chosen, values: m.slice(1) };
  if (!match) return problemResponse(new AppError('RouteNotFound', `No route ${method} ${url.pathname}`), requestId);

  const identity = await callerIdentity(match.route.def, req, body, url.pathname, options, method);
  if (identity instanceof AppError) return problemResponse(identity, requestId);

  const { route, values } = match;
  const pathParameters: Record<string, string> = {};
  route.names.forEach((name, i) => {
    const raw = values[i] ?? '';
    try {
      pathParameters[name] = decodeURIComponent(raw);
    } catch {
      pathParameters[name] = raw;
    }
  });
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(',') : v;
  const query = [...url.searchParams.keys()].length ? Object.fromEntries(url.searchParams) : null;
  const event = {
    resource: route.def.path,
    path: url.pathname,
    httpMethod: method,
    headers,
    multiValueHeaders: {},
    queryStringParameters: query,
    multiValueQueryStringParameters: null,
    pathParameters,
    stageVariables: null,
    body: body.length ? body.toString('utf8') : null,
    isBase64Encoded: false,
    requestContext: {
      requestId,
      ...identity,
      httpMethod: method,
      path: url.pathname,
      resourcePath: route.def.path,
      stage: 'local',
    },
  } as unknown as APIGatewayProxyEvent;
  // Under API Gateway's limit but over Lambda's: the invocation is refused, the function never runs.
  if (lambdaPayloadBytes(event) > LAMBDA_SYNC_PAYLOAD_BYTES) return noUsableAnswer(requestId);
  const handler = await loadHandler<ProxyHandler>(kebab(route.def.operationId));
  const answer = handler(event, lambdaContext(route.def.operationId, requestId));
  return asDelivered(await withinIntegrationTimeout(answer, options.integrationTimeoutMs ?? INTEGRATION_TIMEOUT_MS, requestId), requestId);
}
