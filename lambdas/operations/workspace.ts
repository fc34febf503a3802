/** Workspace reads: overview, members, audit trail, notifications, event types. */
import { AppError } from '../contract/errors';
import { permissionsOf } from '../contract/permissions';
import { clampLimit } from '../contract/pagination';
import { countApiTokens } from '../store/api-tokens';
import { listAuditEvents as readAudit } from '../store/audit';
import { windowBuckets } from '../domain/delivery-health';
import { countEndpoints } from '../store/endpoints';
import { readReplayedDeadLetters } from '../store/health-counters';
import { listNotifications as readNotifications } from '../store/notifications';
import { countMembers, getWorkspace, listMembers as readMembers } from '../store/workspaces';
import type { OperationImpl } from './context';
import { deliveries24h } from './health';
import { visibleEventTypes } from './portal-scope';

/** GET /workspaces/{slug}/overview */
export const getWorkspaceOverview: OperationImpl<'getWorkspaceOverview'> = async (deps, caller) => {
  const { firstHour, lastHour } = windowBuckets('24h', deps.now());
  // Counts of what the caller may not list are not read: a portal session learns nothing of the platform's members or tokens.
  const may = permissionsOf(caller.scopes);
  const [workspace, webhooks, members, apiTokens, last24h, replayedDeadLetters] = await Promise.all([
    getWorkspace(deps.table, caller.workspace),
    countEndpoints(deps.table, caller.workspace),
    may.has('member:list') ? countMembers(deps.table, caller.workspace) : null,
    may.has('token:list') ? countApiTokens(deps.table, caller.workspace) : null,
    deliveries24h(deps, caller.workspace),
    readReplayedDeadLetters(deps.table, caller.workspace, firstHour, lastHour),
  ]);
  if (!workspace) throw new AppError('WorkspaceNotFound', `No workspace ${caller.workspace}`);
  return {
    workspace,
    webhooks: { total: webhooks.total, enabled: webhooks.enabled, disabled: webhooks.total - webhooks.enabled },
    members,
    apiTokens,
    deliveries24h: last24h,
    // Replays count in the hour their source was dead-lettered, so both sums cover the same dead letters.
    deadLetteredUnreplayed24h: Math.max(0, last24h.deadLettered - replayedDeadLetters),
    caller: { tokenId: caller.tokenId, scopes: [...caller.scopes], permissions: [...may] },
  };
};

/** GET /workspaces/{slug}/members */
export const listMembers: OperationImpl<'listMembers'> = (deps, caller, { query }) =>
  readMembers(deps.table, caller.workspace, clampLimit(query.limit), query.cursor);

/** GET /workspaces/{slug}/audit-events */
export const listAuditEvents: OperationImpl<'listAuditEvents'> = (deps, caller, { query }) =>
  readAudit(deps.table, caller.workspace, clampLimit(query.limit), query.cursor);

/** GET /workspaces/{slug}/notifications */
export const listNotifications: OperationImpl<'listNotifications'> = (deps, caller, { query }) =>
  readNotifications(
    deps.table,
    caller.workspace,
    clampLimit(query.limit),
    query.cursor,
    query.acknowledged === undefined ? undefined : query.acknowledged === 'true',
  );

/** GET /workspaces/{slug}/event-types */
export const listEventTypes: OperationImpl<'listEventTypes'> = async (deps, caller) => ({
  items: visibleEventTypes(caller, deps.eventTypes.types),
});
