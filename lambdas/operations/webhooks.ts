/**
 * Webhook endpoint operations (docs/behaviour.md#endpoint-rules, docs/behaviour.md#secret-rotation).
 * URLs are redacted everywhere but on endpoint resources shown to write-scope callers
 * (docs/behaviour.md#url-redaction); so are the token URL and plain header values of an endpoint's
 * options, whose writes are checked and sealed in ./endpoint-options.ts (docs/behaviour.md#custom-headers).
 */
import { AppError } from '../contract/errors';
import { workspaceCountRefusal } from '../contract/rate-limits';
import { clampLimit } from '../contract/pagination';
import { permissionsOf } from '../contract/permissions';
import type { EndpointCore } from '../contract/schemas';
import { newId } from '../domain/ids';
import { mintSecret, rotateSecrets } from '../domain/secrets';
import { redactUrl, urlAsSeenWith } from '../domain/url-redaction';
import { checkWebhookUrl } from '../domain/webhook-url';
import type { OptionsReader } from '../domain/endpoint-options';
import {
  deleteEndpoint,
  ENDPOINT_CHANGED,
  getEndpointRecord,
  listEndpoints,
  putEndpoint,
  toEndpointWire,
  updateEndpoint,
  writeEndpointSecrets,
  type EndpointChanges,
  type EndpointRecord,
} from '../store/endpoints';
import type { Caller, OperationDeps, OperationImpl } from './context';
import { callerActor } from './context';
import { optionChangesFor, optionsForCreate } from './endpoint-options';
import { NO_HEALTH, withHealth } from './health';
import { assertMayChangeEndpoint, assertMaySubscribe } from './portal-scope';
import { workspaceLimitsOf } from './rate-limiter';

/** How the caller reads options (docs/behaviour.md#custom-headers): `write` with `webhook:write`, which also shows the full URLs. */
const readerOf = (caller: Caller): OptionsReader => (permissionsOf(caller.scopes).has('webhook:write') ? 'write' : 'read');

/**
 * An endpoint read for `caller` ({@link readerOf}) as this caller may see it: without `webhook:write`,
 * the URL and the token URL redacted (docs/behaviour.md#url-redaction). Header values were already
 * shown to the reader only as it may see them, and the client secret never.
 */
function withUrlsFor(caller: Caller, endpoint: EndpointCore): EndpointCore {
  const permissions = permissionsOf(caller.scopes);
  return {
    ...endpoint,
    url: urlAsSeenWith(endpoint.url, permissions),
    auth: endpoint.auth && { ...endpoint.auth, tokenUrl: urlAsSeenWith(endpoint.auth.tokenUrl, permissions) },
  };
}

/** The stored endpoint as `caller` may see it. */
const asSeenBy = (caller: Caller, record: EndpointRecord): EndpointCore => withUrlsFor(caller, toEndpointWire(record, readerOf(caller)));

function validUrl(deps: OperationDeps, raw: string): string {
  const check = checkWebhookUrl(raw, deps.urlPolicy);
  if (!check.ok) throw new AppError('InvalidWebhookUrl', check.detail, { rule: check.rule });
  return check.url.href;
}

function knownEventTypes(deps: OperationDeps, types: readonly string[]): string[] {
  const unknown = types.filter((t) => !deps.eventTypes.has(t));
  if (unknown.length > 0) {
    throw new AppError(
      'UnknownEventType',
      `Unknown event type${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}. GET /workspaces/{slug}/event-types lists the catalogue.`,
      {
        unknownEventTypes: unknown,
      },
    );
  }
  return [...types];
}

async function mustGet(deps: OperationDeps, slug: string, endpointId: string): Promise<EndpointRecord> {
  const record = await getEndpointRecord(deps.table, slug, endpointId);
  if (!record) throw new AppError('EndpointNotFound', `No webhook endpoint ${endpointId} in workspace ${slug}`);
  return record;
}

