/**
 * A delivery's replay links and event id in the store (docs/architecture.md#delivery-items): the
 * links sort below the attempts, so the one-Query read of a delivery still finds its summary,
 * state and latest attempt however many replays it has; its GET lists the newest 10, newest
 * first; only the first replay puts the source's marker; a summary stored without an event id
 * reads as null.
 */
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DELIVERY_REPLAYS_SHOWN } from '../../lambdas/contract/delivery-links';
import { newPendingDelivery } from '../../lambdas/domain/delivery-lifecycle';
import {
  getDelivery,
  listReplays,
  putPendingDelivery,
  putReplayDelivery,
  readDelivery,
  replayedAmong,
  toDeliveryWire,
} from '../../lambdas/store/deliveries';
import { keys } from '../../lambdas/store/table-schema';
import { freshTable } from '../helpers/table';

let table: Awaited<ReturnType<typeof freshTable>>;
beforeAll(async () => {
  table = await freshTable();
});
afterAll(async () => {
  await table?.drop();
});

const audit = (targetId: string) => ({ action: 'webhook.delivery_replayed' as const, actor: 'test', targetId });

describe('replay links', () => {
  it('leave the read of a delivery unchanged, list the newest 10 first, and mark the source once', async () => {
    const start = Date.parse('2026-11-26T10:00:00.000Z');
    const source = newPendingDelivery(
      { workspace: 'links', endpointId: 'whe_links', eventType: 'order.shipped', eventId: 'evt-links', payload: { n: 1 } },
      new Date(start),
    );
    await putPendingDelivery(table, source, new Date(start));
    // An attempt stored but not yet applied to the state: the read must still see it.
    await table.doc.send(
      new PutCommand({
        TableName: table.tableName,
        Item: {
          ...keys.attempt(source.deliveryId, 1),
          type: 'attempt',
          deliveryId: source.deliveryId,
          ordinal: 1,
          outcome: 'failed',
          timestamp: new Date(start + 1000).toISOString(),
          durationMs: 5,
          failureReason: 'http_503',
          requestHeaders: {},
          responseStatus: 503,
          responseBody: null,
          applies: { status: 'failed', http: true, nextAttemptAt: null, streak: 'none' },
        },
      }),
    );
    expect(await replayedAmong(table, [source.deliveryId])).toEqual(new Set());

    const replays = [];
    for (let i = 1; i <= 12; i++) {
      const at = new Date(start + i * 60_000);
      const replay = newPendingDelivery({ ...source, replayedFrom: source.deliveryId }, at);
      await putReplayDelivery(table, source, replay, at, audit(replay.deliveryId));
      replays.push(replay);
    }

    const read = await readDelivery(table, source.deliveryId);
    expect(read?.record).toMatchObject({ deliveryId: source.deliveryId, status: 'pending', evidenceCount: 0, eventId: 'evt-links' });
    expect(read?.unapplied?.attempt).toMatchObject({ ordinal: 1, failureReason: 'http_503' });

    const listed = await listReplays(table, source.deliveryId, DELIVERY_REPLAYS_SHOWN);
    expect(listed).toEqual(
      replays
        .slice(-DELIVERY_REPLAYS_SHOWN)
        .reverse()
        .map((r) => ({ deliveryId: r.deliveryId, status: 'pending', createdAt: r.createdAt })),
    );
    // A replay's status is its own, as it stands.
    await table.doc.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: keys.deliveryState(replays[11]!.deliveryId),
        UpdateExpression: 'SET #s = :s',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':s': 'delivered' },
      }),
    );
    expect((await listReplays(table, source.deliveryId, 1))[0]).toMatchObject({ deliveryId: replays[11]!.deliveryId, status: 'delivered' });

    // The marker names the first replay, and only the first: later ones wrote their links only.
    expect(await replayedAmong(table, [source.deliveryId, replays[0]!.deliveryId])).toEqual(new Set([source.deliveryId]));
    const { Item } = await table.doc.send(new GetCommand({ TableName: table.tableName, Key: keys.deliveryReplayed(source.deliveryId) }));
    expect(Item).toMatchObject({ firstReplayId: replays[0]!.deliveryId });
    // A replay has no replays of its own, and keeps its source's event.
    expect(await listReplays(table, replays[0]!.deliveryId, DELIVERY_REPLAYS_SHOWN)).toEqual([]);
    expect((await getDelivery(table, replays[0]!.deliveryId))?.eventId).toBe('evt-links');
  });
});

describe('event id', () => {
  it('reads as null on a summary stored without one, never an error', async () => {
    const at = new Date('2026-11-26T11:00:00.000Z');
    const d = newPendingDelivery({ workspace: 'links', endpointId: 'whe_links', eventType: 'order.shipped', payload: {} }, at);
    await putPendingDelivery(table, d, at);
    await table.doc.send(
      new UpdateCommand({ TableName: table.tableName, Key: keys.delivery(d.deliveryId), UpdateExpression: 'REMOVE eventId' }),
    );
    const read = await getDelivery(table, d.deliveryId);
    expect(read?.eventId).toBeNull();
    expect(toDeliveryWire(read!).eventId).toBeNull();
  });
});
