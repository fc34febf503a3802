/**
 * Stand-in: replaced by the erasure branch at merge.
 *
 * The workspace erasure job's interface, as the platform API calls it.
 */
import { AppError } from '../contract/errors';
import type { ErasureJob } from '../contract/erasure-schemas';
import type { OperationDeps } from './context';

/**
 * Starts erasing workspace `slug` (404 `WorkspaceNotFound` when there is none); when an erasure is
 * already running, the same job again.
 */
export function startWorkspaceErasure(deps: OperationDeps, slug: string, requestedBy: string): Promise<ErasureJob> {
  void deps;
  void slug;
  void requestedBy;
  return Promise.reject(new AppError('InternalError', 'erasure not built yet'));
}

/** An erasure job by id, or null. */
export function getErasureJob(deps: OperationDeps, jobId: string): Promise<ErasureJob | null> {
  void deps;
  void jobId;
  return Promise.reject(new AppError('InternalError', 'erasure not built yet'));
}
