/**
 * Hash routing (`/console#/deliveries?status=failed`): the page works under any stage prefix
 * with a single server route, and a view's filters live in the URL so it can be shared. The
 * token is never part of it.
 */
import { useEffect, useState } from 'preact/hooks';
import { parseHash, type Route } from './hash-route';

/** The href of a console location. */
export function href(path: string, query?: Record<string, string | readonly string[] | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0)) continue;
    search.set(key, Array.isArray(value) ? value.join(',') : (value as string));
  }
  const text = search.toString();
  return `#/${path.replace(/^\//, '')}${text ? `?${text}` : ''}`;
}

/** Goes to a console location (adds a history entry). */
export function navigate(to: string): void {
  if (location.hash === to) return;
  location.hash = to;
}

/** Replaces the current location (no history entry: filter edits). */
export function replaceRoute(to: string): void {
  history.replaceState(null, '', to);
  window.dispatchEvent(new HashChangeEvent('hashchange'));
}

/** The current route, updated on navigation. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const update = () => setRoute(parseHash(location.hash));
    window.addEventListener('hashchange', update);
    return () => window.removeEventListener('hashchange', update);
  }, []);
  return route;
}
