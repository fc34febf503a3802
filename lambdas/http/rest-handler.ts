/**
 * The REST handler of an operation: middy middlewares (error → problem+json,
 * caller and workspace check, rate limit, permission, input parsing) around one
 * operation call. Every REST function is `restHandler(id, impl)`; nothing else.
 */
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { z } from 'zod';
import { AppError, isAppError } from '../contract/errors';
import { operationById, type OperationDef, type OperationId } from '../contract/operations';
import { permissionsOf } from '../contract/permissions';
import type { Caller, OperationImpl } from '../operations/context';
import { fromAuthorizerContext } from './authorizer';
import { jsonResponse, problemResponse } from './responses';
import { defaultRuntime, logger, type Runtime } from './runtime';

type RestRequest = middy.Request<APIGatewayProxyEvent, APIGatewayProxyResult, Error, RestContext>;

interface RestContext extends Context {
  caller?: Caller;
  input?: { params: unknown; query: unknown; body: unknown };
}

function traceIdOf(event: APIGatewayProxyEvent): string {
  return event.requestContext?.requestId ?? 'unknown';
}

/** zod issues as the problem's `issues` member. */
export function validationError(where: string, error: z.ZodError): AppError {
  const issues = error.issues.map((i) => ({ path: [where, ...i.path.map(String)].join('.'), message: i.message }));
  return new AppError('ValidationError', `Invalid ${where}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, { issues });
}

function parseBody(def: OperationDef, event: APIGatewayProxyEvent): unknown {
  if (!def.body) return undefined;
  const type = Object.entries(event.headers ?? {}).find(([k]) => k.toLowerCase() === 'content-type')?.[1]?.trim();
  const raw = event.body ? (event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body) : '';
  if (raw.trim() === '') throw new AppError('ValidationError', 'A JSON request body is required', { issues: [{ path: 'body', message: 'required' }] });
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
function problemErrors(): middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, RestContext> {
  return {
    onError: (request: RestRequest) => {
      if (!isAppError(request.error)) logger.error('Unhandled error', { error: request.error as Error });
      request.response = problemResponse(request.error, traceIdOf(request.event), request.event.path);
    },
  };
}

/** Middleware: caller from the authorizer, slug ↔ token workspace (404, no oracle), rate limit, permission. */
function guard(def: OperationDef, runtime: () => Runtime): middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, RestContext> {
  return {
    before: async (request: RestRequest) => {
      const caller = fromAuthorizerContext(request.event.requestContext?.authorizer);
      if (!caller) throw new AppError('Unauthorized', 'Send a workspace API token as `Authorization: Bearer <token>`');
      const slug = request.event.pathParameters?.slug;
      if (slug !== caller.workspace) throw new AppError('WorkspaceNotFound', `No workspace "${slug ?? ''}" for this token`);
      const decision = await runtime().rateLimiter.hit(def.rateLimit, caller.tokenId);
      if (!decision.allowed) {
        throw new AppError('RateLimited', `Too many ${def.rateLimit} requests for this token; retry after ${decision.retryAfterSeconds} s`, {}, decision.retryAfterSeconds);
      }
      if (def.permission && !permissionsOf(caller.scopes).has(def.permission)) {
        throw new AppError('Forbidden', `This operation needs the permission ${def.permission}, which the token's scopes do not grant`, {
          requiredPermission: def.permission,
        });
      }
      request.context.caller = caller;
    },
  };
}

/** Middleware: path, query and body parsed with the contract's schemas (400 with the issues). */
function parseInput(def: OperationDef): middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, RestContext> {
  return {
    before: (request: RestRequest) => {
      const { event } = request;
      const params = def.params.safeParse(event.pathParameters ?? {});
      if (!params.success) throw validationError('path', params.error);
      const query = def.query?.safeParse(event.queryStringParameters ?? {});
      if (query && !query.success) throw validationError('query', query.error);
      const rawBody = parseBody(def, event);
      const body = def.body?.safeParse(rawBody);
      if (body && !body.success) throw validationError('body', body.error);
      request.context.input = { params: params.data, query: query?.data, body: body?.data };
    },
  };
}

/** Options of {@link restHandler}. */
export interface RestHandlerOptions {
  /** The adapters; defaults to the container's, built from its environment. */
  readonly runtime?: () => Runtime;
}

/** The Lambda handler of one contract operation. */
export function restHandler<K extends OperationId>(operationId: K, impl: OperationImpl<K>, options: RestHandlerOptions = {}) {
  const def = operationById(operationId);
  if (!def) throw new Error(`Unknown operation ${operationId}`);
  const runtime = options.runtime ?? defaultRuntime;
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, RestContext>()
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(problemErrors())
    .use(guard(def, runtime))
    .use(parseInput(def))
    .handler(async (event, context) => {
      const { caller, input } = context;
      if (!caller || !input) throw new AppError('InternalError', 'request was not prepared');
      // The parsed input matches operation K's schemas by construction.
      const result = await impl(runtime().deps, caller, input as Parameters<OperationImpl<K>>[2]);
      return jsonResponse(def.successStatus, result, traceIdOf(event));
    });
}
