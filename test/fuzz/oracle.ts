/**
 * What every answer of the API must be, whatever was asked: never a 5xx; a
 * refusal is a well-formed problem+json (the contract's ProblemSchema, its tag's
 * one status, title and type, the trace id echoed) with a status the operation
 * declares; a success is the operation's success status and response schema.
 */
import { ERROR_STATUS, ProblemSchema, errorTitle, errorType, type ErrorTag } from '../../lambdas/contract/errors';
import { declaredErrors, type OperationDef } from '../../lambdas/contract/operations';
import type { WireResponse } from './raw-http';

/**
 * Refusals the gateway (the local front, as API Gateway) may answer to any request before an
 * operation runs (docs/behaviour.md#error-tags): a body over its 10 MiB, or headers over
 * Node's 16 KiB; a request whose Lambda event would be over Lambda's 6 MB (a large body that
 * escaping grows), as API Gateway answers it (docs/behaviour.md#gateway-responses).
 */
const GATEWAY_ERRORS: readonly ErrorTag[] = ['PayloadTooLarge', 'BadGateway'];

/** Refusals of a request that reaches no operation: no route, or not valid HTTP at all (a bad method, target, header or chunk). */
const UNROUTED_ERRORS: readonly ErrorTag[] = ['RouteNotFound', 'ValidationError', ...GATEWAY_ERRORS];

/**
 * Refusals an operation answers although its contract entry does not declare them. Each is a
 * finding reported to the contract's owner; the fuzz counts them instead of failing. None today
 * (the 415 of a form body is declared by every operation with a body).
 */
export const UNDECLARED_BUT_SENSIBLE: readonly ErrorTag[] = [];

/**
 * Broken promises found by the fuzz in code this suite's owner may not change; each is
 * reported to its owner, counted by the run instead of failing it, and pinned by an `it.fails`
 * test in contract-fuzz.test.ts that starts passing once it is fixed.
 */
export const KNOWN_FINDINGS: readonly {
  readonly id: string;
  readonly reason: string;
  readonly matches: (asked: Asked, path: string, v: Violation) => boolean;
}[] = [];

/** What the request was, as far as the oracle needs it. */
export interface Asked {
  readonly method: string;
  /** The operation whose method and path the request matches; undefined: no route. */
  readonly op?: OperationDef;
  /** A dry run of an operation that has one (`dryRun: true` in a valid body). */
  readonly dryRun?: boolean;
  /** One of the local stack's own routes beside the contract (`/mcp`, `/local/events`): any tag, success allowed. */
  readonly extraRoute?: boolean;
}

/** One broken promise of the API. */
export interface Violation {
  readonly rule: string;
  readonly detail: string;
}

/** What the oracle made of one answer. */
export interface Verdict {
  readonly violations: Violation[];
  /** The problem's tag of a refusal; null for a success. */
  readonly tag: ErrorTag | null;
  /** True when the refusal's tag is allowed only as {@link UNDECLARED_BUT_SENSIBLE}. */
  readonly undeclared: boolean;
  /** The parsed JSON body, when there is one. */
  readonly json: unknown;
}

function parseJson(body: Buffer): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(body.toString('utf8')) as unknown };
  } catch {
    return { ok: false };
  }
}

/** The tags a request may be refused with: the operation's declared ones and the gateway's; RouteNotFound without a route. */
function allowedTags(asked: Asked): ReadonlySet<ErrorTag> {
  if (asked.extraRoute) return new Set((Object.keys(ERROR_STATUS) as ErrorTag[]).filter((t) => t !== 'InternalError'));
  if (!asked.op) return new Set<ErrorTag>(UNROUTED_ERRORS);
  return new Set<ErrorTag>([...declaredErrors(asked.op), ...GATEWAY_ERRORS]);
}

