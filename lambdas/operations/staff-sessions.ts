/**
 * Staff sign-in (docs/behaviour.md#staff-sign-in): a nonce for the console's authorization request,
 * the ID token it brings back turned into a `wss_` staff session with the role its groups give,
 * the admins' list of sessions, and signing out; and the workspaces a caller may open.
 */
import { CONSOLE_NONCE_TTL_SECONDS, STAFF_SESSION_TTL_SECONDS, staffRoleOf } from '../contract/console-oidc';
import { AppError } from '../contract/errors';
import { clampLimit } from '../contract/pagination';
import type { ConsoleSessionResult } from '../contract/staff-schemas';
import { hashApiToken, mintConsoleNonce, mintStaffToken } from '../domain/api-tokens';
import { newId } from '../domain/ids';
import { getPlatformWorkspace, listPlatformWorkspaces } from '../store/platform-workspaces';
import { consumeConsoleNonce, deleteStaffSession, listStaffSessions, putConsoleNonce, putStaffSession } from '../store/staff-sessions';
import { STAFF_WORKSPACE, type ConsoleOidcDeps, type OperationDeps, type OperationImpl } from './context';
import type { PublicOperationImpl } from './platform-context';

/** The sign-in's settings and verifier, or 404 `StaffSignInDisabled` on a stage without `consoleOidc`. */
function signIn(deps: OperationDeps): ConsoleOidcDeps {
  if (!deps.consoleOidc)
    throw new AppError('StaffSignInDisabled', 'Staff sign-in is not set up on this stage (no consoleOidc setting): sign in with a token');
  return deps.consoleOidc;
}

/** The shape of every nonce {@link mintConsoleNonce} makes: anything else was never issued. */
const NONCE_SHAPE = /^[A-Za-z0-9_-]{43}$/;

const invalid = (check: string): AppError => new AppError('InvalidIdToken', `The ID token was refused: ${check}.`);

/** POST /console-sessions/nonces (public): a nonce, stored as its hash, usable once within ten minutes. */
export const createConsoleNonce: PublicOperationImpl<'createConsoleNonce'> = async (deps) => {
  signIn(deps);
  const nonce = mintConsoleNonce();
  const expiresAt = new Date(deps.now().getTime() + CONSOLE_NONCE_TTL_SECONDS * 1000).toISOString();
  await putConsoleNonce(deps.table, hashApiToken(nonce), expiresAt);
  return { nonce, expiresAt };
};

/** The groups an ID token lists in `claim`: a list of strings (or one string); anything else lists none. */
function groupsOf(payload: Record<string, unknown>, claim: string): string[] {
  const value = payload[claim];
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((g): g is string => typeof g === 'string') : [];
}

/**
 * POST /console-sessions (public): the ID token verified (signature and claims), the person's
 * email verified (or trusted), the nonce consumed once, then the role their groups give (403
 * `NoConsoleAccess` and no session when none), and a new staff session.
 */
export const createConsoleSession: PublicOperationImpl<'createConsoleSession'> = async (deps, _caller, { body }) => {
  const { settings, verifyIdToken, log } = signIn(deps);
  const payload = await verifyIdToken(body.idToken);
  const email = typeof payload.email === 'string' ? payload.email.trim() : '';
  if (email === '') throw invalid('it carries no email to name the person (ask for the email scope)');
  if (payload.email_verified !== true && !settings.trustEmailFromIssuer)
    throw invalid('its email is not verified by the identity provider (email_verified)');
  if (!NONCE_SHAPE.test(payload.nonce) || !(await consumeConsoleNonce(deps.table, hashApiToken(payload.nonce), deps.now())))
    throw invalid('its nonce was not issued by this service, was used already, or has expired: sign in again');
  const role = staffRoleOf(settings, groupsOf(payload, settings.groupsClaim));
  if (!role)
    throw new AppError(
      'NoConsoleAccess',
      `${email} is in none of the identity provider's groups that give access to the console (claim ${settings.groupsClaim})`,
    );
  const now = deps.now();
  const token = mintStaffToken();
  const session = {
    sessionId: newId('wcs', now),
    email,
    role,
    createdAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + STAFF_SESSION_TTL_SECONDS * 1000).toISOString(),
  };
  await putStaffSession(deps.table, session, hashApiToken(token), STAFF_WORKSPACE);
  log?.('Staff sign-in', { sessionId: session.sessionId, email, role });
  const result: ConsoleSessionResult = { token, sessionId: session.sessionId, email, role, expiresAt: session.expiresAt };
  return result;
};

/** GET /console-sessions: the sessions that have not ended, newest first; a staff `admin` only. */
export const listConsoleSessions: OperationImpl<'listConsoleSessions'> = (deps, caller, { query }) => {
  if (caller.staffRole !== 'admin') throw new AppError('Forbidden', 'Listing staff sessions needs a staff session with the admin role');
  return listStaffSessions(deps.table, clampLimit(query.limit), deps.now(), query.cursor);
};

/** DELETE /console-sessions/{sessionId}: an admin ends anyone's session, any staff session its own. */
export const revokeConsoleSession: OperationImpl<'revokeConsoleSession'> = async (deps, caller, { params }) => {
  if (caller.staffRole !== 'admin' && caller.tokenId !== params.sessionId)
    throw new AppError('Forbidden', "Ending another person's staff session needs a staff session with the admin role");
  if (!(await deleteStaffSession(deps.table, params.sessionId, deps.now())))
    throw new AppError('ConsoleSessionNotFound', `No staff session ${params.sessionId} (it may have ended already)`);
  deps.consoleOidc?.log?.(caller.tokenId === params.sessionId ? 'Staff sign-out' : 'Staff session revoked', {
    sessionId: params.sessionId,
    by: caller.email,
  });
};

/** GET /workspaces: a staff session's every workspace not being erased, in slug order; any other caller's own. */
export const listWorkspaces: OperationImpl<'listWorkspaces'> = async (deps, caller, { query }) => {
  if (caller.kind === 'staff') {
    const page = await listPlatformWorkspaces(deps.table, clampLimit(query.limit), query.cursor);
    // A page may hold fewer than `limit` (docs/behaviour.md#pagination): those being erased are left out.
    return {
      items: page.items.filter((w) => w.status === 'active').map(({ slug, name }) => ({ slug, name })),
      nextCursor: page.nextCursor,
    };
  }
  const own = query.cursor === undefined ? await getPlatformWorkspace(deps.table, caller.workspace) : null;
  return { items: own ? [{ slug: own.slug, name: own.name }] : [], nextCursor: null };
};
