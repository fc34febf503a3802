/**
 * The REST handler of an operation: middy middlewares (error → problem+json,
 * caller and workspace check, rate limit, permission, input parsing) around one
 * operation call. Every REST function is `restHandler(id, impl)`; nothing else. The caller
 * depends on the route's kind (docs/architecture.md#route-kinds): a token route's workspace
 * token, an `iam` route's verified IAM principal, a `public` route's client address.
 */
import middy from '@middy/core';
import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { AppError, isAppError } from '../contract/errors';
import type { OperationId } from '../contract/operations';
import type { OperationRoute } from '../contract/routes';
import { OPERATION_ROUTES } from '../generated/contract';
import { authorize, confirmCaller, parseOperationInput } from '../operations/access';
import type { Caller, SurfaceRuntime } from '../operations/context';
import type { AnyCaller, AnyOperationImpl, PlatformCaller, PublicCaller } from '../operations/platform-context';
import { chargeRateLimit } from '../operations/rate-limiter';
import { fromAuthorizerContext } from './authorizer';
import { idempotency, type IdempotencyRequestContext } from './idempotency';
import { operationResponse, problemResponse } from './responses';

type RestRequest = middy.Request<APIGatewayProxyEvent, APIGatewayProxyResult, Error, RestContext>;

interface RestContext extends Context, IdempotencyRequestContext {
  caller?: Caller;
  /** The caller of an `iam` or `public` route (never idempotent: the idempotency middleware keys on a token). */
  routeCaller?: PlatformCaller | PublicCaller;
  input?: { params: unknown; query: unknown; body: unknown };
}

function traceIdOf(event: APIGatewayProxyEvent): string {
  return event.requestContext?.requestId ?? 'unknown';
}

/** A request header by its name, case-blind (API Gateway keeps the client's spelling). */
function headerOf(event: APIGatewayProxyEvent, name: string): string | undefined {
  return Object.entries(event.headers ?? {}).find(([k]) => k.toLowerCase() === name)?.[1];
}

function parseBody(def: OperationRoute, event: APIGatewayProxyEvent): unknown {
  if (!def.input.body) return undefined;
  const type = headerOf(event, 'content-type')?.trim();
  const raw = event.body ? (event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body) : '';
  if (raw.trim() === '')
    throw new AppError('ValidationError', 'A JSON request body is required', { issues: [{ path: 'body', message: 'required' }] });
  try {
    // Lenient on the declared type (`curl -d` says form-urlencoded): JSON is what counts.
    return JSON.parse(raw) as unknown;
  } catch {
    if (type && !/^application\/([a-z.+-]*\+)?json\b/i.test(type)) {
      throw new AppError('UnsupportedMediaType', `Send the body as application/json (got ${type})`);
    }
    throw new AppError('ValidationError', 'The request body is not valid JSON', { issues: [{ path: 'body', message: 'invalid JSON' }] });
  }
}

/** Middleware: every failure becomes problem+json; unexpected ones are logged and shown as a bare 500. */
function problemErrors(logger: Logger): middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, RestContext> {
  return {
    onError: (request: RestRequest) => {
      if (!isAppError(request.error)) logger.error('Unhandled error', { error: request.error as Error });
      request.response = problemResponse(request.error, traceIdOf(request.event), request.event.path);
    },
  };
}

/** What API Gateway tells of the caller of an `iam` or `public` route (the local front fills in the same). */
interface RequestIdentity {
  readonly userArn?: string | null;
  readonly sourceIp?: string | null;
}

function identityOf(event: APIGatewayProxyEvent): RequestIdentity {
  return event.requestContext?.identity ?? {};
}

/**
 * The caller of an `iam` route: the principal API Gateway verified (`AWS_IAM`), charged in the
 * route's bucket by its ARN. No permission or workspace check: the stage's resource policy already
 * allowed the principal (docs/architecture.md#route-kinds).
 */
async function platformCaller(def: OperationRoute, runtime: SurfaceRuntime, event: APIGatewayProxyEvent): Promise<PlatformCaller> {
  const principalArn = identityOf(event).userArn;
  if (!principalArn) throw new AppError('Forbidden', 'Sign the request with AWS Signature Version 4 (service execute-api)');
  await chargeRateLimit(runtime.rateLimiter, def.rateLimit, principalArn);
  return { principalArn };
}

