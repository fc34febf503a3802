import { describe, expect, it } from 'vitest';
import { idPattern } from '../../lambdas/contract/ids';
import { bearerToken, hashApiToken, mintApiToken } from '../../lambdas/domain/api-tokens';
import { decodeCursor, encodeCursor } from '../../lambdas/domain/cursor';
import { excessPermissions, permissionsOf } from '../../lambdas/contract/permissions';
import { clampLimit } from '../../lambdas/contract/pagination';

const ID = idPattern('whe');

describe('cursors', () => {
  it('round-trip a position', () => {
    const c = encodeCursor({ sortKey: '2026-01-01T00:00:00.000Z', id: 'whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC' });
    expect(c).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(c, ID)).toEqual({ sortKey: '2026-01-01T00:00:00.000Z', id: 'whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC' });
  });
  it('refuse another list’s id and junk', () => {
    // Built inside the test: a throwing encodeCursor must fail a test, not the file's collection.
    const junk = [
      '',
      'x',
      '!!!',
      encodeCursor({ sortKey: 'a', id: 'tok_01JD2Y8M7K3V9Q4T6W1X5Z0ABC' }),
      Buffer.from('{"a":1}').toString('base64url'),
      Buffer.from('[1,2]').toString('base64url'),
      Buffer.from('["a","whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC","x"]').toString('base64url'),
      Buffer.from('["a"]').toString('base64url'),
      Buffer.from('[1,"whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC"]').toString('base64url'),
      Buffer.from('["a",1]').toString('base64url'),
      Buffer.from('not json').toString('base64url'),
      `!${encodeCursor({ sortKey: 'a', id: 'whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC' })}`,
      `${encodeCursor({ sortKey: 'a', id: 'whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC' })}=`,
      Buffer.from('["a",["whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC"]]').toString('base64url'),
    ];
    for (const c of junk) expect(decodeCursor(c, ID)).toBeNull();
  });
});

describe('page limits', () => {
  it.each([
    [undefined, 50],
    ['', 50],
    ['x', 50],
    ['0', 1],
    ['-1', 1],
    ['7', 7],
    ['200', 200],
    ['201', 200],
    ['1e9', 200],
    [3.7, 3],
  ])('clampLimit(%j) = %d', (raw, expected) => expect(clampLimit(raw)).toBe(expected));
});

describe('api tokens', () => {
  it('are random, prefixed, and stored as SHA-256 hex', () => {
    const t = mintApiToken();
    expect(t).toMatch(/^whk_[A-Za-z0-9_-]{43}$/);
    expect(hashApiToken(t)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiToken(t)).not.toContain(t.slice(4));
  });
  it.each([
    ['Bearer abc', 'abc'],
    ['bearer  abc ', 'abc'],
    ['Basic abc', null],
    ['Bearer', null],
    ['Bearer a b', null],
    [undefined, null],
  ])('bearerToken(%j) = %j', (h, expected) => expect(bearerToken(h)).toBe(expected));
});

describe('scopes', () => {
  it('read grants every list/get permission, webhook:list included, and nothing that writes', () => {
    const read = permissionsOf(['read']);
    expect(read.has('webhook:list')).toBe(true);
    expect(read.has('webhook:read')).toBe(true);
    expect([...read].some((p) => /write|delete|rotate|replay|test/.test(p))).toBe(false);
  });
  it('admin ⊃ write ⊃ read', () => {
    expect(excessPermissions(['admin'], ['write', 'read'])).toEqual([]);
    expect(excessPermissions(['write'], ['admin'])).toEqual(['token:write', 'portal:write']);
    expect(excessPermissions(['read'], ['webhook:write'])).toEqual(['webhook:write']);
    expect(excessPermissions(['webhook:list'], ['bogus'])).toEqual([]);
  });
});
