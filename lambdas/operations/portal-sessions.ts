/**
 * Portal sessions and branding (docs/behaviour.md#portal-sessions, docs/behaviour.md#branding): a
 * workspace token with `portal:write` mints a link to the console for its customer's people; the
 * link's code, opened once within ten minutes, becomes a `whs_` session token whose permissions
 * are within its creator's and never reach the platform's tokens or members.
 */
import { AppError } from '../contract/errors';
import { clampLimit } from '../contract/pagination';
import { excessPermissions, portalSessionPermissions } from '../contract/permissions';
import { PORTAL_CODE_TTL_SECONDS, PORTAL_SESSION_LIFETIME } from '../contract/portal';
import type { PortalExchangeResult } from '../contract/portal-schemas';
import { hashApiToken, mintPortalCode, mintSessionToken } from '../domain/api-tokens';
import { brandingIssues } from '../domain/branding';
import { newId } from '../domain/ids';
import { getBranding as readBranding, putBranding } from '../store/branding';
import { deletePortalSession, listPortalSessions as readSessions, openPortalSession, putPortalSession } from '../store/portal-sessions';
import type { AuditActor } from '../contract/schemas';
import { callerActor, type OperationDeps, type OperationImpl } from './context';
import type { PublicOperationImpl } from './platform-context';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** A 400 naming one field of the body. */
function invalidField(field: string, message: string): AppError {
  return new AppError('ReturnUrlNotAllowed', `${field}: ${message}`);
}

/**
 * `returnUrl` as allowed (docs/behaviour.md#portal-sessions): https (or http on a loopback host
 * where loopback targets are allowed: the local stack), no credentials, and an origin the stage
 * lets frame the console (a loopback origin, locally), so a link never redirects elsewhere.
 */
function allowedReturnUrl(deps: OperationDeps, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidField('returnUrl', 'must be an absolute URL');
  }
  const loopback = deps.urlPolicy.allowLoopback === true && LOOPBACK_HOSTS.has(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) throw invalidField('returnUrl', 'must be an https URL');
  if (url.username || url.password) throw invalidField('returnUrl', 'must not carry credentials');
  const ancestors = deps.portal?.frameAncestors ?? [];
  if (!loopback && !ancestors.includes(url.origin)) {
    throw invalidField(
      'returnUrl',
      `its origin ${url.origin} is not one the stage lets frame the console (setting consoleFrameAncestors${ancestors.length ? `: ${ancestors.join(', ')}` : ', empty'})`,
    );
  }
  return url.href;
}

/** The catalogue's types among `types`, or 400 UnknownEventType naming the others. */
function knownTypes(deps: OperationDeps, types: readonly string[]): string[] {
  const unknown = types.filter((t) => !deps.eventTypes.has(t));
  if (unknown.length > 0) {
    throw new AppError('UnknownEventType', `Unknown event type${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`, {
      unknownEventTypes: unknown,
    });
  }
  return [...types];
}

/** What a portal session is asked for (the body of either create route). */
type PortalSessionRequest = Parameters<OperationImpl<'createPortalSession'>>[2]['body'];

/** Who mints a portal session: its audit actor, and the scopes it holds (null: the platform API, which holds them all). */
interface PortalSessionCreator {
  readonly actor: AuditActor;
  readonly heldScopes: readonly string[] | null;
}

/** POST /workspaces/{slug}/portal-sessions: the session and its single-use link. */
export const createPortalSession: OperationImpl<'createPortalSession'> = (deps, caller, { body }) =>
  mintPortalSession(deps, caller.workspace, body, { actor: callerActor(caller), heldScopes: caller.scopes });

/**
 * A portal session of workspace `workspace` and its single-use link, for either create route (a
 * workspace token's, or the platform API's): the session's permissions within the creator's.
 */