/** GET /workspaces/{slug}/webhooks: health is read for the page's endpoints only (at most `limit`). */
export const listWebhooks: OperationImpl<'listWebhooks'> = async (deps, caller, { query }) => {
  const page = await listEndpoints(deps.table, caller.workspace, clampLimit(query.limit), query.cursor, readerOf(caller));
  // Spread, not rebuilt: the page keeps its resume-after positions, so a response over the size limit can end early.
  return { ...page, items: await Promise.all(page.items.map((e) => withHealth(deps, withUrlsFor(caller, e)))) };
};

/**
 * POST /workspaces/{slug}/webhooks: the secret is minted and kept (sealed), never returned; 409 when
 * the workspace has its most endpoints (docs/behaviour.md#rate-limits). Its options are checked
 * before anything is sealed or written; the audit entry names its headers, never their values.
 */
export const createWebhook: OperationImpl<'createWebhook'> = async (deps, caller, { body }) => {
  const url = validUrl(deps, body.url);
  const eventTypes = knownEventTypes(deps, body.eventTypes);
  assertMaySubscribe(caller, eventTypes);
  const { options, audit } = await optionsForCreate(deps, body);
  const now = deps.now();
  const record: EndpointRecord = {
    endpointId: newId('whe', now),
    workspace: caller.workspace,
    url,
    eventTypes,
    description: body.description ?? null,
    enabled: body.enabled ?? true,
    consecutiveFailures: 0,
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
    secrets: rotateSecrets([], await deps.secretSealer.seal(mintSecret()), now).secrets,
    secretVersion: 1,
    ...(options ? { options } : {}),
  };
  const { endpoints: limit } = workspaceLimitsOf(deps);
  const stored = await putEndpoint(
    deps.table,
    record,
    now,
    {
      action: 'webhook.created',
      actor: callerActor(caller),
      targetId: record.endpointId,
      detail: { url: redactUrl(url), eventTypes, ...audit },
      event: { type: 'webhook.created', payload: { endpointId: record.endpointId, url: redactUrl(url), eventTypes } },
    },
    limit,
  );
  if (!stored) throw new AppError('Conflict', workspaceCountRefusal('endpoints', limit));
  // A new endpoint id has no counters yet.
  return { ...asSeenBy(caller, record), health: NO_HEALTH };
};

/** GET /workspaces/{slug}/webhooks/{endpointId} */
export const getWebhook: OperationImpl<'getWebhook'> = async (deps, caller, { params }) =>
  withHealth(deps, asSeenBy(caller, await mustGet(deps, caller.workspace, params.endpointId)));

/**
 * PATCH /workspaces/{slug}/webhooks/{endpointId}: only the fields sent change. One that changes the
 * URL, the headers or the OAuth settings is planned from the endpoint as read (the header merge, a
 * kept client secret, the secrets a move to another origin needs) and written only if the endpoint
 * is still as read: else 409 `Conflict`, never a silently lost header (docs/behaviour.md#custom-headers).
 */
