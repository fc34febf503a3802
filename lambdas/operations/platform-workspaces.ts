/**
 * The platform API (docs/api.md#platform-api): the workspace lifecycle, for the platform's own
 * backend, authenticated by AWS IAM. Every change is audited in the workspace's own log as the
 * Platform API ({@link PLATFORM_API_ACTOR}); the principal's ARN stays in the platform's logs.
 */
import { AppError } from '../contract/errors';
import { clampLimit } from '../contract/pagination';
import { workspaceCountRefusal } from '../contract/rate-limits';
import { hashApiToken, mintApiToken } from '../domain/api-tokens';
import { newId } from '../domain/ids';
import { putApiToken } from '../store/api-tokens';
import { createWorkspaceWithOwner, getPlatformWorkspace, listPlatformWorkspaces, renameWorkspace } from '../store/platform-workspaces';
import { PLATFORM_API_ACTOR, type PlatformOperationImpl } from './platform-context';
import { workspaceLimitsOf } from './rate-limiter';
import { mintPortalSession } from './portal-sessions';
import { getErasureJob, startWorkspaceErasure } from './workspace-erasure';

function notFound(slug: string): AppError {
  return new AppError('WorkspaceNotFound', `No workspace "${slug}"`);
}

function erasing(slug: string): AppError {
  return new AppError('Conflict', `The workspace "${slug}" is being erased`);
}

/** POST /platform/workspaces */
export const platformCreateWorkspace: PlatformOperationImpl<'platformCreateWorkspace'> = async (deps, _caller, { body }) => {
  const created = await createWorkspaceWithOwner(
    deps.table,
    { slug: body.slug, name: body.name, ownerEmail: body.owner.email },
    PLATFORM_API_ACTOR,
    deps.now(),
  );
  if (!created) {
    const existing = await getPlatformWorkspace(deps.table, body.slug);
    throw new AppError(
      'Conflict',
      existing?.status === 'erasing'
        ? `The slug "${body.slug}" belongs to a workspace being erased; it can be created again once the erasure has finished`
        : `A workspace "${body.slug}" already exists`,
    );
  }
  return created.workspace;
};

/** GET /platform/workspaces */
export const platformListWorkspaces: PlatformOperationImpl<'platformListWorkspaces'> = (deps, _caller, { query }) =>
  listPlatformWorkspaces(deps.table, clampLimit(query.limit), query.cursor);

/** GET /platform/workspaces/{slug} */
export const platformGetWorkspace: PlatformOperationImpl<'platformGetWorkspace'> = async (deps, _caller, { params }) => {
  const workspace = await getPlatformWorkspace(deps.table, params.slug);
  if (!workspace) throw notFound(params.slug);
  return workspace;
};

/** PATCH /platform/workspaces/{slug} */
export const platformUpdateWorkspace: PlatformOperationImpl<'platformUpdateWorkspace'> = async (deps, _caller, { params, body }) => {
  const result = await renameWorkspace(deps.table, params.slug, body.name, PLATFORM_API_ACTOR, deps.now());
  if (result === null) throw notFound(params.slug);
  if (result === 'erasing') throw erasing(params.slug);
  return result;
};

/** POST /platform/workspaces/{slug}/api-tokens: the raw token, once. */
export const platformCreateApiToken: PlatformOperationImpl<'platformCreateApiToken'> = async (deps, _caller, { params, body }) => {
  const workspace = await getPlatformWorkspace(deps.table, params.slug);
  if (!workspace) throw notFound(params.slug);
  if (workspace.status === 'erasing') throw erasing(params.slug);
  const now = deps.now();
  const token = mintApiToken();
  const meta = { tokenId: newId('tok', now), name: body.name, scopes: [...new Set(body.scopes)], createdAt: now.toISOString() };
  const { apiTokens: limit } = workspaceLimitsOf(deps);
  const stored = await putApiToken(
    deps.table,
    params.slug,
    { ...meta, hash: hashApiToken(token) },
    now,
    {
      action: 'api_token.created',
      actor: PLATFORM_API_ACTOR,
      targetId: meta.tokenId,
      detail: { name: meta.name, scopes: meta.scopes },
      event: { type: 'api_token.created', payload: { tokenId: meta.tokenId, name: meta.name, scopes: meta.scopes } },
    },
    limit,
  );
  if (!stored) throw new AppError('Conflict', workspaceCountRefusal('apiTokens', limit));
  return { ...meta, token };
};

/**
 * POST /platform/workspaces/{slug}/portal-sessions: as the workspace route, minted by the Platform
 * API (which holds every permission, so any session it asks for is within its own).
 */
export const platformCreatePortalSession: PlatformOperationImpl<'platformCreatePortalSession'> = async (
  deps,
  _caller,
  { params, body },
) => {
  const workspace = await getPlatformWorkspace(deps.table, params.slug);
  if (!workspace) throw notFound(params.slug);
  if (workspace.status === 'erasing') throw erasing(params.slug);
  return mintPortalSession(deps, params.slug, body, { actor: PLATFORM_API_ACTOR, heldScopes: null });
};

/** DELETE /platform/workspaces/{slug}: starts the erasure (202), or answers the one running. */
export const platformDeleteWorkspace: PlatformOperationImpl<'platformDeleteWorkspace'> = (deps, caller, { params }) =>
  startWorkspaceErasure(deps, params.slug, caller.principalArn);

/** GET /platform/jobs/{jobId} */
export const platformGetJob: PlatformOperationImpl<'platformGetJob'> = async (deps, _caller, { params }) => {
  const job = await getErasureJob(deps, params.jobId);
  if (!job) throw new AppError('JobNotFound', `No job ${params.jobId}`);
  return job;
};
