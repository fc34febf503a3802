import { describe, expect, it } from 'vitest';
import { activeSecrets, mintSecret, rotateSecrets, SECRET_GRACE_MS } from '../../lambdas/domain/secrets';

const t0 = new Date('2026-11-01T00:00:00Z');
const at = (ms: number) => new Date(t0.getTime() + ms);

describe('signing secrets', () => {
  it('are whsec_ + base64 of 32 random bytes', () => {
    const a = mintSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
    expect(mintSecret()).not.toBe(a);
  });

  it('rotation keeps the replaced secret for 24 h, newest first', () => {
    const first = rotateSecrets([], 'A', t0);
    expect(first.previousSecretExpiresAt).toBeNull();
    const second = rotateSecrets(first.secrets, 'B', at(1000));
    expect(second.previousSecretExpiresAt).toBe(at(1000 + SECRET_GRACE_MS).toISOString());
    expect(activeSecrets(second.secrets, at(2000))).toEqual(['B', 'A']);
    expect(activeSecrets(second.secrets, at(1000 + SECRET_GRACE_MS - 1))).toEqual(['B', 'A']);
    // Expired secrets never sign, even before the expiry schedule drops them.
    expect(activeSecrets(second.secrets, at(1000 + SECRET_GRACE_MS))).toEqual(['B']);
  });

  it('rotating again inside the window drops the original: at most two active', () => {
    let s = rotateSecrets([], 'A', t0).secrets;
    s = rotateSecrets(s, 'B', at(1000)).secrets;
    s = rotateSecrets(s, 'C', at(2000)).secrets;
    expect(s.map((x) => x.secret)).toEqual(['C', 'B']);
    expect(activeSecrets(s, at(3000))).toEqual(['C', 'B']);
  });
});
