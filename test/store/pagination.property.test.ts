/**
 * docs/behaviour.md#keyset-cursors, as a property against DynamoDB Local: rows inserted
 * between page reads never shift, duplicate or hide rows that were there when
 * paging began, for a newest-first list and a forward-on-id list.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from '../../lambdas/contract/pagination';
import { listNotifications, putNotification } from '../../lambdas/store/notifications';
import { addMember, listMembers } from '../../lambdas/store/workspaces';
import { freshTable } from '../helpers/table';

let table: Awaited<ReturnType<typeof freshTable>>;
let run = 0;

beforeAll(async () => {
  table = await freshTable();
});
afterAll(async () => {
  await table?.drop();
});

const T0 = Date.parse('2026-01-01T00:00:00Z');
const time = fc.integer({ min: 0, max: 10_000_000 }).map((ms) => new Date(T0 + ms));
const scenario = fc.record({
  initial: fc.array(time, { minLength: 0, maxLength: 30 }),
  limit: fc.integer({ min: 1, max: 7 }),
  // Inserts to make after each page read (times anywhere: past, between, future).
  inserts: fc.array(fc.array(time, { maxLength: 4 }), { maxLength: 12 }),
});

interface Lister {
  insert(slug: string, at: Date): Promise<string>;
  page(slug: string, limit: number, cursor?: string): Promise<Page<{ id: string }>>;
  /** Expected order of ids. */
  sort(ids: string[]): string[];
}

const lists: Record<string, Lister> = {
  'notifications (newest first on createdAt, id)': {
    insert: async (slug, at) => (await putNotification(table, slug, { kind: 'k', message: 'm' }, at)).notificationId,
    page: async (slug, limit, cursor) => {
      const p = await listNotifications(table, slug, limit, cursor);
      return { items: p.items.map((n) => ({ id: n.notificationId })), nextCursor: p.nextCursor };
    },
    sort: (ids) => [...ids].sort().reverse(),
  },
  'members (forward on id)': {
    insert: async (slug, at) => (await addMember(table, slug, { email: 'a@example.com', role: 'member' }, at)).memberId,
    page: async (slug, limit, cursor) => {
      const p = await listMembers(table, slug, limit, cursor);
      return { items: p.items.map((m) => ({ id: m.memberId })), nextCursor: p.nextCursor };
    },
    sort: (ids) => [...ids].sort(),
  },
};

describe.each(Object.entries(lists))('%s', (_name, lister) => {
  it('inserts between page reads never shift, duplicate or hide the original rows', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ initial, limit, inserts }) => {
        const slug = `prop-${++run}`;
        const original: string[] = [];
        for (const at of initial) original.push(await lister.insert(slug, at));

        const seen: string[] = [];
        let cursor: string | undefined;
        let pages = 0;
        for (;;) {
          const page = await lister.page(slug, limit, cursor);
          expect(page.items.length).toBeLessThanOrEqual(limit);
          seen.push(...page.items.map((i) => i.id));
          for (const at of inserts[pages] ?? []) await lister.insert(slug, at);
          pages++;
          if (!page.nextCursor) break;
          cursor = page.nextCursor;
          expect(pages).toBeLessThan(200);
        }
        // No duplicates; every original row seen exactly once; order is the list's order.
        expect(new Set(seen).size).toBe(seen.length);
        const seenOriginals = seen.filter((id) => original.includes(id));
        expect(seenOriginals).toEqual(lister.sort(original));
        expect(seen).toEqual(lister.sort(seen));
      }),
      { numRuns: 25 },
    );
  });

  it('a nextCursor is null exactly on the last page', async () => {
    const slug = `exact-${++run}`;
    for (let i = 0; i < 4; i++) await lister.insert(slug, new Date(T0 + i));
    const first = await lister.page(slug, 2);
    expect(first.nextCursor).not.toBeNull();
    const second = await lister.page(slug, 2, first.nextCursor!);
    expect(second.items).toHaveLength(2);
    expect(second.nextCursor).toBeNull();
  });
});