export const updateWebhook: OperationImpl<'updateWebhook'> = async (deps, caller, { params, body }) => {
  const fields: Pick<EndpointChanges, 'url' | 'eventTypes' | 'description' | 'enabled'> = {};
  if (body.url !== undefined) fields.url = validUrl(deps, body.url);
  if (body.eventTypes !== undefined) fields.eventTypes = knownEventTypes(deps, body.eventTypes);
  if (body.description !== undefined) fields.description = body.description;
  if (body.enabled !== undefined) fields.enabled = body.enabled;
  const existing = await mustGet(deps, caller.workspace, params.endpointId);
  // A portal session limited to some types changes only endpoints within them, and keeps them there.
  assertMayChangeEndpoint(caller, existing);
  if (fields.eventTypes) assertMaySubscribe(caller, fields.eventTypes);
  const options = await optionChangesFor(deps, body, existing, fields.url);
  const changes: EndpointChanges = { ...fields, ...options.changes };
  const guarded = fields.url !== undefined || body.headers !== undefined || body.auth !== undefined;
  // After the `updatedAt` read, so a concurrent change planned from the same read always sees it moved.
  const now = new Date(Math.max(deps.now().getTime(), Date.parse(existing.updatedAt) + 1));
  // The event names the endpoint's URL as it is after the change: the one sent, else the stored one.
  const url = fields.url ?? existing.url;
  const changed = Object.keys(changes);
  const updated = await updateEndpoint(
    deps.table,
    caller.workspace,
    params.endpointId,
    changes,
    now,
    {
      action: 'webhook.updated',
      actor: callerActor(caller),
      targetId: params.endpointId,
      detail: { changed, ...fields, ...(fields.url !== undefined ? { url: redactUrl(fields.url) } : {}), ...options.audit },
      event: { type: 'webhook.updated', payload: { endpointId: params.endpointId, url: redactUrl(url), changed } },
    },
    guarded ? existing.updatedAt : undefined,
  );
  if (updated === ENDPOINT_CHANGED)
    throw new AppError(
      'Conflict',
      `Webhook endpoint ${params.endpointId} was changed at the same time as this update; read it again and retry.`,
    );
  if (!updated) throw new AppError('EndpointNotFound', `No webhook endpoint ${params.endpointId} in workspace ${caller.workspace}`);
  return withHealth(deps, asSeenBy(caller, updated));
};

/**
 * DELETE /workspaces/{slug}/webhooks/{endpointId}: its history is hidden at once and deleted by a
 * paced purge job (docs/behaviour.md#deleting-an-endpoint).
 */
export const deleteWebhook: OperationImpl<'deleteWebhook'> = async (deps, caller, { params }) => {
  const existing = await getEndpointRecord(deps.table, caller.workspace, params.endpointId);
  if (existing) assertMayChangeEndpoint(caller, existing);
  const now = deps.now();
  const purge = { jobId: newId('whj', now) };
  const deleted = await deleteEndpoint(
    deps.table,
    caller.workspace,
    params.endpointId,
    now,
    {
      action: 'webhook.deleted',
      actor: callerActor(caller),
      targetId: params.endpointId,
      event: { type: 'webhook.deleted', payload: { endpointId: params.endpointId, url: existing ? redactUrl(existing.url) : '' } },
    },
    purge,
  );
  if (!deleted) throw new AppError('EndpointNotFound', `No webhook endpoint ${params.endpointId} in workspace ${caller.workspace}`);
  try {
    await deps.jobQueue?.send({ jobId: purge.jobId });
  } catch {
    // The delete stands: its deliveries are hidden from every read already, and retention's TTL removes them.
  }
};

/** POST .../rotate-secret: the new secret, shown once. */
export const rotateWebhookSecret: OperationImpl<'rotateWebhookSecret'> = async (deps, caller, { params }) => {
  const record = await mustGet(deps, caller.workspace, params.endpointId);
  assertMayChangeEndpoint(caller, record);
  const now = deps.now();
  const secret = mintSecret();
  const rotated = rotateSecrets(record.secrets, await deps.secretSealer.seal(secret), now);
  const outcome = await writeEndpointSecrets(deps.table, caller.workspace, record.endpointId, rotated.secrets, record.secretVersion, now, {
    action: 'webhook.secret_rotated',
    actor: callerActor(caller),
    targetId: record.endpointId,
    detail: { previousSecretExpiresAt: rotated.previousSecretExpiresAt },
    event: {
      type: 'webhook.secret_rotated',
      payload: { endpointId: record.endpointId, previousSecretExpiresAt: rotated.previousSecretExpiresAt },
    },
  });
  if (outcome === 'not_found')
    throw new AppError('EndpointNotFound', `No webhook endpoint ${params.endpointId} in workspace ${caller.workspace}`);
  if (outcome === 'conflict') throw new AppError('Conflict', 'Another rotation of this secret happened at the same time; retry.');
  return { endpointId: record.endpointId, secret, previousSecretExpiresAt: rotated.previousSecretExpiresAt };
};
