/**
 * Filtered lists (docs/behaviour.md#filtered-lists) on DynamoDB Local: a page reads a bounded
 * number of items, so a sparse filter answers short pages with a cursor, and following the
 * cursors still yields every match once, in order.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { filteredReadBudget } from '../../lambdas/store/filtered-pages';
import { acknowledgeNotification, listNotifications, putNotification } from '../../lambdas/store/notifications';
import type { Notification } from '../../lambdas/contract/schemas';
import { freshTable } from '../helpers/table';

let table: Awaited<ReturnType<typeof freshTable>>;
beforeAll(async () => {
  table = await freshTable();
});
afterAll(async () => {
  await table?.drop();
});

/** Every page of a list, followed to its end. */
async function pages(read: (cursor?: string) => Promise<{ items: Notification[]; nextCursor: string | null }>) {
  const out: Notification[][] = [];
  let cursor: string | undefined;
  do {
    const page = await read(cursor);
    out.push(page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined && out.length < 50);
  return out;
}

it(
  'a sparse acknowledged filter ends pages at its read budget with a cursor, and the cursors reach every match',
  { timeout: 120_000 },
  async () => {
    const slug = 'sparse';
    const start = Date.now() - 3_600_000;
    const count = filteredReadBudget(1) + 12;
    const written = await Promise.all(
      Array.from({ length: count }, (_, i) =>
        putNotification(table, slug, { kind: 'endpoint.disabled', message: `n${i}` }, new Date(start + i * 1000)),
      ),
    );
    // All acknowledged but the oldest.
    const acked = written.slice(1);
    for (let i = 0; i < acked.length; i += 25) {
      await Promise.all(
        acked.slice(i, i + 25).map((n) =>
          acknowledgeNotification(table, slug, n.notificationId, new Date(), {
            action: 'notification.acknowledged',
            actor: 'system',
            targetId: n.notificationId,
          }),
        ),
      );
    }

    const unacked = await pages((cursor) => listNotifications(table, slug, 1, cursor, false));
    // The first page read its budget of acknowledged ones and found no match, but says there is more.
    expect(unacked[0]).toEqual([]);
    expect(unacked.flat().map((n) => n.notificationId)).toEqual([written[0]!.notificationId]);
    expect(unacked.at(-1)).toEqual([expect.objectContaining({ acknowledgedAt: null })]);

    const ackedPages = await pages((cursor) => listNotifications(table, slug, 5, cursor, true));
    expect(ackedPages.flat().map((n) => n.notificationId)).toEqual(acked.map((n) => n.notificationId).reverse());
    expect(ackedPages.every((p) => p.length <= 5)).toBe(true);
    expect(ackedPages.flat().every((n) => n.acknowledgedAt !== null)).toBe(true);
  },
);
