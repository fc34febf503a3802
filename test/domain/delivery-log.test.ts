/**
 * The workspace delivery log's filter rules (docs/behaviour.md#workspace-delivery-log): the
 * normalized filter, which summaries it keeps, the id range of its time window, and cursors
 * that address a position only under the filter they were made with.
 */
import { decodeTime } from 'ulid';
import { describe, expect, it } from 'vitest';
import {
  type DeliveryLogFilter,
  decodeDeliveryLogCursor,
  filterIdBounds,
  deliveryLogFilter,
  deliveryLogFingerprint,
  encodeDeliveryLogCursor,
  matchesDeliveryLogFilter,
} from '../../lambdas/domain/delivery-log';

const NONE: DeliveryLogFilter = { statuses: null, eventType: null, endpointId: null, eventId: null, sinceMs: null, untilMs: null };
const summary = {
  status: 'failed',
  eventType: 'order.created',
  eventId: 'evt-1' as string | null,
  endpointId: 'whe_1',
  createdAt: '2026-11-26T10:00:00.000Z',
};
const AT = Date.parse(summary.createdAt);

describe('deliveryLogFilter', () => {
  it('is empty for an empty query', () => {
    expect(deliveryLogFilter({})).toEqual(NONE);
  });

  it('sorts the statuses, each once; an exact type or a prefix for type.*; instants as epoch ms', () => {
    expect(
      deliveryLogFilter({
        status: 'failed, dead_lettered,failed',
        eventType: 'order.*',
        endpointId: 'whe_1',
        since: '2026-11-26T10:00:00Z',
        until: '2026-11-26T12:00:00+01:00',
      }),
    ).toEqual({
      statuses: ['dead_lettered', 'failed'],
      eventType: { prefix: 'order.' },
      endpointId: 'whe_1',
      eventId: null,
      sinceMs: AT,
      untilMs: AT + 3_600_000,
    });
    expect(deliveryLogFilter({ eventType: 'order.created' }).eventType).toEqual({ exact: 'order.created' });
  });
});

describe('matchesDeliveryLogFilter', () => {
  const keeps = (filter: Partial<DeliveryLogFilter>, d = summary) => matchesDeliveryLogFilter({ ...NONE, ...filter }, d);

  it('keeps everything under an empty filter', () => {
    expect(keeps({})).toBe(true);
  });

  it('filters by status, exact type or prefix, and endpoint', () => {
    expect(keeps({ statuses: ['dead_lettered', 'failed'] })).toBe(true);
    expect(keeps({ statuses: ['delivered'] })).toBe(false);
    expect(keeps({ eventType: { exact: 'order.created' } })).toBe(true);
    expect(keeps({ eventType: { exact: 'order.create' } })).toBe(false);
    expect(keeps({ eventType: { prefix: 'order.' } })).toBe(true);
    expect(keeps({ eventType: { prefix: 'invoice.' } })).toBe(false);
    expect(keeps({ endpointId: 'whe_1' })).toBe(true);
    expect(keeps({ endpointId: 'whe_2' })).toBe(false);
  });

  it('keeps since and until themselves, nothing outside them', () => {
    expect(keeps({ sinceMs: AT, untilMs: AT })).toBe(true);
    expect(keeps({ sinceMs: AT + 1 })).toBe(false);
    expect(keeps({ untilMs: AT - 1 })).toBe(false);
    expect(keeps({ sinceMs: AT - 1, untilMs: AT + 1 })).toBe(true);
  });
});

describe('filterIdBounds', () => {
  it('covers every id from since’s millisecond to until’s', () => {
    const { low, high } = filterIdBounds({ ...NONE, sinceMs: AT, untilMs: AT + 1 });
    expect(low).toMatch(/^whd_[0-9A-HJKMNP-TV-Z]{10}0{16}$/);
    expect(high).toMatch(/^whd_[0-9A-HJKMNP-TV-Z]{10}Z{16}$/);
    expect(decodeTime(low.slice(4))).toBe(AT);
    expect(decodeTime(high.slice(4))).toBe(AT + 1);
  });

  it('is unbounded without a window, and clamps a window outside ULID time', () => {
    expect(filterIdBounds(NONE)).toEqual({ low: `whd_${'0'.repeat(26)}`, high: `whd_7${'Z'.repeat(25)}` });
    expect(filterIdBounds({ ...NONE, sinceMs: -5, untilMs: 2 ** 49 })).toEqual(filterIdBounds(NONE));
  });
});

describe('delivery log cursors', () => {
  const position = 'whd_01JD2Y8M7K3V9Q4T6W1X5Z0ABC';

  it('round-trip under the same filter', () => {
    const filter = deliveryLogFilter({ status: 'failed' });
    expect(decodeDeliveryLogCursor(filter, encodeDeliveryLogCursor(filter, position))).toBe(position);
    expect(deliveryLogFingerprint(filter)).toMatch(/^[A-Za-z0-9_-]{16}$/);
  });

  it('address nothing under another filter, or when not a log cursor', () => {
    const filter = deliveryLogFilter({ status: 'failed' });
    const other = deliveryLogFilter({ status: 'delivered' });
    expect(deliveryLogFingerprint(other)).not.toBe(deliveryLogFingerprint(filter));
    expect(decodeDeliveryLogCursor(other, encodeDeliveryLogCursor(filter, position))).toBeNull();
    expect(decodeDeliveryLogCursor(filter, encodeDeliveryLogCursor(filter, 'whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC'))).toBeNull();
    expect(decodeDeliveryLogCursor(filter, 'junk')).toBeNull();
  });
});
