/**
 * The console's REST client: same-origin `fetch` with the token as a Bearer header, exactly
 * what curl would send. Failures become {@link ApiProblem}s carrying the API's problem+json.
 */
import {
  ROUTES,
  type BodyOf,
  type DryRunOf,
  type ErrorTag,
  type OperationId,
  type ParamsOf,
  type QueryOf,
  type ResponseOf,
} from './contract';

/** One validation issue of a ValidationError. */
export interface ProblemIssue {
  readonly path: string;
  readonly message: string;
}

/** A failed call: the API's problem+json, or a network failure as status 0. */
export class ApiProblem extends Error {
  readonly status: number;
  readonly title: string;
  readonly detail: string;
  readonly tag: ErrorTag | 'NetworkError' | 'UnexpectedResponse';
  readonly traceId: string | null;
  readonly issues: readonly ProblemIssue[];
  /** The URL rule that refused an endpoint URL (InvalidWebhookUrl). */
  readonly rule: string | null;
  /** Seconds to wait before retrying (429). */
  readonly retryAfterSeconds: number | null;
  readonly unknownEventTypes: readonly string[];
  readonly requiredPermission: string | null;
  /** Requested permissions beyond the caller's (Forbidden on token creation). */
  readonly excessPermissions: readonly string[];

  constructor(fields: {
    status: number;
    title: string;
    detail: string;
    tag: ApiProblem['tag'];
    traceId?: string | null;
    issues?: readonly ProblemIssue[];
    rule?: string | null;
    retryAfterSeconds?: number | null;
    unknownEventTypes?: readonly string[];
    requiredPermission?: string | null;
    excessPermissions?: readonly string[];
  }) {
    super(fields.detail);
    this.name = 'ApiProblem';
    this.status = fields.status;
    this.title = fields.title;
    this.detail = fields.detail;
    this.tag = fields.tag;
    this.traceId = fields.traceId ?? null;
    this.issues = fields.issues ?? [];
    this.rule = fields.rule ?? null;
    this.retryAfterSeconds = fields.retryAfterSeconds ?? null;
    this.unknownEventTypes = fields.unknownEventTypes ?? [];
    this.requiredPermission = fields.requiredPermission ?? null;
    this.excessPermissions = fields.excessPermissions ?? [];
  }
}

/** What a call sends besides the workspace slug. */
export interface CallInput<K extends OperationId> {
  readonly params?: ParamsOf<K>;
  readonly query?: QueryOf<K>;
  readonly body?: BodyOf<K>;
  /** Sent as `Idempotency-Key` (create endpoint, test send, replay, recover). */
  readonly idempotencyKey?: string;
}

/** What a raw {@link ApiClient.request} sends besides the workspace slug. */
interface RawInput {
  readonly params?: Record<string, string>;
  readonly query?: Record<string, QueryValue>;
  readonly body?: unknown;
  readonly idempotencyKey?: string;
}

/** Called when the API answers 401: the session is over. */
export type UnauthorizedListener = (problem: ApiProblem) => void;

/** The base path of the API: the console is served at `<base>/console`, so a stage prefix is kept. */
export function apiBase(pathname: string = location.pathname): string {
  return pathname.replace(/\/console\/?$/, '');
}

function expandPath(template: string, values: Record<string, string | undefined>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(values[name] ?? ''));
}

/** A query value: lists are sent comma-separated; empty values are left out. */
type QueryValue = string | number | boolean | readonly string[] | null | undefined;

function queryString(query: Record<string, QueryValue> | undefined): string {
  if (!query) return '';
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === '') continue;
    search.set(key, typeof value === 'object' ? value.join(',') : String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** A REST client for one workspace and token. */
export class ApiClient {
  constructor(
    readonly slug: string,
    private readonly token: string,
    private readonly onUnauthorized: UnauthorizedListener = () => undefined,
    private readonly base: string = apiBase(),
  ) {}

  /** Calls operation K; resolves with its answer or rejects with an {@link ApiProblem}. */
  async call<K extends OperationId>(operation: K, input: CallInput<K> = {}): Promise<ResponseOf<K> | DryRunOf<K>> {
    const route = ROUTES[operation];
    return (await this.request(route.method, route.path, {
      params: input.params as Record<string, string> | undefined,
      query: input.query as Record<string, QueryValue> | undefined,
      body: input.body,
      idempotencyKey: input.idempotencyKey,
    })) as ResponseOf<K>;
  }

  /** The request under {@link call}: method and path template (with `{slug}` and other parameters) from the route table. */
  private async request(method: string, template: string, input: RawInput = {}): Promise<unknown> {
    const path = expandPath(template, { ...input.params, slug: this.slug });
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}`, accept: 'application/json, application/problem+json' };
    if (input.body !== undefined) headers['content-type'] = 'application/json';
    if (input.idempotencyKey) headers['idempotency-key'] = input.idempotencyKey;
    const { response, json } = await sendJson(`${this.base}${path}${queryString(input.query)}`, {
      method,
      headers,
      body: input.body === undefined ? undefined : JSON.stringify(input.body),
    });
    if (response.status === 204) return undefined;
    if (response.ok) return json;
    const problem = toProblem(response, json);
    if (problem.status === 401) this.onUnauthorized(problem);
    throw problem;
  }

  /** Like {@link call}, for the dry run of an operation that has one. */
  async dryRun<K extends OperationId>(operation: K, input: CallInput<K>): Promise<DryRunOf<K>> {
    return (await this.call(operation, input)) as DryRunOf<K>;
  }
}

/**
 * One request to the API, never with cookies or from the cache: the answer and its JSON (null
 * when empty or not JSON); an unreachable API is an {@link ApiProblem} of status 0.
 */
export async function sendJson(url: string, init: { method: string; headers: Record<string, string>; body?: string | undefined }) {
  let response: Response;
  try {
    response = await fetch(url, { ...init, credentials: 'omit', cache: 'no-store' });
  } catch (e) {
    throw new ApiProblem({
      status: 0,
      title: 'The API could not be reached',
      detail: e instanceof Error ? e.message : String(e),
      tag: 'NetworkError',
    });
  }
  const text = response.status === 204 ? '' : await response.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  return { response, json };
}

/** A failed answer as an {@link ApiProblem}: its problem+json, or what the status says. */
export function toProblem(response: Response, json: unknown): ApiProblem {
  const body = (json && typeof json === 'object' ? json : {}) as Record<string, unknown>;
  const retryAfter = Number(response.headers.get('retry-after'));
  const str = (v: unknown) => (typeof v === 'string' ? v : null);
  return new ApiProblem({
    status: response.status,
    title: str(body.title) ?? `The API answered ${response.status}`,
    detail: str(body.detail) ?? (response.statusText || 'No detail was given.'),
    tag: (str(body.tag) as ErrorTag | null) ?? 'UnexpectedResponse',
    traceId: str(body.traceId) ?? response.headers.get('x-trace-id'),
    issues: Array.isArray(body.issues) ? (body.issues as ProblemIssue[]) : [],
    rule: str(body.rule),
    retryAfterSeconds: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null,
    unknownEventTypes: Array.isArray(body.unknownEventTypes) ? (body.unknownEventTypes as string[]) : [],
    requiredPermission: str(body.requiredPermission),
    excessPermissions: Array.isArray(body.excessPermissions) ? (body.excessPermissions as string[]) : [],
  });
}

/** A fresh `Idempotency-Key` for one user action (a retry of the same click reuses it). */
export function newIdempotencyKey(): string {
  return crypto.randomUUID();
}
