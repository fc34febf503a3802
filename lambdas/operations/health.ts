/**
 * Endpoint health (docs/behaviour.md#endpoint-health): the health operation, and the health
 * summary every endpoint response carries and the overview's last 24 h, all read from the
 * counters the pipeline keeps (no scan of deliveries on read).
 */
import { AppError } from '../contract/errors';
import type { Endpoint, EndpointCore, EndpointHealthSummary } from '../contract/schemas';
import { hourOf, summarizeEndpoint, summarizeHealth, summaryFirstHour, windowBuckets, workspaceLast24h } from '../domain/delivery-health';
import { getEndpointRecord } from '../store/endpoints';
import { readEndpointHours, readLatestEndpointHours, readWorkspaceHours } from '../store/health-counters';
import type { OperationDeps, OperationImpl } from './context';

/** The summary of a brand-new endpoint: nothing recorded yet. */
export const NO_HEALTH: EndpointHealthSummary = { successRate24h: null, lastAttemptAt: null };

/**
 * The endpoint's summary from one query: its 24 newest hour counters of the last 7 days, which
 * include every hour of the last 24 that has one (docs/architecture.md#health-counters).
 */
async function healthSummary(deps: Pick<OperationDeps, 'table' | 'now'>, endpointId: string): Promise<EndpointHealthSummary> {
  const now = deps.now();
  const hours = await readLatestEndpointHours(deps.table, endpointId, summaryFirstHour(now), hourOf(now), 24);
  return summarizeEndpoint(now, hours);
}

/** An endpoint with its health summary. */
export async function withHealth(deps: Pick<OperationDeps, 'table' | 'now'>, endpoint: EndpointCore): Promise<Endpoint> {
  return { ...endpoint, health: await healthSummary(deps, endpoint.endpointId) };
}

/** The overview's last 24 hourly buckets of the workspace counters. */
export async function deliveries24h(
  deps: Pick<OperationDeps, 'table' | 'now'>,
  slug: string,
): Promise<{ delivered: number; failed: number; deadLettered: number }> {
  const now = deps.now();
  const { firstHour, lastHour } = windowBuckets('24h', now);
  return workspaceLast24h(now, await readWorkspaceHours(deps.table, slug, firstHour, lastHour));
}

/** GET /workspaces/{slug}/webhooks/{endpointId}/health */
export const getWebhookHealth: OperationImpl<'getWebhookHealth'> = async (deps, caller, { params, query }) => {
  const endpoint = await getEndpointRecord(deps.table, caller.workspace, params.endpointId);
  if (!endpoint) throw new AppError('EndpointNotFound', `No webhook endpoint ${params.endpointId} in workspace ${caller.workspace}`);
  const now = deps.now();
  const window = query.window;
  const { firstHour, lastHour } = windowBuckets(window, now);
  return summarizeHealth(endpoint.endpointId, window, now, await readEndpointHours(deps.table, endpoint.endpointId, firstHour, lastHour));
};
