/**
 * The checks every surface applies before an operation, in one place: the
 * bearer token (an API token, a portal session's or a staff session's) must be known and, for a
 * session, unexpired (401), then {@link authorize}: the session still unexpired (401), the slug
 * must be the token's workspace, or for a staff session a workspace that exists and is not being
 * erased (404, no existence oracle), the token's rate limit (429), a staff-only route's staff
 * session and the operation's permission (403). REST and MCP both call these.
 */
import { AppError } from '../contract/errors';
import { validateInput, type InputIssue, type InputNode } from '../contract/input-validation';
import type { OperationRoute } from '../contract/routes';
import { permissionsOf } from '../contract/permissions';
import { bearerToken, hashApiToken } from '../domain/api-tokens';
import { findTokenByHash } from '../store/api-tokens';
import type { TableContext } from '../store/client';
import { getPlatformWorkspace } from '../store/platform-workspaces';
import type { Caller, OperationDeps, SurfaceRuntime } from './context';
import { chargeRateLimit } from './rate-limiter';

/** True when a caller's session has ended at `now` (an API token never does). */
function callerExpired(caller: Pick<Caller, 'expiresAt'>, now: Date): boolean {
  return caller.expiresAt !== undefined && !(Date.parse(caller.expiresAt) > now.getTime());
}

/**
 * Resolves an `Authorization` header to its caller by the token's hash (an API token, a portal
 * session's or a staff session's), or null (401): unknown, revoked, or a session that has ended at `now`.
 */
export async function resolveCaller(
  table: TableContext,
  authorization: string | undefined | null,
  now: Date = new Date(),
): Promise<Caller | null> {
  const token = bearerToken(authorization);
  if (!token) return null;
  const identity = await findTokenByHash(table, hashApiToken(token));
  if (!identity) return null;
  const { workspace, tokenId, scopes, name, kind, eventTypes, expiresAt, staff } = identity;
  const caller: Caller = {
    workspace,
    tokenId,
    scopes,
    ...(name === null ? {} : { tokenName: name }),
    ...(kind === 'token' ? {} : { kind }),
    ...(staff === null ? {} : { staffRole: staff.role, email: staff.email }),
    ...(eventTypes === null ? {} : { eventTypes }),
    ...(expiresAt === null ? {} : { expiresAt }),
  };
  return callerExpired(caller, now) ? null : caller;
}

/**
 * The caller of a mutating REST request, re-checked (docs/architecture.md#authorizer): API
 * Gateway may answer from a cached authorizer decision, which a revoked token keeps passing
 * until it expires. One strongly consistent read of the token's hash (the authorizer's own
 * lookup, uncached) gives the current caller; null (401) when the token is gone or resolves to
 * another identity than the cached one.
 */
export async function confirmCaller(
  table: TableContext,
  authorization: string | undefined | null,
  cached: Caller,
  now: Date = new Date(),
): Promise<Caller | null> {
  const current = await resolveCaller(table, authorization, now);
  if (!current || current.tokenId !== cached.tokenId || current.workspace !== cached.workspace) return null;
  return current;
}

/**
 * Lets `caller` run operation `def` on workspace `slug`, or throws, in the order of
 * docs/behaviour.md#check-order: Unauthorized (401) when the caller is a session that has ended
 * (an authorizer decision cached before its end must not outlive it), then, unless the route is
 * workspace-less, WorkspaceNotFound (404) unless `slug` is the caller's workspace (unknown and
 * foreign look alike) or, for a staff session, a workspace that exists and is not being erased
 * (one consistent read), then one hit in the operation's rate-limit bucket (429 RateLimited,
 * charged even when a permission then refuses), then Forbidden (403) on a staff-only route for any
 * other caller, and unless the caller's scopes grant the operation's permission. Returns the
 * caller the operation runs as: a staff session's with the route's workspace as its own.
 */
export async function authorize(
  runtime: Pick<SurfaceRuntime, 'rateLimiter'> & { readonly deps?: Pick<OperationDeps, 'now' | 'table'> },
  def: Pick<OperationRoute, 'permission' | 'rateLimit' | 'workspaceless' | 'staffOnly'>,
  caller: Caller,
  slug: string | undefined,
): Promise<Caller> {
  if (callerExpired(caller, runtime.deps?.now() ?? new Date())) throw new AppError('Unauthorized', 'This session has expired');
  let effective = caller;
  if (!def.workspaceless) {
    if (caller.kind === 'staff') {
      const workspace = slug === undefined || !runtime.deps ? null : await getPlatformWorkspace(runtime.deps.table, slug);
      if (!workspace || workspace.status !== 'active') throw new AppError('WorkspaceNotFound', `No workspace "${slug ?? ''}"`);
      effective = { ...caller, workspace: workspace.slug };
    } else if (slug !== caller.workspace) throw new AppError('WorkspaceNotFound', `No workspace "${slug ?? ''}" for this token`);
  }
  await chargeRateLimit(runtime.rateLimiter, def.rateLimit, caller.tokenId);
  if (def.staffOnly && caller.kind !== 'staff')
    throw new AppError('Forbidden', 'Only a platform staff session signed in to the console may call this operation');
  if (def.permission && !permissionsOf(caller.scopes).has(def.permission)) {
    throw new AppError('Forbidden', `This operation needs the permission ${def.permission}, which the token's scopes do not grant`, {
      requiredPermission: def.permission,
    });
  }
  return effective;
}

/** Input issues (zod's paths and messages) as a ValidationError with the problem's `issues` member. */
function validationError(where: string, error: { readonly issues: readonly InputIssue[] }): AppError {
  const issues = error.issues.map((i) => ({ path: [where, ...i.path.map(String)].join('.'), message: i.message }));
  return new AppError('ValidationError', `Invalid ${where}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, { issues });
}

function parsePart(where: string, schema: InputNode, raw: unknown): unknown {
  const r = validateInput(schema, raw);
  if (!r.success) throw validationError(where, r);
  return r.data;
}

/**
 * Parses raw path, query and body with the operation's input schemas, generated from the contract
 * (lambdas/generated/contract.ts): a ValidationError naming each issue.
 */
export function parseOperationInput(
  route: Pick<OperationRoute, 'input'>,
  raw: { params: unknown; query: unknown; body: unknown },
): { params: unknown; query: unknown; body: unknown } {
  const { input } = route;
  const params = parsePart('path', input.params, raw.params ?? {});
  const query = input.query ? parsePart('query', input.query, raw.query ?? {}) : undefined;
  if (input.body && raw.body === undefined)
    throw new AppError('ValidationError', 'A JSON request body is required', { issues: [{ path: 'body', message: 'required' }] });
  const body = input.body ? parsePart('body', input.body, raw.body) : undefined;
  return { params, query, body };
}
