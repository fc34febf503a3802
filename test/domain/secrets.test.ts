import { describe, expect, it } from 'vitest';
import {
  activeSecrets,
  mintSecret,
  openSecrets,
  rotateSecrets,
  SECRET_GRACE_MS,
  SecretSealerMissing,
  type StoredSecret,
} from '../../lambdas/domain/secrets';
import { localSecretSealer } from '../../lambdas/store/secret-sealing';

const t0 = new Date('2026-11-01T00:00:00Z');
const at = (ms: number) => new Date(t0.getTime() + ms);
const plain = (s: readonly StoredSecret[]) => s.map((x) => x.secret);

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
    expect(plain(activeSecrets(second.secrets, at(2000)))).toEqual(['B', 'A']);
    expect(plain(activeSecrets(second.secrets, at(1000 + SECRET_GRACE_MS - 1)))).toEqual(['B', 'A']);
    // Expired secrets never sign, even before the expiry schedule drops it.
    expect(plain(activeSecrets(second.secrets, at(1000 + SECRET_GRACE_MS)))).toEqual(['B']);
  });

  it('rotating again inside the window drops the original: at most two active', () => {
    let s = rotateSecrets([], 'A', t0).secrets;
    s = rotateSecrets(s, 'B', at(1000)).secrets;
    s = rotateSecrets(s, 'C', at(2000)).secrets;
    expect(plain(s)).toEqual(['C', 'B']);
    expect(plain(activeSecrets(s, at(3000)))).toEqual(['C', 'B']);
  });
});

describe('sealed secrets (docs/architecture.md#secrets)', () => {
  it('a sealed rotation stores no plaintext; opening gives the secrets back, a legacy plaintext one as is', async () => {
    const sealer = localSecretSealer();
    const legacy = rotateSecrets([], 'whsec_legacy', t0).secrets;
    const fresh = mintSecret();
    const rotated = rotateSecrets(legacy, await sealer.seal(fresh), at(1000)).secrets;
    expect(JSON.stringify(rotated[0])).not.toContain(fresh);
    expect(rotated[0]!.secret).toBeUndefined();
    expect(await openSecrets(activeSecrets(rotated, at(2000)), sealer)).toEqual([fresh, 'whsec_legacy']);
  });

  it('a sealed secret without a sealer is refused, never sent unsigned', async () => {
    const sealed = rotateSecrets([], await localSecretSealer().seal(mintSecret()), t0).secrets;
    await expect(openSecrets(sealed, undefined)).rejects.toBeInstanceOf(SecretSealerMissing);
  });
});
