/**
 * What the console lets a session do, decided in one place for every page. No page code here,
 * so a unit test can load it without the DOM.
 */
import type { Permission } from './api/contract';
import type { StaffRole } from '../../lambdas/contract/console-oidc';
import { SCOPE_BUNDLES } from '../../lambdas/contract/permissions';

/**
 * The permissions the console shows controls for: the token's own; for a read-only portal
 * session only the read ones among them; for a staff session only those of its role's bundle
 * (a `read` role sees no control that changes anything).
 */
export function consolePermissions(
  tokenPermissions: readonly Permission[],
  portal: { readonly readOnly: boolean } | undefined,
  staff?: { readonly role: StaffRole },
): ReadonlySet<Permission> {
  const limit = portal?.readOnly ? SCOPE_BUNDLES.read : staff ? SCOPE_BUNDLES[staff.role] : null;
  if (!limit) return new Set(tokenPermissions);
  const allowed = new Set<Permission>(limit);
  return new Set(tokenPermissions.filter((p) => allowed.has(p)));
}
