/**
 * The secret sealer's adapters (docs/architecture.md#secrets): envelope encryption that leaves no
 * plaintext, authenticated (a tampered field never opens), and KMS called once per data key per
 * container, however many deliveries open it (KMS mocked with aws-sdk-client-mock).
 */
import { randomBytes } from 'node:crypto';
import { DecryptCommand, GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { mintSecret } from '../../lambdas/domain/secrets';
import { KMS_ENCRYPTION_CONTEXT } from '../../lambdas/contract/deployment';
import { kmsSecretSealer, localSecretSealer } from '../../lambdas/store/secret-sealing';

const kms = mockClient(KMSClient);
afterEach(() => kms.reset());

/** A mocked KMS whose data keys are real: Decrypt gives back the plaintext GenerateDataKey made. */
function fakeKms() {
  const keys = new Map<string, Buffer>();
  kms.on(GenerateDataKeyCommand).callsFake(() => {
    const plaintext = randomBytes(32);
    const blob = randomBytes(48);
    keys.set(blob.toString('base64'), plaintext);
    return { Plaintext: new Uint8Array(plaintext), CiphertextBlob: new Uint8Array(blob), KeyId: 'key' };
  });
  kms.on(DecryptCommand).callsFake((input: { CiphertextBlob: Uint8Array }) => {
    const plaintext = keys.get(Buffer.from(input.CiphertextBlob).toString('base64'));
    if (!plaintext) throw new Error('InvalidCiphertextException');
    return { Plaintext: new Uint8Array(plaintext), KeyId: 'key' };
  });
}

describe('the local sealer (local stack and tests only)', () => {
  it('seals with AES-GCM: no plaintext in the sealed form, and it opens again', async () => {
    const sealer = localSecretSealer();
    const secret = mintSecret();
    const sealed = await sealer.seal(secret);
    expect(JSON.stringify(sealed)).not.toContain(secret);
    expect(JSON.stringify(sealed)).not.toContain(secret.slice(6));
    // Another container (a fresh sealer) opens it too: the data key travels with the secret.
    expect(await localSecretSealer().open(sealed)).toBe(secret);
  });

  it('refuses a tampered ciphertext or tag', async () => {
    const sealer = localSecretSealer();
    const sealed = await sealer.seal(mintSecret());
    const flipped = Buffer.from(sealed.ciphertext, 'base64');
    flipped[0]! ^= 1;
    await expect(localSecretSealer().open({ ...sealed, ciphertext: flipped.toString('base64') })).rejects.toThrow();
    await expect(localSecretSealer().open({ ...sealed, tag: Buffer.alloc(16).toString('base64') })).rejects.toThrow();
  });
});

describe('the KMS sealer', () => {
  it('one Decrypt per data key across many deliveries, concurrent ones included', async () => {
    fakeKms();
    const minting = kmsSecretSealer(new KMSClient({}), 'arn:aws:kms:eu-west-1:111122223333:key/k', { dataKeyReuseMs: 0 });
    const secrets = [mintSecret(), mintSecret()];
    const sealed = [await minting.seal(secrets[0]!), await minting.seal(secrets[1]!)];
    expect(kms.commandCalls(GenerateDataKeyCommand)).toHaveLength(2);
    expect(kms.commandCalls(GenerateDataKeyCommand)[0]!.args[0].input).toMatchObject({
      KeySpec: 'AES_256',
      EncryptionContext: KMS_ENCRYPTION_CONTEXT,
    });
    expect(kms.commandCalls(DecryptCommand)).toHaveLength(0);

    // The dispatcher's container: 200 deliveries, in batches of 25 opened concurrently.
    const dispatcher = kmsSecretSealer(new KMSClient({}), 'arn:aws:kms:eu-west-1:111122223333:key/k');
    for (let batch = 0; batch < 8; batch++) {
      const opened = await Promise.all(Array.from({ length: 25 }, (_, i) => dispatcher.open(sealed[i % 2]!)));
      expect(opened).toEqual(Array.from({ length: 25 }, (_, i) => secrets[i % 2]));
    }
    expect(kms.commandCalls(DecryptCommand)).toHaveLength(2);
    expect(kms.commandCalls(DecryptCommand)[0]!.args[0].input).toMatchObject({ EncryptionContext: KMS_ENCRYPTION_CONTEXT });
  });

  it('a sealing container reuses its data key, so rotations do not each cost a GenerateDataKey', async () => {
    fakeKms();
    const sealer = kmsSecretSealer(new KMSClient({}), 'k');
    const sealed = await Promise.all(Array.from({ length: 10 }, () => sealer.seal(mintSecret())));
    expect(kms.commandCalls(GenerateDataKeyCommand)).toHaveLength(1);
    expect(new Set(sealed.map((s) => s.iv)).size).toBe(10);
  });

  it('a failed Decrypt is not cached: the next delivery asks again', async () => {
    fakeKms();
    const sealed = await kmsSecretSealer(new KMSClient({}), 'k').seal('whsec_x');
    kms.on(DecryptCommand).rejectsOnce(new Error('ThrottlingException'));
    const dispatcher = kmsSecretSealer(new KMSClient({}), 'k');
    await expect(dispatcher.open(sealed)).rejects.toThrow('ThrottlingException');
    kms.reset();
    kms.on(DecryptCommand).rejects(new Error('still down'));
    await expect(dispatcher.open(sealed)).rejects.toThrow('still down');
    expect(kms.commandCalls(DecryptCommand)).toHaveLength(1);
  });
});
