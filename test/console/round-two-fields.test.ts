/**
 * The console's reading of the round-two fields (console/src/api/round-two.ts) against answers
 * with and without them, and its plurals (console/src/plural.ts): a field the API does not send
 * falls back to what it sends today, never to `undefined` on screen.
 */
import { describe, expect, it } from 'vitest';
import type { AuditEvent, Delivery, Notification, Overview } from '../../console/src/api/contract';
import { acknowledgedAtOf, actorOf, deadLettersNeedingAction, eventIdOf, replaysOf } from '../../console/src/api/round-two';
import { plural } from '../../console/src/plural';

const delivery = {
  deliveryId: 'whd_01JD2Y9P0R6S8T1V3W5X7Y9ZAB',
  endpointId: 'whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC',
  status: 'dead_lettered',
  attempts: 7,
  nextAttemptAt: null,
  eventType: 'order.shipped',
  payload: {},
  replayedFrom: null,
  lastResponseStatus: 500,
  lastError: 'http_500',
  createdAt: '2026-11-25T12:00:00.000Z',
  updatedAt: '2026-11-25T12:05:00.000Z',
} satisfies Delivery;

const audit = (actor: unknown, actorId?: string) =>
  ({
    auditEventId: 'aud_01JD2YC4D5E6F7G8H9J0K1M2NP',
    action: 'webhook.created',
    actor,
    ...(actorId ? { actorId } : {}),
    targetId: 'whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC',
    detail: {},
    createdAt: '2026-11-25T12:00:00.000Z',
  }) as unknown as AuditEvent;

describe('round-two fields', () => {
  it('reads eventId and replays when sent, and nothing when not', () => {
    expect(eventIdOf(delivery)).toBeNull();
    expect(replaysOf(delivery)).toBeNull();
    const replay = { deliveryId: 'whd_01JD2YE6F7G8H9J0K1M2N3P4QR', status: 'pending', createdAt: '2026-11-25T13:00:00.000Z' };
    const withThem = { ...delivery, eventId: 'evt-1', replays: [replay, { junk: true }] } as Delivery;
    expect(eventIdOf(withThem)).toBe('evt-1');
    expect(replaysOf(withThem)).toEqual([replay]);
  });

  it('counts the dead letters still needing a replay, else every dead letter of the window', () => {
    const overview = { deliveries24h: { delivered: 10, failed: 3, deadLettered: 4 } } as Overview;
    expect(deadLettersNeedingAction(overview)).toBe(4);
    expect(deadLettersNeedingAction({ ...overview, deadLetteredUnreplayed24h: 0 } as Overview)).toBe(0);
  });

  it('reads acknowledgedAt, null when absent or null', () => {
    const n = { notificationId: 'ntf_01JD2YD5E6F7G8H9J0K1M2N3PQ' } as Notification;
    expect(acknowledgedAtOf(n)).toBeNull();
    expect(acknowledgedAtOf({ ...n, acknowledgedAt: null } as Notification)).toBeNull();
    expect(acknowledgedAtOf({ ...n, acknowledgedAt: '2026-11-25T13:00:00.000Z' } as Notification)).toBe('2026-11-25T13:00:00.000Z');
  });

  it('names the actor from the object, or from the string of today', () => {
    expect(actorOf(audit('tok_01JD2YA1B2C3D4E5F6G7H8J9KM'))).toEqual({ kind: 'token', id: 'tok_01JD2YA1B2C3D4E5F6G7H8J9KM' });
    expect(actorOf(audit('system'))).toEqual({ kind: 'system', id: 'system' });
    expect(
      actorOf(audit({ kind: 'token', id: 'tok_01JD2YA1B2C3D4E5F6G7H8J9KM', name: 'deploy-bot' }, 'tok_01JD2YA1B2C3D4E5F6G7H8J9KM')),
    ).toEqual({ kind: 'token', id: 'tok_01JD2YA1B2C3D4E5F6G7H8J9KM', name: 'deploy-bot' });
  });
});

describe('plural', () => {
  it.each([
    [0, 'delivery', 'deliveries', '0 deliveries'],
    [1, 'delivery', 'deliveries', '1 delivery'],
    [2, 'attempt', undefined, '2 attempts'],
    [1200, 'attempt', undefined, '1,200 attempts'],
  ])('%i %s', (n, one, many, text) => expect(plural(n, one, many)).toBe(text));
});
