/**
 * A workspace's list of its recovery jobs (docs/architecture.md#item-keys): a job item is keyed by
 * its id alone (a job message carries only the id), so each recovery job also has a small entry in
 * its workspace's partition, `JOB#<jobId>`, holding its status. The entry is put in the job's
 * create transaction and again in the transaction that ends it, so its status is always the job's;
 * a list is one Query of the entries (newest first: job ids are time-ordered), filtered on the
 * status, then the page's jobs read by id.
 */
import type { JobStatus } from '../contract/jobs';
import { idPattern } from '../contract/ids';
import type { Page } from '../contract/pagination';
import type { JobRecord } from '../domain/recovery';
import type { TransactItem } from './audit';
import type { TableContext } from './client';
import { queryFilteredPage, type ItemFilter } from './filtered-pages';
import { str } from './table-io';
import { keys, SK_PREFIX } from './table-schema';

/** The transaction item that puts a job's entry with its current status (on creation, and when it ends). */
export function jobEntryPut(
  table: TableContext,
  job: Pick<JobRecord, 'workspace' | 'jobId' | 'createdAt'>,
  status: JobStatus,
): TransactItem {
  return {
    Put: {
      TableName: table.tableName,
      Item: { ...keys.workspaceJob(job.workspace, job.jobId), type: 'job-entry', jobId: job.jobId, status, createdAt: job.createdAt },
    },
  };
}

/** The status filter of a job list: none, or one or more statuses (in a canonical order, so equal filters share cursors). */
function statusFilter(statuses: readonly JobStatus[] | undefined): ItemFilter | undefined {
  if (!statuses || statuses.length === 0) return undefined;
  const distinct = [...new Set(statuses)].sort();
  return {
    expression: `#status IN (${distinct.map((_, i) => `:status${i}`).join(', ')})`,
    names: { '#status': 'status' },
    values: Object.fromEntries(distinct.map((s, i) => [`:status${i}`, s])),
    fingerprint: `status=${distinct.join(',')}`,
  };
}

/**
 * A page of a workspace's jobs, newest first, optionally only those in `statuses`: the entries,
 * then each job by `read` (its id); a job that no longer matches when read (it ended meanwhile) is
 * left out of the page.
 */
export function listWorkspaceJobs<T extends { readonly status: JobStatus }>(
  table: TableContext,
  slug: string,
  query: { limit: number; cursor?: string | undefined; statuses?: readonly JobStatus[] | undefined },
  read: (jobId: string) => Promise<T | null>,
): Promise<Page<T>> {
  const filter = statusFilter(query.statuses);
  return queryFilteredPage(table, {
    pk: keys.workspacePk(slug),
    skPrefix: SK_PREFIX.job,
    limit: query.limit,
    cursor: query.cursor,
    idPattern: idPattern('whj'),
    ...(filter ? { filter } : {}),
    map: (items) =>
      Promise.all(
        items.map(async (item) => {
          const job = await read(str(item, 'jobId'));
          return job && (!query.statuses?.length || query.statuses.includes(job.status)) ? job : null;
        }),
      ),
  });
}
