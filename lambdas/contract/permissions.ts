/**
 * Permissions and scopes (docs/architecture.md#scopes-and-permissions). A token carries scopes: bundle
 * names (`read`, `write`, `admin`) or single permissions.
 */

/** A workspace member's roles. */
export const MEMBER_ROLES = ['owner', 'admin', 'member'] as const;

/** Every permission a route can require. */
export const PERMISSIONS = [
  'member:list',
  'token:list',
  'token:write',
  'audit:list',
  'notification:list',
  'event-type:list',
  'webhook:read',
  'webhook:list',
  'notification:ack',
  'webhook:write',
  'webhook:delete',
  'webhook:rotate-secret',
  'webhook:test',
  'webhook:replay',
  'portal:write',
] as const;

/** One permission. */
export type Permission = (typeof PERMISSIONS)[number];

const READ: readonly Permission[] = [
  'member:list',
  'token:list',
  'audit:list',
  'notification:list',
  'event-type:list',
  'webhook:read',
  'webhook:list',
];
const WRITE: readonly Permission[] = [
  ...READ,
  'notification:ack',
  'webhook:write',
  'webhook:delete',
  'webhook:rotate-secret',
  'webhook:test',
  'webhook:replay',
];
const ADMIN: readonly Permission[] = [...WRITE, 'token:write', 'portal:write'];

/** Scope bundles: `read` grants every list/get permission, `webhook:list` included. */
export const SCOPE_BUNDLES = { read: READ, write: WRITE, admin: ADMIN } as const;

/** A scope: a bundle name or a single permission. */
export type Scope = keyof typeof SCOPE_BUNDLES | Permission;

/** Every valid scope string. */
export const SCOPES = [...(Object.keys(SCOPE_BUNDLES) as (keyof typeof SCOPE_BUNDLES)[]), ...PERMISSIONS] as const;

/** True when `value` is a known scope. */
export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** The permissions granted by a list of scopes (unknown strings grant nothing). */
export function permissionsOf(scopes: readonly string[]): Set<Permission> {
  const out = new Set<Permission>();
  for (const scope of scopes) {
    if (scope in SCOPE_BUNDLES) for (const p of SCOPE_BUNDLES[scope as keyof typeof SCOPE_BUNDLES]) out.add(p);
    else if ((PERMISSIONS as readonly string[]).includes(scope)) out.add(scope as Permission);
  }
  return out;
}

/** Permissions of `requested` that `caller` does not hold (empty: allowed). */
export function excessPermissions(caller: readonly string[], requested: readonly string[]): Permission[] {
  const held = permissionsOf(caller);
  return [...permissionsOf(requested)].filter((p) => !held.has(p));
}

/**
 * What a portal session may never hold (docs/behaviour.md#portal-sessions): the platform's tokens
 * and members are not its customer's to see, and a session cannot open another.
 */
const NEVER_IN_A_SESSION: ReadonlySet<Permission> = new Set<Permission>(['token:list', 'token:write', 'member:list', 'portal:write']);

/**
 * The permissions of a portal session (docs/behaviour.md#portal-sessions): the `read` bundle when
 * `readOnly`, else the `write` bundle, without {@link NEVER_IN_A_SESSION}. The customer's own audit
 * log stays readable.
 */
export function portalSessionPermissions(readOnly: boolean): Permission[] {
  return (readOnly ? READ : WRITE).filter((p) => !NEVER_IN_A_SESSION.has(p));
}
