/**
 * The deployment contract (lambdas/contract/deployment.ts) is what the runtime reads: the values
 * the stack deploys agree with the rules that use them, and the module stays light enough for
 * every Lambda bundle.
 */
import { join } from 'node:path';
import type { KMSClient } from '@aws-sdk/client-kms';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import {
  CONSOLE_INDEX,
  DEFAULT_RECOVERY_RATE_PER_SECOND,
  ENV,
  KMS_ENCRYPTION_CONTEXT,
  MAX_RECEIVES,
  RECOVERY_RATE_BOUNDS,
} from '../../lambdas/contract/deployment';
import { MAX_RETRIES } from '../../lambdas/domain/backoff';
import { recoveryRateFrom } from '../../lambdas/domain/recovery';
import { consoleResponse } from '../../lambdas/http/console';
import { kmsSecretSealer } from '../../lambdas/store/secret-sealing';
import { tableFromEnv } from '../../lambdas/store/client';
import { PROJECT_ROOT } from '../../lib/constructs/service-function';

describe('the deployment contract', () => {
  it('redrives a delivery message after as many receives as a delivery has attempts, the limit the dispatcher checks', () => {
    expect(MAX_RECEIVES).toBe(MAX_RETRIES + 1);
  });

  it('names the recovery rate the job worker reads, with the default and bounds it applies', () => {
    const rate = (value: number | undefined) =>
      recoveryRateFrom(value === undefined ? {} : { [ENV.RECOVERY_RATE_PER_SECOND]: String(value) });
    expect(rate(undefined)).toBe(DEFAULT_RECOVERY_RATE_PER_SECOND);
    expect(rate(RECOVERY_RATE_BOUNDS.min)).toBe(RECOVERY_RATE_BOUNDS.min);
    expect(rate(RECOVERY_RATE_BOUNDS.max)).toBe(RECOVERY_RATE_BOUNDS.max);
    expect(rate(RECOVERY_RATE_BOUNDS.min - 1)).toBe(DEFAULT_RECOVERY_RATE_PER_SECOND);
    expect(rate(RECOVERY_RATE_BOUNDS.max + 1)).toBe(DEFAULT_RECOVERY_RATE_PER_SECOND);
  });

  it('gives the encryption context the sealer sends with every data key request, the one the key grants require', async () => {
    const commands: { input: { EncryptionContext?: unknown } }[] = [];
    const kms = {
      async send(command: { input: { EncryptionContext?: unknown } }) {
        commands.push(command);
        return { Plaintext: new Uint8Array(32).fill(7), CiphertextBlob: new Uint8Array([1, 2, 3]) };
      },
    } as unknown as KMSClient;
    const sealer = kmsSecretSealer(kms, 'k', { dataKeyReuseMs: 0 });
    await kmsSecretSealer(kms, 'k').open(await sealer.seal('whsec_dGVzdA=='));
    expect(commands).toHaveLength(2);
    for (const command of commands) expect(command.input.EncryptionContext).toEqual(KMS_ENCRYPTION_CONTEXT);
  });

  it('names the console page the bundler writes and the console function serves', () => {
    const read = (name: string) => (name === CONSOLE_INDEX ? Buffer.from('<!doctype html>') : undefined);
    expect(consoleResponse('/console', read)?.statusCode).toBe(200);
  });

  it('names the table variable the store binds to', () => {
    expect(tableFromEnv({ [ENV.TABLE_NAME]: 'some-table' }).tableName).toBe('some-table');
    expect(() => tableFromEnv({})).toThrow(`${ENV.TABLE_NAME} is not set`);
  });

  it('bundles with nothing but the contract’s dependency-free modules (no zod, no AWS SDK)', async () => {
    const result = await build({
      entryPoints: [join(PROJECT_ROOT, 'lambdas/contract/deployment.ts')],
      bundle: true,
      write: false,
      metafile: true,
      platform: 'node',
      format: 'esm',
      logLevel: 'silent',
    });
    expect(Object.keys(result.metafile.inputs).sort()).toEqual([
      'lambdas/contract/aws-limits.ts',
      'lambdas/contract/deployment.ts',
      'lambdas/contract/limits.ts',
    ]);
  });
});
