/**
 * The rule of a page too large for its response (docs/behaviour.md#pagination): the longest
 * prefix whose serialized response fits, continued right after its last item; measured on the
 * real serialization, so escaping counts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fitPage, RESUME_AFTER, type Page } from '../../lambdas/contract/pagination';

/** A REST-like Lambda response: the body JSON-escaped inside the proxy result. */
const restBytes = (page: unknown) =>
  Buffer.byteLength(JSON.stringify({ statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(page) }));

/** An MCP-like one: the result as structured content and as text, in a JSON-RPC answer, in the function URL result. */
const mcpBytes = (page: unknown) =>
  Buffer.byteLength(
    JSON.stringify({
      statusCode: 200,
      body: JSON.stringify({
        result: { content: [{ type: 'text', text: JSON.stringify(page) }], structuredContent: page },
        jsonrpc: '2.0',
        id: 7,
      }),
    }),
  );

const pageOf = (items: string[], nextCursor: string | null = null): Page<{ id: number; payload: string }> => ({
  items: items.map((payload, id) => ({ id, payload })),
  nextCursor,
  [RESUME_AFTER]: (index) => `after-${index}`,
});

describe('fitPage', () => {
  it('keeps the longest prefix that fits and continues right after its last item, for any payloads and either surface', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: fc.constantFrom('a', '"', '\\', '\u0001', 'é', '😀', '\n'), maxLength: 200 }), {
          minLength: 2,
          maxLength: 30,
        }),
        fc.integer({ min: 200, max: 6000 }),
        fc.constantFrom(restBytes, mcpBytes),
        (payloads, budget, sizeOf) => {
          const page = pageOf(payloads, 'end');
          const fitted = fitPage(page, sizeOf, budget);
          if (sizeOf(page) <= budget) {
            expect(fitted).toBe(page);
            return;
          }
          const kept = fitted.items.length;
          expect(kept).toBeGreaterThanOrEqual(1);
          expect(fitted.items).toEqual(page.items.slice(0, kept));
          expect(fitted.nextCursor).toBe(`after-${kept - 1}`);
          if (kept > 1) expect(sizeOf(fitted)).toBeLessThanOrEqual(budget);
          // One more item would not have fitted.
          expect(sizeOf({ ...page, items: page.items.slice(0, kept + 1), nextCursor: `after-${kept}` })).toBeGreaterThan(budget);
        },
      ),
    );
  });

  it('counts escaping: a page of quotes and control characters is cut where its raw size would fit', () => {
    const heavy = '"\u0001'.repeat(500);
    const page = pageOf(Array.from({ length: 20 }, () => heavy));
    const raw = page.items.reduce((n, i) => n + i.payload.length, 0);
    const budget = raw * 3;
    const fitted = fitPage(page, restBytes, budget);
    expect(fitted.items.length).toBeLessThan(20);
    expect(restBytes(fitted)).toBeLessThanOrEqual(budget);
  });

  it('leaves anything but a resumable page as it is', () => {
    const plain = { items: ['x'.repeat(1000), 'y'.repeat(1000)], nextCursor: null };
    expect(fitPage(plain, restBytes, 100)).toBe(plain);
    const single = pageOf(['x'.repeat(1000)]);
    expect(fitPage(single, restBytes, 100)).toBe(single);
  });
});
