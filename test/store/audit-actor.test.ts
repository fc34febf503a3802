/**
 * The audit entry's actor as the store reads it back: the map written today, and the bare string
 * (a token id or `system`) that entries in a kept local table hold from before the map.
 */
import { describe, expect, it } from 'vitest';
import { storedActor } from '../../lambdas/store/audit';

describe('storedActor', () => {
  it('reads the map with the token name kept on the entry', () => {
    expect(storedActor({ pk: 'WS#a', sk: 'AUDIT#x', actor: { kind: 'token', id: 'tok_1', name: 'deploy bot' } })).toEqual({
      kind: 'token',
      id: 'tok_1',
      name: 'deploy bot',
    });
  });

  it('reads an older entry whose actor is a token id or system', () => {
    expect(storedActor({ pk: 'WS#a', sk: 'AUDIT#x', actor: 'tok_1' })).toEqual({ kind: 'token', id: 'tok_1' });
    expect(storedActor({ pk: 'WS#a', sk: 'AUDIT#x', actor: 'system' })).toEqual({ kind: 'system', id: 'system' });
  });

  it('refuses an entry with no actor at all', () => {
    expect(() => storedActor({ pk: 'WS#a', sk: 'AUDIT#x' })).toThrow(/actor/);
  });
});
