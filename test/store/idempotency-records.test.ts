/**
 * Idempotency records on DynamoDB Local: one claim per (token, key) at a time, a stored
 * response answered to repeats, a released or crashed claim taken over, and the TTL window.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  claimIdempotencyKey,
  completeIdempotencyRecord,
  releaseIdempotencyRecord,
  type IdempotencyClaim,
} from '../../lambdas/store/idempotency-records';
import { TABLE, keys } from '../../lambdas/store/table-schema';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { freshTable } from '../helpers/table';

let table: Awaited<ReturnType<typeof freshTable>>;
beforeAll(async () => {
  table = await freshTable();
});
afterAll(async () => {
  await table?.drop();
});

// A recent whole hour: records carry a 24 h TTL, and DynamoDB Local removes expired items.
const T0 = new Date(Math.floor(Date.now() / 3600_000) * 3600_000 - 3600_000);
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const claimOf = (key: string, over: Partial<IdempotencyClaim> = {}): IdempotencyClaim => ({
  tokenId: 'tok_A',
  key,
  fingerprint: 'fp-1',
  now: T0,
  ttlSeconds: 24 * 3600,
  lockSeconds: 30,
  ...over,
});

describe('idempotency records', () => {
  it('claims a key once; a second claim while it runs sees it in progress, then the stored response', async () => {
    expect(await claimIdempotencyKey(table, claimOf('k1'))).toEqual({ kind: 'claimed' });
    expect(await claimIdempotencyKey(table, claimOf('k1', { now: at(5) }))).toEqual({ kind: 'in_progress', fingerprint: 'fp-1' });
    await completeIdempotencyRecord(table, claimOf('k1'), { statusCode: 201, body: '{"a":1}' });
    expect(await claimIdempotencyKey(table, claimOf('k1', { now: at(60), fingerprint: 'fp-2' }))).toEqual({
      kind: 'completed',
      fingerprint: 'fp-1',
      response: { statusCode: 201, body: '{"a":1}' },
    });
    const item = (await table.doc.send(new GetCommand({ TableName: table.tableName, Key: keys.idempotency('tok_A', 'k1') }))).Item;
    expect(item?.[TABLE.ttlAttribute]).toBe(Math.floor(T0.getTime() / 1000) + 24 * 3600);
  });

  it('scopes a key to its token', async () => {
    expect(await claimIdempotencyKey(table, claimOf('k2'))).toEqual({ kind: 'claimed' });
    expect(await claimIdempotencyKey(table, claimOf('k2', { tokenId: 'tok_B' }))).toEqual({ kind: 'claimed' });
  });

  it('lets a released claim, a claim whose lock ran out, and an expired record be taken again', async () => {
    expect(await claimIdempotencyKey(table, claimOf('k3'))).toEqual({ kind: 'claimed' });
    await releaseIdempotencyRecord(table, claimOf('k3'));
    expect(await claimIdempotencyKey(table, claimOf('k3', { now: at(1) }))).toEqual({ kind: 'claimed' });
    // A crash: never completed nor released; after its lock a retry takes it over.
    expect(await claimIdempotencyKey(table, claimOf('k3', { now: at(31) }))).toEqual({ kind: 'in_progress', fingerprint: 'fp-1' });
    expect(await claimIdempotencyKey(table, claimOf('k3', { now: at(33) }))).toEqual({ kind: 'claimed' });

    await completeIdempotencyRecord(table, claimOf('k3'), { statusCode: 202, body: '{}' });
    // Past the window (TTL sweeps lag): treated as gone.
    expect(await claimIdempotencyKey(table, claimOf('k3', { now: at(33 + 24 * 3600 + 1) }))).toEqual({ kind: 'claimed' });
  });

  it('a release never drops a stored response', async () => {
    expect(await claimIdempotencyKey(table, claimOf('k4'))).toEqual({ kind: 'claimed' });
    await completeIdempotencyRecord(table, claimOf('k4'), { statusCode: 201, body: '{}' });
    await releaseIdempotencyRecord(table, claimOf('k4'));
    expect((await claimIdempotencyKey(table, claimOf('k4'))).kind).toBe('completed');
  });
});
