/** API token operations (docs/behaviour.md#token-rules). */
import { AppError } from '../contract/errors';
import { workspaceCountRefusal } from '../contract/rate-limits';
import { clampLimit } from '../contract/pagination';
import { excessPermissions, type Scope } from '../contract/permissions';
import { hashApiToken, mintApiToken } from '../domain/api-tokens';
import { newId } from '../domain/ids';
import { deleteApiToken, listApiTokens as readTokens, putApiToken } from '../store/api-tokens';
import { workspaceViewActor } from '../store/audit';
import type { AuditActor } from '../contract/schemas';
import type { OperationDeps, OperationImpl } from './context';
import { callerActor } from './context';
import { workspaceLimitsOf } from './rate-limiter';

/** GET /workspaces/{slug}/api-tokens */
export const listApiTokens: OperationImpl<'listApiTokens'> = (deps, caller, { query }) =>
  readTokens(deps.table, caller.workspace, clampLimit(query.limit), query.cursor);

/** POST /workspaces/{slug}/api-tokens: scopes within the caller's; the raw token shown once; 409 when the workspace has its most tokens (docs/behaviour.md#rate-limits). */
export const createApiToken: OperationImpl<'createApiToken'> = async (deps, caller, { body }) => {
  const excess = excessPermissions(caller.scopes, body.scopes);
  if (excess.length > 0) {
    throw new AppError('Forbidden', `The requested scopes grant permissions the calling token lacks: ${excess.join(', ')}`, {
      excessPermissions: excess,
    });
  }
  return mintWorkspaceToken(deps, caller.workspace, body, callerActor(caller));
};

/**
 * A new API token of workspace `workspace`, for either create route (a workspace token's, the
 * platform API's): the raw token shown once, only its hash stored; audited and announced as
 * `api_token.created` by `actor`; 409 when the workspace has its most tokens.
 */
export async function mintWorkspaceToken(
  deps: OperationDeps,
  workspace: string,
  body: { readonly name: string; readonly scopes: readonly Scope[] },
  actor: AuditActor,
): Promise<{ tokenId: string; name: string; scopes: Scope[]; createdAt: string; createdBy: AuditActor; token: string }> {
  const now = deps.now();
  const token = mintApiToken();
  const meta = {
    tokenId: newId('tok', now),
    name: body.name,
    scopes: [...new Set(body.scopes)],
    createdAt: now.toISOString(),
    createdBy: actor,
  };
  const { apiTokens: limit } = workspaceLimitsOf(deps);
  const stored = await putApiToken(
    deps.table,
    workspace,
    { ...meta, hash: hashApiToken(token) },
    now,
    {
      action: 'api_token.created',
      actor,
      targetId: meta.tokenId,
      detail: { name: meta.name, scopes: meta.scopes },
      event: { type: 'api_token.created', payload: { tokenId: meta.tokenId, name: meta.name, scopes: meta.scopes } },
    },
    limit,
  );
  if (!stored) throw new AppError('Conflict', workspaceCountRefusal('apiTokens', limit));
  return { ...meta, createdBy: workspaceViewActor(actor), token };
}

/** DELETE /workspaces/{slug}/api-tokens/{tokenId} */
export const revokeApiToken: OperationImpl<'revokeApiToken'> = async (deps, caller, { params }) => {
  const deleted = await deleteApiToken(deps.table, caller.workspace, params.tokenId, deps.now(), {
    action: 'api_token.revoked',
    actor: callerActor(caller),
    targetId: params.tokenId,
    event: { type: 'api_token.revoked', payload: { tokenId: params.tokenId } },
  });
  if (!deleted) throw new AppError('TokenNotFound', `No API token ${params.tokenId} in workspace ${caller.workspace}`);
};