/** Checks one answer against the API's promises. */
export function judge(asked: Asked, res: WireResponse): Verdict {
  const violations: Violation[] = [];
  const bad = (rule: string, detail: string) => violations.push({ rule, detail });
  const head = asked.method.toUpperCase() === 'HEAD';
  const parsed = head ? ({ ok: false } as const) : parseJson(res.body);
  const json = parsed.ok ? parsed.value : undefined;
  const contentType = res.headers['content-type'] ?? '';

  if (res.status >= 500) bad('no-5xx', `status ${res.status}`);

  if (res.status >= 200 && res.status < 300) {
    const op = asked.op;
    if (!op) {
      if (asked.extraRoute) return { violations, tag: null, undeclared: false, json };
      bad('success-without-route', `status ${res.status} for a request that matches no operation`);
      return { violations, tag: null, undeclared: false, json };
    }
    const expected = asked.dryRun && op.dryRun ? op.dryRun : { successStatus: op.successStatus, response: op.response };
    if (res.status !== expected.successStatus)
      bad('success-status', `${op.operationId} answered ${res.status}, the contract says ${expected.successStatus}`);
    if (res.status === 204) {
      if (res.body.length) bad('success-shape', `204 with a ${res.body.length}-byte body`);
    } else if (!head) {
      if (!/^application\/json\b/.test(contentType)) bad('success-shape', `content-type ${contentType || '(none)'}`);
      const shape = expected.response?.safeParse(json);
      if (!parsed.ok) bad('success-shape', 'body is not JSON');
      else if (shape && !shape.success)
        bad(
          'success-shape',
          `${op.operationId} body does not match its response schema: ${shape.error.issues
            .slice(0, 3)
            .map((i) => `${i.path.join('.')}: ${i.message}`)
            .join('; ')}`,
        );
    }
    return { violations, tag: null, undeclared: false, json };
  }

  if (res.status < 400) {
    bad('status-class', `unexpected status ${res.status}`);
    return { violations, tag: null, undeclared: false, json };
  }

  // The MCP transport answers protocol errors in JSON-RPC (a 406 without an event-stream Accept):
  // its own protocol, outside the REST contract. Its problem+json refusals are checked below.
  if (asked.extraRoute && /^application\/json\b/.test(contentType) && (json as { jsonrpc?: unknown } | undefined)?.jsonrpc === '2.0') {
    return { violations, tag: null, undeclared: false, json };
  }
  // A refusal: problem+json, consistent in itself and with the header, and declared.
  if (contentType !== 'application/problem+json') bad('problem-content-type', `content-type ${contentType || '(none)'} on a ${res.status}`);
  if (res.headers['cache-control'] !== 'no-store') bad('problem-headers', `cache-control ${res.headers['cache-control'] ?? '(none)'}`);
  if (head) {
    // No body to read; the status alone must be one a route or the gateway may answer.
    const statuses = new Set([...allowedTags(asked)].map((t) => ERROR_STATUS[t]));
    if (!statuses.has(res.status as never)) bad('undeclared-status', `HEAD answered ${res.status}`);
    return { violations, tag: null, undeclared: false, json };
  }
  if (!parsed.ok) {
    bad('problem-json', `body is not JSON: ${JSON.stringify(res.body.toString('utf8').slice(0, 120))}`);
    return { violations, tag: null, undeclared: false, json };
  }
  const problem = ProblemSchema.safeParse(json);
  if (!problem.success) {
    bad('problem-schema', problem.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
    return { violations, tag: null, undeclared: false, json };
  }
  const p = problem.data;
  if (p.status !== res.status) bad('problem-status', `body status ${p.status}, HTTP status ${res.status}`);
  if (ERROR_STATUS[p.tag] !== res.status) bad('problem-status', `tag ${p.tag} is ${ERROR_STATUS[p.tag]}, answered ${res.status}`);
  if (p.type !== errorType(p.tag)) bad('problem-type', `type ${p.type} for tag ${p.tag}`);
  if (p.title !== errorTitle(p.tag)) bad('problem-title', `title ${JSON.stringify(p.title)} for tag ${p.tag}`);
  if (!p.traceId || res.headers['x-trace-id'] !== p.traceId)
    bad('problem-trace', `traceId ${p.traceId} vs x-trace-id ${res.headers['x-trace-id'] ?? '(none)'}`);
  if (p.tag === 'RateLimited' && !(Number(res.headers['retry-after']) >= 1))
    bad('problem-retry-after', `429 with Retry-After ${res.headers['retry-after'] ?? '(none)'}`);
  if (p.tag === 'ValidationError' && p.issues !== undefined && p.issues.length === 0)
    bad('problem-issues', 'ValidationError with an empty issues list');
  // Internals never leak into a refusal: stack frames, file paths, SDK exception names.
  if (
    /\bat .+\.(ts|js):\d+|node_modules|\/work\/|ResourceNotFoundException|ValidationException|TypeError|RangeError|SyntaxError/.test(
      p.detail,
    )
  ) {
    bad('problem-leak', `detail shows internals: ${p.detail.slice(0, 200)}`);
  }
  let undeclared = false;
  if (!allowedTags(asked).has(p.tag)) {
    if (asked.op && UNDECLARED_BUT_SENSIBLE.includes(p.tag)) undeclared = true;
    else
      bad(
        'undeclared-tag',
        `${asked.op?.operationId ?? 'no route'} answered ${p.tag} (${res.status}), not among ${[...allowedTags(asked)].join(', ')}`,
      );
  }
  return { violations, tag: p.tag, undeclared, json };
}