/** The caller of a `public` route: its address, the key of its rate-limit bucket. */
async function publicCaller(def: OperationRoute, runtime: SurfaceRuntime, event: APIGatewayProxyEvent): Promise<PublicCaller> {
  const clientAddress = identityOf(event).sourceIp ?? 'unknown';
  await chargeRateLimit(runtime.rateLimiter, def.rateLimit, `ip:${clientAddress}`);
  return { clientAddress };
}

/**
 * Middleware: the caller as the route's kind has it. A token route's comes from the authorizer
 * (re-checked uncached for a mutating route, so a revoked token never changes anything:
 * docs/architecture.md#authorizer), then slug ↔ token workspace (404, no oracle), rate limit,
 * permission.
 */
function guard(
  def: OperationRoute,
  runtime: () => SurfaceRuntime,
): middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, RestContext> {
  return {
    before: async (request: RestRequest) => {
      if (def.auth === 'iam') {
        request.context.routeCaller = await platformCaller(def, runtime(), request.event);
        return;
      }
      if (def.auth === 'public') {
        request.context.routeCaller = await publicCaller(def, runtime(), request.event);
        return;
      }
      let caller = fromAuthorizerContext(request.event.requestContext?.authorizer);
      if (!caller) throw new AppError('Unauthorized', 'Send a workspace API token as `Authorization: Bearer <token>`');
      // Reads keep the authorizer's cache window; every other method pays one consistent read.
      if (def.method !== 'GET') caller = await confirmCaller(runtime().deps.table, headerOf(request.event, 'authorization'), caller);
      if (!caller) throw new AppError('Unauthorized', 'This API token is unknown or has been revoked');
      request.context.caller = await authorize(runtime(), def, caller, request.event.pathParameters?.slug);
    },
  };
}

/** Middleware: path, query and body parsed with the contract's schemas, as generated (400 with the issues). */
function parseInput(def: OperationRoute): middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, RestContext> {
  return {
    before: (request: RestRequest) => {
      const { event } = request;
      request.context.input = parseOperationInput(def, {
        params: event.pathParameters ?? {},
        query: event.queryStringParameters ?? {},
        body: parseBody(def, event),
      });
    },
  };
}

/** What {@link restHandler} runs with (the composition root gives the container's). */
export interface RestHandlerOptions {
  /** The adapters, resolved on each request (built once per container by the caller). */
  readonly runtime: () => SurfaceRuntime;
  /** The service's logger. */
  readonly logger: Logger;
}

/** The Lambda handler of one contract operation. */
export function restHandler<K extends OperationId>(operationId: K, impl: AnyOperationImpl<K>, options: RestHandlerOptions) {
  const def: OperationRoute | undefined = OPERATION_ROUTES.find((o) => o.operationId === operationId);
  if (!def) throw new Error(`Unknown operation ${operationId}`);
  const { runtime, logger } = options;
  return (
    middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, RestContext>()
      .use(injectLambdaContext(logger, { resetKeys: true }))
      .use(problemErrors(logger))
      .use(guard(def, runtime))
      .use(parseInput(def))
      // After the checks and the parsing: a refused or invalid request never claims a key.
      .use(idempotency(def, runtime, logger))
      .handler(async (event, context) => {
        const { input } = context;
        const caller = context.routeCaller ?? context.caller;
        if (!caller || !input) throw new AppError('InternalError', 'request was not prepared');
        // The parsed input matches operation K's schemas, and the caller its route kind, by construction.
        const run = impl as (deps: unknown, caller: AnyCaller, input: unknown) => Promise<unknown>;
        const result = await run(runtime().deps, caller, input);
        // A dry run (docs/behaviour.md#recovery-jobs) answers its own status: nothing was changed.
        const status =
          def.dryRunStatus && (input.body as { dryRun?: unknown } | undefined)?.dryRun === true ? def.dryRunStatus : def.successStatus;
        return operationResponse(status, result, traceIdOf(event));
      })
  );
}
