/**
 * Every operation's implementation, keyed by operation id. The mapped type
 * makes a contract operation without an implementation a compile error; the
 * MCP server (one function) uses the whole map, REST functions import one each.
 */
import type { TokenOperationId } from '../contract/operations';
import type { OperationImpl } from './context';
import { createApiToken, listApiTokens, revokeApiToken } from './api-tokens';
import {
  getWebhookDelivery,
  listWebhookDeliveries,
  listWebhookDeliveryAttempts,
  replayWebhookDelivery,
  sendWebhookTestEvent,
} from './deliveries';
import { createWebhook, deleteWebhook, getWebhook, listWebhooks, rotateWebhookSecret, updateWebhook } from './webhooks';
import { listDeliveries } from './delivery-log';
import { getWebhookHealth } from './health';
import { testWebhookFilter } from './payload-filter';
import { cancelJob, getJob, recoverWebhookDeliveries } from './recovery';
import { getWorkspaceOverview, listAuditEvents, listEventTypes, listMembers, listNotifications } from './workspace';
import { listJobs } from './jobs';
import { ackNotification } from './notifications';
import { createPortalSession, getBranding, listPortalSessions, revokePortalSession, setBranding } from './portal-sessions';
import { listConsoleSessions, listWorkspaces, revokeConsoleSession } from './staff-sessions';

/** The implementation of every token route (the other kinds' functions import theirs: they are no MCP tool). */
export const IMPLEMENTATIONS: { readonly [K in TokenOperationId]: OperationImpl<K> } = {
  listWebhooks,
  createWebhook,
  getWebhook,
  updateWebhook,
  deleteWebhook,
  rotateWebhookSecret,
  sendWebhookTestEvent,
  listWebhookDeliveries,
  getWebhookDelivery,
  listWebhookDeliveryAttempts,
  replayWebhookDelivery,
  listEventTypes,
  getWorkspaceOverview,
  listMembers,
  listApiTokens,
  createApiToken,
  revokeApiToken,
  listAuditEvents,
  listNotifications,
  listDeliveries,
  getWebhookHealth,
  recoverWebhookDeliveries,
  getJob,
  cancelJob,
  listJobs,
  ackNotification,
  testWebhookFilter,
  createPortalSession,
  listPortalSessions,
  revokePortalSession,
  getBranding,
  setBranding,
  listConsoleSessions,
  revokeConsoleSession,
  listWorkspaces,
};
