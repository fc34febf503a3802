/**
 * Typed item mappers on DynamoDB Local: an item written by the store reads back as written, an
 * attribute that may be absent reads as null, and an item of another shape fails with an
 * `ItemShapeError` naming the attribute (or the missing sealed value of a secret) instead of flowing on with a wrong value.
 */
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRecoveryJob, recoveryWindow } from '../../lambdas/domain/recovery';
import { getEndpointRecord } from '../../lambdas/store/endpoints';
import { claimIdempotencyKey } from '../../lambdas/store/idempotency-records';
import { listNotifications, putNotification } from '../../lambdas/store/notifications';
import { createRecoveryJob, getJobRecord } from '../../lambdas/store/recovery-jobs';
import { ItemShapeError } from '../../lambdas/store/table-io';
import { keys } from '../../lambdas/store/table-schema';
import { SEEDED_SECRET, seedEndpoint } from '../helpers/pipeline';
import { freshTable } from '../helpers/table';

let table: Awaited<ReturnType<typeof freshTable>>;
beforeAll(async () => {
  table = await freshTable();
});
afterAll(async () => {
  await table?.drop();
});

const NOW = new Date();

describe('item mappers', () => {
  it('read a recovery job back as written, and name the attribute of a job item of another shape', async () => {
    const window = recoveryWindow({ since: new Date(NOW.getTime() - 3600_000).toISOString(), statuses: ['failed'] }, NOW);
    const count = { matched: 3, matchedAtLeast: false, skippedReplayed: 0 };
    const job = newRecoveryJob({ workspace: 'acme', endpointId: 'ep_1', actor: 'tok_1', count, window }, NOW);
    expect(await createRecoveryJob(table, job, NOW, 1)).toBe('created');
    expect(await getJobRecord(table, job.jobId)).toEqual(job);

    const set = (name: string, value: unknown) =>
      table.doc.send(
        new UpdateCommand({
          TableName: table.tableName,
          Key: keys.job(job.jobId),
          UpdateExpression: 'SET #a = :v',
          ExpressionAttributeNames: { '#a': name },
          ExpressionAttributeValues: { ':v': value },
        }),
      );
    await set('statuses', ['failed', 'pending']);
    await expect(getJobRecord(table, job.jobId)).rejects.toThrow(ItemShapeError);
    await expect(getJobRecord(table, job.jobId)).rejects.toThrow(/statuses is not a list of failed, failed_permanent, dead_lettered/);
    await set('statuses', ['failed']);
    await set('status', 'paused');
    await expect(getJobRecord(table, job.jobId)).rejects.toThrow(/status is not one of running, completed, cancelled, failed/);
  });

  it('read a notification without endpoint or delivery as null for both, and refuse one whose kind is not a string', async () => {
    const written = await putNotification(table, 'notes', { kind: 'endpoint.disabled', message: 'm', endpointId: 'ep_1' }, NOW);
    const key = keys.notification('notes', written.notificationId);
    const stored = await table.doc.send(new GetCommand({ TableName: table.tableName, Key: key }));
    const { endpointId: _e, deliveryId: _d, ...rest } = stored.Item ?? {};
    await table.doc.send(new PutCommand({ TableName: table.tableName, Item: rest }));
    expect((await listNotifications(table, 'notes', 10)).items).toEqual([{ ...written, endpointId: null, deliveryId: null }]);

    await table.doc.send(new PutCommand({ TableName: table.tableName, Item: { ...rest, kind: 7 } }));
    await expect(listNotifications(table, 'notes', 10)).rejects.toThrow(/kind is not a string/);
  });

  it('read an endpoint’s sealed secrets back as written, and refuse a secret without a sealed value', async () => {
    const endpoint = await seedEndpoint(table, { workspace: 'sealed', url: 'https://hooks.example.com/x' }, NOW);
    expect((await getEndpointRecord(table, 'sealed', endpoint.endpointId))!.secrets).toEqual(endpoint.secrets);
    await table.doc.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: keys.endpoint('sealed', endpoint.endpointId),
        UpdateExpression: 'SET secrets = :s',
        ExpressionAttributeValues: { ':s': [{ secret: SEEDED_SECRET, createdAt: NOW.toISOString(), expiresAt: null }] },
      }),
    );
    await expect(getEndpointRecord(table, 'sealed', endpoint.endpointId)).rejects.toThrow(ItemShapeError);
    await expect(getEndpointRecord(table, 'sealed', endpoint.endpointId)).rejects.toThrow(/a secret has no sealed value/);
  });

  it('refuse an idempotency record whose stored response is not a status and a body', async () => {
    const claim = { tokenId: 'tok_M', key: 'k', fingerprint: 'fp', now: NOW, ttlSeconds: 3600, lockSeconds: 30 };
    expect(await claimIdempotencyKey(table, claim)).toEqual({ kind: 'claimed' });
    await table.doc.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: keys.idempotency('tok_M', 'k'),
        UpdateExpression: 'SET #s = :c, #r = :r',
        ExpressionAttributeNames: { '#s': 'status', '#r': 'response' },
        ExpressionAttributeValues: { ':c': 'completed', ':r': { statusCode: '201', body: '{}' } },
      }),
    );
    await expect(claimIdempotencyKey(table, claim)).rejects.toThrow(/statusCode is not a number/);
  });
});
