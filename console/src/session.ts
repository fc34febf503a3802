/**
 * The signed-in session (docs/architecture.md#console): workspace slug and API token, kept in
 * `sessionStorage` only (gone when the tab closes; never in localStorage, a URL or a log).
 */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { ApiClient } from './api/client';
import type { Overview, Permission } from './api/contract';

const KEY = 'webhooks-console-session';

/** What is stored for a signed-in tab. */
export interface StoredSession {
  readonly slug: string;
  readonly token: string;
}

/** Reads the stored session, if any. */
export function loadSession(): StoredSession | null {
  try {
    const raw = sessionStorage.getItem(KEY);
    if (!raw) return null;
    const value = JSON.parse(raw) as Partial<StoredSession>;
    return typeof value.slug === 'string' && typeof value.token === 'string' ? { slug: value.slug, token: value.token } : null;
  } catch {
    return null;
  }
}

/** Keeps the session for this tab. */
export function saveSession(session: StoredSession): void {
  sessionStorage.setItem(KEY, JSON.stringify(session));
}

/** Forgets the session. */
export function clearSession(): void {
  sessionStorage.removeItem(KEY);
}

/** What every page can use: the client, and what the token may do. */
export interface Session {
  readonly slug: string;
  readonly client: ApiClient;
  /** The token's permissions, from the overview's `caller`. */
  readonly permissions: ReadonlySet<Permission>;
  readonly caller: Overview['caller'];
  readonly workspaceName: string;
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

/** True when the token may do `permission`: the console hides what it may not. */
export function useCan(permission: Permission): boolean {
  return useSession().permissions.has(permission);
}
