/**
 * Scopes and permissions (docs/architecture.md#scopes-and-permissions): what each bundle grants,
 * exactly, which strings are scopes, and which requested permissions a caller lacks.
 */
import { describe, expect, it } from 'vitest';
import {
  excessPermissions,
  isScope,
  PERMISSIONS,
  permissionsOf,
  portalSessionPermissions,
  SCOPE_BUNDLES,
  SCOPES,
} from '../../lambdas/contract/permissions';

const READ = ['member:list', 'token:list', 'audit:list', 'notification:list', 'event-type:list', 'webhook:read', 'webhook:list'];
const WRITE = [...READ, 'notification:ack', 'webhook:write', 'webhook:delete', 'webhook:rotate-secret', 'webhook:test', 'webhook:replay'];

describe('scope bundles', () => {
  it('read grants every list and get, write adds acknowledging notifications and the webhook changes, admin adds token:write and portal:write', () => {
    expect([...permissionsOf(['read'])]).toEqual(READ);
    expect([...permissionsOf(['write'])]).toEqual(WRITE);
    expect([...permissionsOf(['admin'])]).toEqual([...WRITE, 'token:write', 'portal:write']);
    expect(SCOPE_BUNDLES).toEqual({ read: READ, write: WRITE, admin: [...WRITE, 'token:write', 'portal:write'] });
  });

  it('admin holds every permission there is', () => {
    expect(new Set(permissionsOf(['admin']))).toEqual(new Set(PERMISSIONS));
    expect(PERMISSIONS).toHaveLength(15);
  });
});

describe('scopes', () => {
  it('are the three bundle names and every single permission, nothing else', () => {
    expect(SCOPES).toEqual(['read', 'write', 'admin', ...PERMISSIONS]);
    for (const scope of SCOPES) expect(isScope(scope)).toBe(true);
    for (const value of ['', 'READ', 'webhook', 'webhook:*', 'toString', 'constructor', 'read ']) expect(isScope(value)).toBe(false);
  });

  it('a single permission grants itself only; unknown strings grant nothing', () => {
    expect([...permissionsOf(['webhook:test'])]).toEqual(['webhook:test']);
    expect([...permissionsOf(['webhook:test', 'token:write', 'webhook:test'])]).toEqual(['webhook:test', 'token:write']);
    expect([...permissionsOf(['bogus', 'WRITE', '', 'webhook:*'])]).toEqual([]);
    expect([...permissionsOf([])]).toEqual([]);
  });
});

describe('excessPermissions', () => {
  it('lists what is requested and not held, in the order requested; empty when allowed', () => {
    expect(excessPermissions(['admin'], ['write', 'read', 'token:write'])).toEqual([]);
    expect(excessPermissions(['write'], ['admin'])).toEqual(['token:write', 'portal:write']);
    expect(excessPermissions(['read'], ['webhook:replay', 'webhook:list', 'webhook:write'])).toEqual(['webhook:replay', 'webhook:write']);
    expect(excessPermissions(['webhook:list'], ['read'])).toEqual(READ.filter((p) => p !== 'webhook:list'));
    expect(excessPermissions([], ['bogus'])).toEqual([]);
  });
});

describe('portal session permissions', () => {
  it("are the read or write bundle without the platform's tokens and members, and never portal:write", () => {
    const hidden = ['member:list', 'token:list'];
    expect(portalSessionPermissions(true)).toEqual(READ.filter((p) => !hidden.includes(p)));
    expect(portalSessionPermissions(false)).toEqual(WRITE.filter((p) => !hidden.includes(p)));
    for (const p of ['token:list', 'token:write', 'member:list', 'portal:write']) expect(portalSessionPermissions(false)).not.toContain(p);
    expect(portalSessionPermissions(true)).toContain('audit:list');
  });
});
