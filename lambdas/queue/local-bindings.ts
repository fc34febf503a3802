/**
 * In-process stand-ins for AWS resources, bound by the local stack under
 * `local:` URLs (e.g. `DELIVERY_QUEUE_URL=local:deliveries`), so the same
 * handlers run unchanged: they resolve their adapters from the environment.
 */
const bindings = new Map<string, unknown>();

/** Binds an in-process implementation to a `local:` URL. */
export function bindLocal(url: string, implementation: unknown): void {
  bindings.set(url, implementation);
}

/** True for a `local:` URL. */
export function isLocalUrl(url: string | undefined): url is string {
  return !!url && url.startsWith('local:');
}

/** The implementation bound to a `local:` URL. */
export function localBinding<T>(url: string): T {
  if (!bindings.has(url)) throw new Error(`Nothing is bound to ${url} in this process (is the local stack running?)`);
  return bindings.get(url) as T;
}