export async function mintPortalSession(
  deps: OperationDeps,
  workspace: string,
  body: PortalSessionRequest,
  creator: PortalSessionCreator,
): Promise<{ sessionId: string; url: string; expiresAt: string }> {
  const readOnly = body.readOnly ?? false;
  const permissions = portalSessionPermissions(readOnly);
  const excess = creator.heldScopes === null ? [] : excessPermissions(creator.heldScopes, permissions);
  if (excess.length > 0) {
    throw new AppError(
      'Forbidden',
      `A ${readOnly ? 'read-only' : 'writing'} portal session would grant permissions the calling token lacks: ${excess.join(', ')}`,
      { excessPermissions: excess },
    );
  }
  const eventTypes = body.eventTypes ? knownTypes(deps, body.eventTypes) : null;
  const returnUrl = body.returnUrl === undefined ? null : allowedReturnUrl(deps, body.returnUrl);
  const consoleUrl = deps.portal?.consoleUrl;
  // A deployment fault, not the caller's: the function was not told where the console is.
  if (!consoleUrl) throw new Error('CONSOLE_URL is not set: portal links cannot be made');
  const now = deps.now();
  const expiresAt = new Date(now.getTime() + (body.expiresIn ?? PORTAL_SESSION_LIFETIME.defaultSeconds) * 1000).toISOString();
  const codeExpiresMs = Math.min(now.getTime() + PORTAL_CODE_TTL_SECONDS * 1000, Date.parse(expiresAt));
  const sessionId = newId('wps', now);
  const code = mintPortalCode();
  await putPortalSession(
    deps.table,
    {
      sessionId,
      workspace,
      createdAt: now.toISOString(),
      expiresAt,
      readOnly,
      permissions,
      eventTypes,
      returnUrl,
      createdBy: creator.actor,
    },
    { hash: hashApiToken(code), expiresAt: new Date(codeExpiresMs).toISOString() },
    now,
    {
      action: 'portal_session.created',
      actor: creator.actor,
      targetId: sessionId,
      detail: { readOnly, eventTypes, expiresAt },
    },
  );
  return { sessionId, url: `${consoleUrl.split('#')[0]}#portal=${code}`, expiresAt };
}

/** GET /workspaces/{slug}/portal-sessions: the unexpired sessions, newest first. */
export const listPortalSessions: OperationImpl<'listPortalSessions'> = (deps, caller, { query }) =>
  readSessions(deps.table, caller.workspace, clampLimit(query.limit), deps.now(), query.cursor);

/** DELETE /workspaces/{slug}/portal-sessions/{sessionId}: the session's token stops resolving at once. */
export const revokePortalSession: OperationImpl<'revokePortalSession'> = async (deps, caller, { params }) => {
  const deleted = await deletePortalSession(deps.table, caller.workspace, params.sessionId, deps.now(), {
    action: 'portal_session.revoked',
    actor: callerActor(caller),
    targetId: params.sessionId,
  });
  if (!deleted) throw new AppError('PortalSessionNotFound', `No portal session ${params.sessionId} in workspace ${caller.workspace}`);
};

/** GET /workspaces/{slug}/branding */
export const getBranding: OperationImpl<'getBranding'> = (deps, caller) => readBranding(deps.table, caller.workspace);

/** PUT /workspaces/{slug}/branding: the whole branding, validated (a field left out is cleared). */
export const setBranding: OperationImpl<'setBranding'> = async (deps, caller, { body }) => {
  const issues = brandingIssues(body);
  if (issues.length > 0) {
    throw new AppError('InvalidBranding', `Invalid branding: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}`, {
      issues: issues.map((i) => ({ path: `body.${i.path}`, message: i.message })),
    });
  }
  const branding = {
    ...(body.displayName === undefined ? {} : { displayName: body.displayName }),
    ...(body.accentColor === undefined ? {} : { accentColor: body.accentColor.toLowerCase() }),
  };
  await putBranding(deps.table, caller.workspace, branding, deps.now(), {
    action: 'branding.updated',
    actor: callerActor(caller),
    targetId: caller.workspace,
    detail: branding,
  });
  return branding;
};

/** The shape of every code {@link mintPortalCode} makes: anything else is refused without a read. */
const CODE_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** The one answer to a code that is forged, used, expired or revoked: no oracle between them. */
function linkInvalid(): AppError {
  return new AppError(
    'PortalLinkInvalid',
    'This portal link cannot be opened: links work once, for ten minutes. Ask for a new one where you found it.',
  );
}

/**
 * Opens a link: its code is consumed (one of two racing opens wins) and answered with the session's
 * token and what the console shows; anything else is {@link linkInvalid}.
 */
export async function exchangePortalCode(deps: OperationDeps, body: { readonly code: string }): Promise<PortalExchangeResult> {
  if (!CODE_SHAPE.test(body.code)) throw linkInvalid();
  const token = mintSessionToken();
  const session = await openPortalSession(deps.table, hashApiToken(body.code), hashApiToken(token), deps.now());
  if (!session) throw linkInvalid();
  return {
    token,
    sessionId: session.sessionId,
    workspace: session.workspace,
    expiresAt: session.expiresAt,
    readOnly: session.readOnly,
    eventTypes: session.eventTypes ? [...session.eventTypes] : null,
    returnUrl: session.returnUrl,
    branding: await readBranding(deps.table, session.workspace),
  };
}

/** POST /portal-sessions/exchange (public, rate-limited by the client's address). */
export const exchangePortalSession: PublicOperationImpl<'exchangePortalSession'> = (deps, _caller, { body }) =>
  exchangePortalCode(deps, body);
