/**
 * The small pure rules of a delivery: its Standard Webhooks signature (checked by the reference
 * library), the retry schedule, derived and new ids, API tokens and the retention numbers.
 */
import { Webhook } from 'standardwebhooks';
import { decodeTime } from 'ulid';
import { describe, expect, it } from 'vitest';
import { bearerToken, hashApiToken, TOKEN_PREFIX } from '../../lambdas/domain/api-tokens';
import { MAX_RETRIES, nextAttemptAt, RETRY_DELAY_SECONDS, retryDelaySeconds } from '../../lambdas/domain/backoff';
import { derivedId, eventDeliveryId, newId } from '../../lambdas/domain/ids';
import {
  deliveryExpiresAtEpoch,
  REPAIR_AFTER_MINUTES,
  RETENTION_DAYS,
  RETENTION_MAX_PER_PASS,
  RETENTION_TTL_DAYS,
  SCHEDULED_JOBS,
} from '../../lambdas/domain/scheduled-jobs';
import { secretKey, signatureHeader, signOne } from '../../lambdas/domain/signing';

const SECRET = `whsec_${Buffer.from('a 24-byte signing secret').toString('base64')}`;
const OTHER = `whsec_${Buffer.from('another signing secret!!').toString('base64')}`;

describe('signing', () => {
  const id = 'msg_1';
  const timestamp = 1_764_151_200;
  const body = '{"type":"order.created"}';

  it('signs as Standard Webhooks does: the reference library verifies it', () => {
    const signature = signOne(SECRET, id, timestamp, body);
    expect(signature).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    const now = Math.floor(Date.now() / 1000);
    const fresh = { 'webhook-id': id, 'webhook-timestamp': String(now), 'webhook-signature': signOne(SECRET, id, now, body) };
    expect(new Webhook(SECRET).verify(body, fresh)).toEqual(JSON.parse(body));
    expect(() => new Webhook(OTHER).verify(body, fresh)).toThrow();
  });

  it('keys the HMAC with the decoded secret, with or without its prefix', () => {
    expect(secretKey(SECRET).toString()).toBe('a 24-byte signing secret');
    expect(secretKey(SECRET.slice('whsec_'.length)).toString()).toBe('a 24-byte signing secret');
    expect(signOne(SECRET.slice('whsec_'.length), id, timestamp, body)).toBe(signOne(SECRET, id, timestamp, body));
  });

  it('signs over id, timestamp and body, each of which changes the signature', () => {
    const base = signOne(SECRET, id, timestamp, body);
    expect(signOne(SECRET, 'msg_2', timestamp, body)).not.toBe(base);
    expect(signOne(SECRET, id, timestamp + 1, body)).not.toBe(base);
    expect(signOne(SECRET, id, timestamp, `${body} `)).not.toBe(base);
    expect(signOne(OTHER, id, timestamp, body)).not.toBe(base);
  });

  it('the header lists one signature per active secret, newest first, space-separated', () => {
    expect(signatureHeader([SECRET, OTHER], id, timestamp, body)).toBe(
      `${signOne(SECRET, id, timestamp, body)} ${signOne(OTHER, id, timestamp, body)}`,
    );
    expect(signatureHeader([SECRET], id, timestamp, body)).toBe(signOne(SECRET, id, timestamp, body));
  });
});

describe('retry schedule', () => {
  it('waits min(attempts, 6) × 30 s, at least 30 s', () => {
    expect(RETRY_DELAY_SECONDS).toBe(30);
    expect(MAX_RETRIES).toBe(6);
    expect([0, 1, 2, 3, 4, 5, 6, 7, 100].map(retryDelaySeconds)).toEqual([30, 30, 60, 90, 120, 150, 180, 180, 180]);
  });

  it('dates the next attempt that long after now', () => {
    const now = new Date('2026-11-26T10:00:00.000Z');
    expect(nextAttemptAt(2, now).toISOString()).toBe('2026-11-26T10:01:00.000Z');
    expect(nextAttemptAt(9, now).toISOString()).toBe('2026-11-26T10:03:00.000Z');
  });
});

