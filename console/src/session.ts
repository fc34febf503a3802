/**
 * The signed-in session (docs/architecture.md#console): workspace slug and token, kept in
 * `sessionStorage` only (gone when the tab closes; never in localStorage, a cookie, a URL or a
 * log). A session opened from a portal link (docs/behaviour.md#the-embedded-console) also keeps
 * what the exchange said about it, so a reload inside the platform's frame stays embedded.
 */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { ApiClient } from './api/client';
import type { Overview, Permission } from './api/contract';
import type { PortalExchange } from './api/portal';
import { SCOPE_BUNDLES } from '../../lambdas/contract/permissions';

const KEY = 'webhooks-console-session';

/** What the console keeps of a portal session besides its token and workspace. */
export type PortalSession = Omit<PortalExchange, 'token' | 'workspace'>;

/** What is stored for a signed-in tab. */
export interface StoredSession {
  readonly slug: string;
  readonly token: string;
  /** Set when the session was opened from a portal link: the console is embedded. */
  readonly portal?: PortalSession;
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

/** Reads the stored session, if any. */
export function loadSession(): StoredSession | null {
  try {
    const raw = sessionStorage.getItem(KEY);
    if (!raw) return null;
    const value = JSON.parse(raw) as Partial<StoredSession>;
    if (typeof value.slug !== 'string' || typeof value.token !== 'string') return null;
    const portal = portalOf(value.portal);
    // A stored portal session that no longer reads as one is not an operator's session either.
    if (value.portal !== undefined && !portal) return null;
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

/**
 * What the console lets a session do, decided here once for every page: the token's own
 * permissions and, for a read-only portal session, only the read ones among them.
 */
export function consolePermissions(tokenPermissions: readonly Permission[], portal: PortalSession | undefined): ReadonlySet<Permission> {
  const read = new Set<Permission>(SCOPE_BUNDLES.read);
  return new Set(portal?.readOnly ? tokenPermissions.filter((p) => read.has(p)) : tokenPermissions);
}

/** What every page can use: the client, and what the token may do. */
export interface Session {
  readonly slug: string;
  readonly client: ApiClient;
  /** What the console shows controls for ({@link consolePermissions}). */
  readonly permissions: ReadonlySet<Permission>;
  readonly caller: Overview['caller'];
  readonly workspaceName: string;
  /** The portal session when the console is embedded in the platform's product; null for an operator's sign-in. */
  readonly portal: PortalSession | null;
  signOut(reason?: string): void;
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
