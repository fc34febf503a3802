/**
 * The `Idempotency-Key` middleware of the REST handler (docs/behaviour.md#idempotency-keys):
 * a repeat of a key answers the first successful response again, without running the operation.
 * Our own store module rather than Powertools' idempotency utility: see
 * docs/architecture.md#idempotency-records for why.
 */
import { createHash } from 'node:crypto';
import type middy from '@middy/core';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { AppError } from '../contract/errors';
import { validateInput } from '../contract/input-validation';
import type { OperationRoute } from '../contract/routes';
import { IDEMPOTENCY, IDEMPOTENCY_KEY } from '../generated/contract';
import type { Caller, SurfaceRuntime } from '../operations/context';
import {
  claimIdempotencyKey,
  completeIdempotencyRecord,
  releaseIdempotencyRecord,
  type IdempotencyClaim,
} from '../store/idempotency-records';

/** What the middleware needs of the request context. */
export interface IdempotencyRequestContext extends Context {
  caller?: Caller;
  input?: { params: unknown; query: unknown; body: unknown };
}

type Request = middy.Request<APIGatewayProxyEvent, APIGatewayProxyResult, Error, IdempotencyRequestContext>;
type Claimed = Pick<IdempotencyClaim, 'tokenId' | 'key' | 'fingerprint'>;

/** The claim each request holds, by request: never on the Lambda context, which a caller may reuse across invocations. */
const claims = new WeakMap<Request, Claimed>();

/** When the container's remaining time is unknown (tests, a context without it): the REST functions' timeout. */
const DEFAULT_LOCK_SECONDS = 30;

/** The header's value, whatever the case of its name; undefined when absent. */
function idempotencyKeyOf(headers: APIGatewayProxyEvent['headers'] | null | undefined): string | undefined {
  const wanted = IDEMPOTENCY.key.toLowerCase();
  for (const [name, value] of Object.entries(headers ?? {})) if (name.toLowerCase() === wanted) return value ?? '';
  return undefined;
}

/** JSON with object keys sorted at every depth, so two equal requests always hash alike. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** What makes two requests "the same": the operation, its path parameters and its parsed body. */
function requestFingerprint(operationId: string, input: { params: unknown; body: unknown }): string {
  return createHash('sha256')
    .update(canonicalJson({ operationId, params: input.params, body: input.body ?? null }))
    .digest('base64url');
}

/**
 * Middleware of an operation flagged `idempotent` in the contract: checks the header (400),
 * claims (token, key), and either answers the stored response with `Idempotent-Replayed: true`,
 * refuses another request under the key (422 IdempotencyKeyReused) or a repeat while the first
 * runs (409 IdempotencyKeyInProgress); after a 2xx it stores the response, after a failure it drops the claim.
 */
export function idempotency(
  def: Pick<OperationRoute, 'idempotent' | 'operationId'>,
  runtime: () => SurfaceRuntime,
  logger: Logger,
): middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, IdempotencyRequestContext> {
  return {
    before: async (request: Request) => {
      if (!def.idempotent) return undefined;
      const raw = idempotencyKeyOf(request.event.headers);
      if (raw === undefined) return undefined;
      const parsed = validateInput(IDEMPOTENCY_KEY, raw);
      if (!parsed.success) {
        const message = parsed.issues.map((i) => i.message).join('; ');
        throw new AppError(
          'ValidationError',
          `Invalid header ${IDEMPOTENCY.key}: ${message}. Send 1–255 printable characters, e.g. a UUID.`,
          {
            issues: [{ path: `header.${IDEMPOTENCY.key}`, message }],
          },
        );
      }
      const { caller, input } = request.context;
      if (!caller || !input) throw new AppError('InternalError', 'request was not prepared');
      const claim = { tokenId: caller.tokenId, key: parsed.data as string, fingerprint: requestFingerprint(def.operationId, input) };
      const remainingMs =
        typeof request.context.getRemainingTimeInMillis === 'function' ? request.context.getRemainingTimeInMillis() : undefined;
      const found = await claimIdempotencyKey(runtime().deps.table, {
        ...claim,
        now: runtime().deps.now(),
        ttlSeconds: IDEMPOTENCY.windowHours * 3600,
        lockSeconds: remainingMs && remainingMs > 0 ? Math.ceil(remainingMs / 1000) + 1 : DEFAULT_LOCK_SECONDS,
      });
      if (found.kind !== 'claimed' && found.fingerprint !== claim.fingerprint) {
        throw new AppError(
          'IdempotencyKeyReused',
          `${IDEMPOTENCY.key} ${JSON.stringify(claim.key)} was already used by this token for another request (another operation, path or body) in the last ${IDEMPOTENCY.windowHours} h; use a new key for a new request`,
        );
      }
      if (found.kind === 'in_progress') {
        throw new AppError(
          'IdempotencyKeyInProgress',
          `A request with ${IDEMPOTENCY.key} ${JSON.stringify(claim.key)} is still running; retry when it has finished to get its answer`,
        );
      }
      if (found.kind === 'completed') {
        // The first answer again (status and body), under this request's trace id; nothing runs.
        return {
          statusCode: found.response.statusCode,
          headers: {
            'content-type': 'application/json',
            'x-trace-id': request.event.requestContext?.requestId ?? 'unknown',
            'cache-control': 'no-store',
            [IDEMPOTENCY.replayed.toLowerCase()]: 'true',
          },
          body: found.response.body,
        };
      }
      claims.set(request, claim);
      return undefined;
    },
    after: async (request: Request) => {
      const claim = claims.get(request);
      claims.delete(request);
      const response = request.response;
      if (!claim || !response) return;
      try {
        if (response.statusCode >= 200 && response.statusCode < 300) {
          await completeIdempotencyRecord(runtime().deps.table, claim, { statusCode: response.statusCode, body: response.body });
        } else {
          await releaseIdempotencyRecord(runtime().deps.table, claim);
        }
      } catch (error) {
        // The operation's change stands and is answered; a repeat after the claim's lock runs out would run it again.
        logger.warn('Idempotency record not completed', { operationId: def.operationId, tokenId: claim.tokenId, error: error as Error });
      }
    },
    onError: async (request: Request) => {
      const claim = claims.get(request);
      claims.delete(request);
      if (!claim) return;
      try {
        await releaseIdempotencyRecord(runtime().deps.table, claim);
      } catch (error) {
        // The claim then holds until its lock runs out (a 409 to a retry until then).
        logger.warn('Idempotency claim not released', { operationId: def.operationId, tokenId: claim.tokenId, error: error as Error });
      }
    },
  };
}
