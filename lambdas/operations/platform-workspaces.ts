/**
 * The platform API (docs/api.md#platform-api): the workspace lifecycle, for the platform's own
 * backend, authenticated by AWS IAM. Every change is audited in the workspace's own log as the
 * Platform API ({@link PLATFORM_API_ACTOR}); the principal's ARN stays in the platform's logs.
 */
import { AppError } from '../contract/errors';
import { clampLimit } from '../contract/pagination';
import { createWorkspaceWithOwner, getPlatformWorkspace, listPlatformWorkspaces, renameWorkspace } from '../store/platform-workspaces';
import { PLATFORM_API_ACTOR, type PlatformOperationImpl } from './platform-context';
import { mintWorkspaceToken } from './api-tokens';
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
  return mintWorkspaceToken(deps, params.slug, body, PLATFORM_API_ACTOR);
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
