import { describe, expect, it } from 'vitest';
import {
  activeSecrets,
  mintSecret,
  openSecrets,
  rotateSecrets,
  SECRET_GRACE_MS,
  type SealedSecret,
  type StoredSecret,
} from '../../lambdas/domain/secrets';
import { localSecretSealer } from '../../lambdas/store/secret-sealing';

const t0 = new Date('2026-11-01T00:00:00Z');
const at = (ms: number) => new Date(t0.getTime() + ms);
// Rotation never looks inside a sealed value: a stand-in named by its ciphertext is enough to follow each secret.
const sealedAs = (name: string): SealedSecret => ({ ciphertext: name, iv: '', tag: '', dataKey: '' });
const names = (s: readonly StoredSecret[]) => s.map((x) => x.sealed.ciphertext);

describe('signing secrets', () => {
  it('are whsec_ + base64 of 32 random bytes', () => {
    const a = mintSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
    expect(mintSecret()).not.toBe(a);
  });

  it('rotation keeps the replaced secret for 24 h, newest first', () => {
    const first = rotateSecrets([], sealedAs('A'), t0);
    expect(first.previousSecretExpiresAt).toBeNull();
    expect(first.secrets).toEqual([{ sealed: sealedAs('A'), createdAt: t0.toISOString(), expiresAt: null }]);
    const second = rotateSecrets(first.secrets, sealedAs('B'), at(1000));
    expect(second.previousSecretExpiresAt).toBe(at(1000 + SECRET_GRACE_MS).toISOString());
    expect(names(activeSecrets(second.secrets, at(2000)))).toEqual(['B', 'A']);
    expect(names(activeSecrets(second.secrets, at(1000 + SECRET_GRACE_MS - 1)))).toEqual(['B', 'A']);
    // Expired secrets never sign, even before the expiry schedule drops it.
    expect(names(activeSecrets(second.secrets, at(1000 + SECRET_GRACE_MS)))).toEqual(['B']);
  });

  it('rotating again inside the window drops the original: at most two active', () => {
    let s = rotateSecrets([], sealedAs('A'), t0).secrets;
    s = rotateSecrets(s, sealedAs('B'), at(1000)).secrets;
    s = rotateSecrets(s, sealedAs('C'), at(2000)).secrets;
    expect(names(s)).toEqual(['C', 'B']);
    expect(names(activeSecrets(s, at(3000)))).toEqual(['C', 'B']);
  });
});

describe('sealed secrets (docs/architecture.md#secrets)', () => {
  it('a rotation stores no plaintext; opening gives the active secrets back, newest first', async () => {
    const sealer = localSecretSealer();
    const [original, fresh] = [mintSecret(), mintSecret()];
    const first = rotateSecrets([], await sealer.seal(original), t0).secrets;
    const rotated = rotateSecrets(first, await sealer.seal(fresh), at(1000)).secrets;
    for (const secret of [original, fresh]) expect(JSON.stringify(rotated)).not.toContain(secret.slice(6));
    expect(await openSecrets(activeSecrets(rotated, at(2000)), sealer)).toEqual([fresh, original]);
  });
});
