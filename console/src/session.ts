/**
 * The signed-in session (docs/architecture.md#console): workspace slug and token, kept in
 * `sessionStorage` only (gone when the tab closes; never in localStorage, a cookie, a URL or a
 * log). A session opened from a portal link (docs/behaviour.md#the-embedded-console) also keeps
 * what the exchange said about it, so a reload inside the platform's frame stays embedded; a
 * staff session (docs/behaviour.md#staff-sign-in) keeps who is signed in, the role and the end,
 * and has no workspace until the person picks one.
 */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { ApiClient } from './api/client';
import type { Overview, Permission } from './api/contract';
import type { PortalExchange } from './api/portal';
import type { StaffSession } from './api/staff';
import type { StaffRole } from '../../lambdas/contract/console-oidc';
import { SCOPE_BUNDLES } from '../../lambdas/contract/permissions';

const KEY = 'webhooks-console-session';

/** What the console keeps of a portal session besides its token and workspace. */
export type PortalSession = Omit<PortalExchange, 'token' | 'workspace'>;

/** What is stored for a signed-in tab. */
export interface StoredSession {
  /** The workspace shown; empty for a staff session that has not picked one yet. */
  readonly slug: string;
  readonly token: string;
  /** Set when the session was opened from a portal link: the console is embedded. */
  readonly portal?: PortalSession;
  /** Set for a staff session (signed in with the stage's identity provider). */
  readonly staff?: StaffSession;
}

const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');

function portalOf(value: unknown): PortalSession | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const p = value as Record<string, unknown>;
  const branding = (p.branding && typeof p.branding === 'object' ? p.branding : {}) as PortalSession['branding'];
  if (typeof p.sessionId !== 'string' || typeof p.expiresAt !== 'string' || typeof p.readOnly !== 'boolean') return undefined;
  return {
    sessionId: p.sessionId,
    expiresAt: p.expiresAt,
    readOnly: p.readOnly,
    eventTypes: isStringList(p.eventTypes) ? p.eventTypes : null,
    returnUrl: typeof p.returnUrl === 'string' ? p.returnUrl : null,
    branding,
  };
}

function staffOf(value: unknown): StaffSession | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const s = value as Record<string, unknown>;
  if (typeof s.sessionId !== 'string' || typeof s.email !== 'string' || typeof s.expiresAt !== 'string') return undefined;
  // A staff role is the name of the scope bundle it holds.
  if (typeof s.role !== 'string' || !Object.hasOwn(SCOPE_BUNDLES, s.role)) return undefined;
  return { sessionId: s.sessionId, email: s.email, role: s.role as StaffRole, expiresAt: s.expiresAt };
}

/** Reads the stored session, if any. */
export function loadSession(): StoredSession | null {
  try {
    const raw = sessionStorage.getItem(KEY);
    if (!raw) return null;
    const value = JSON.parse(raw) as Partial<StoredSession>;
    if (typeof value.slug !== 'string' || typeof value.token !== 'string') return null;
    const portal = portalOf(value.portal);
    const staff = staffOf(value.staff);
    // A stored portal or staff session that no longer reads as one is not an operator's session either.
    if ((value.portal !== undefined && !portal) || (value.staff !== undefined && !staff)) return null;
    if (staff) return { slug: value.slug, token: value.token, staff };
    if (!value.slug) return null;
    return portal ? { slug: value.slug, token: value.token, portal } : { slug: value.slug, token: value.token };
  } catch {
    return null;
  }
}

/**
 * Keeps the session for this tab. A frame whose storage is blocked (a sandbox without
 * `allow-same-origin`, a browser refusing third-party storage) keeps it in memory only: the
 * console works until a reload.
 */
export function saveSession(session: StoredSession): void {
  try {
    sessionStorage.setItem(KEY, JSON.stringify(session));
  } catch {
    // Memory only, as said above.
  }
}

/** Forgets the session. */
export function clearSession(): void {
  try {
    sessionStorage.removeItem(KEY);
  } catch {
    // Nothing was kept.
  }
}

/** What every page can use: the client, and what the token may do. */
export interface Session {
  readonly slug: string;
  readonly client: ApiClient;
  /** What the console shows controls for (./console-permissions.ts). */
  readonly permissions: ReadonlySet<Permission>;
  readonly caller: Overview['caller'];
  readonly workspaceName: string;
  /** The portal session when the console is embedded in the platform's product; null for an operator's sign-in. */
  readonly portal: PortalSession | null;
  /** The staff session when a platform staff member signed in with the identity provider; null otherwise. */
  readonly staff: StaffSession | null;
  /**
   * Back to sign-in, forgetting the session; `reason` says why (a session that ended). Without
   * one it is the person's own sign-out, which also ends a staff session at the API.
   */
  signOut(reason?: string): void;
  /** A staff session's way back to the workspace picker. */
  switchWorkspace(): void;
}

/** The session of the signed-in console. */
export const SessionContext = createContext<Session | null>(null);

/** The current session (pages only render inside one). */
export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a signed-in console');
  return session;
}

/** True when every one of `types` is an event type the session may subscribe to. */
function withinEventTypes(session: Session, types: readonly string[]): boolean {
  const allowed = session.portal?.eventTypes;
  return !allowed || types.every((t) => allowed.includes(t));
}

/**
 * True when the session may do `permission`: the console hides what it may not. Given an
 * endpoint, also false for a portal session limited to some event types when the endpoint is
 * subscribed to another: such an endpoint is read-only to it.
 */
export function useCan(permission: Permission, endpoint?: { readonly eventTypes: readonly string[] }): boolean {
  const session = useSession();
  return session.permissions.has(permission) && (!endpoint || withinEventTypes(session, endpoint.eventTypes));
}

/** The event types a picker offers: all of `names`, or for a portal session limited to some types only those. */
export function useOfferedEventTypes(): <T extends { readonly name: string }>(items: readonly T[]) => T[] {
  const session = useSession();
  return (items) => items.filter((item) => withinEventTypes(session, [item.name]));
}