describe('ids', () => {
  const at = new Date('2026-11-26T10:00:00.000Z');

  it('a new id is its prefix and a ULID of now', () => {
    const id = newId('whd', at);
    expect(id).toMatch(/^whd_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(decodeTime(id.slice(4))).toBe(at.getTime());
    expect(newId('whd', at)).not.toBe(id);
  });

  it('a derived id is the same for the same parts and time, different otherwise, and keeps the parts apart', () => {
    const id = derivedId('whd', at, ['a', 'bc']);
    expect(id).toMatch(/^whd_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(decodeTime(id.slice(4))).toBe(at.getTime());
    expect(derivedId('whd', at, ['a', 'bc'])).toBe(id);
    expect(derivedId('whd', at, ['ab', 'c'])).not.toBe(id);
    expect(derivedId('whd', new Date(at.getTime() + 1), ['a', 'bc']).slice(14)).toBe(id.slice(14));
    expect(derivedId('whe', at, ['a', 'bc'])).toBe(`whe_${id.slice(4)}`);
  });

  it('refuses a time no ULID can carry', () => {
    expect(derivedId('whd', new Date(0), ['x'])).toMatch(/^whd_0000000000/);
    expect(() => derivedId('whd', new Date(-1), ['x'])).toThrow(new RangeError(`Not an id time: ${new Date(-1).toString()}`));
    expect(() => derivedId('whd', new Date(Number.NaN), ['x'])).toThrow(/Not an id time/);
    expect(() => derivedId('whd', new Date(2 ** 48), ['x'])).toThrow(new RangeError(`Not an id time: ${new Date(2 ** 48).toString()}`));
    expect(derivedId('whd', new Date(2 ** 48 - 1), ['x'])).toMatch(/^whd_7ZZZZZZZZZ/);
  });

  it('one event maps to one delivery id per endpoint', () => {
    expect(eventDeliveryId('evt_1', 'whe_1', at)).toBe(derivedId('whd', at, ['event-delivery', 'evt_1', 'whe_1']));
    expect(eventDeliveryId('evt_1', 'whe_2', at)).not.toBe(eventDeliveryId('evt_1', 'whe_1', at));
  });
});

describe('api tokens', () => {
  it('stores the SHA-256 hex of the raw token', () => {
    expect(TOKEN_PREFIX).toBe('whk_');
    expect(hashApiToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it.each([
    ['Bearer abc', 'abc'],
    ['BEARER abc', 'abc'],
    ['  Bearer\tabc  ', 'abc'],
    ['', null],
    [null, null],
    ['xBearer abc', null],
    ['Bearer abc x', null],
    ['Bearerabc', null],
  ])('bearerToken(%j) = %j', (header, expected) => expect(bearerToken(header)).toBe(expected));
});

describe('retention and scheduled jobs', () => {
  it('a delivery expires 31 days after its creation', () => {
    expect(RETENTION_DAYS).toBe(30);
    expect(RETENTION_TTL_DAYS).toBe(31);
    expect(deliveryExpiresAtEpoch('2026-11-26T10:00:00.999Z')).toBe(Date.parse('2026-12-27T10:00:00.000Z') / 1000);
  });

  it('runs retention daily, secret expiry hourly and repair every 5 minutes, each well within its cadence', () => {
    expect(SCHEDULED_JOBS).toEqual([
      {
        id: 'Retention',
        entry: 'retention',
        description: `Daily: deletes at most ${RETENTION_MAX_PER_PASS} delivery summaries older than 30 days, with their attempts`,
        everyMinutes: 1440,
        timeoutSeconds: 300,
        sendsDeliveries: false,
      },
      {
        id: 'SecretExpiry',
        entry: 'secret-expiry',
        description: 'Hourly: drops replaced signing secrets whose 24-hour grace window ended',
        everyMinutes: 60,
        timeoutSeconds: 60,
        sendsDeliveries: false,
      },
      {
        id: 'PendingRepair',
        entry: 'pending-repair',
        description: `Every ${REPAIR_AFTER_MINUTES} minutes: queues again pending deliveries whose message was never sent`,
        everyMinutes: 5,
        timeoutSeconds: 60,
        sendsDeliveries: true,
      },
    ]);
    for (const job of SCHEDULED_JOBS) expect(job.timeoutSeconds).toBeLessThanOrEqual(job.everyMinutes * 60);
  });
});
