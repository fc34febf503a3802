/**
 * Recovery jobs' pure rules (docs/behaviour.md#recovery-jobs): the rate setting and its bounds, the
 * window a job fixes at creation, the delivery-id range of that window, and the pacing of slices.
 */
import { decodeTime } from 'ulid';
import { describe, expect, it } from 'vitest';
import { DEFAULT_RECOVERY_RATE_PER_SECOND, ENV, RECOVERY_RATE_BOUNDS } from '../../lambdas/contract/deployment';
import {
  isFinished,
  newRecoveryJob,
  recoveryRateFrom,
  recoveryWindowIdRange,
  recoveryWindow,
  sliceWaitMs,
} from '../../lambdas/domain/recovery';

const now = new Date('2026-11-26T10:00:00.000Z');

describe('recoveryRateFrom', () => {
  const rate = (value: string | undefined) => recoveryRateFrom({ [ENV.RECOVERY_RATE_PER_SECOND]: value });

  it('reads RECOVERY_RATE_PER_SECOND, bounds included', () => {
    expect(ENV.RECOVERY_RATE_PER_SECOND).toBe('RECOVERY_RATE_PER_SECOND');
    expect(RECOVERY_RATE_BOUNDS).toEqual({ min: 1, max: 200 });
    expect(rate('1')).toBe(1);
    expect(rate('2')).toBe(2);
    expect(rate('50')).toBe(50);
    expect(rate('199')).toBe(199);
    expect(rate('200')).toBe(200);
  });

  it('takes the default of 20 when the value is missing, out of bounds or not a whole number', () => {
    expect(DEFAULT_RECOVERY_RATE_PER_SECOND).toBe(20);
    for (const value of [undefined, '', '0', '-1', '201', '1000', '1.5', 'abc', 'NaN', 'Infinity'])
      expect(rate(value)).toBe(DEFAULT_RECOVERY_RATE_PER_SECOND);
    expect(recoveryRateFrom({})).toBe(DEFAULT_RECOVERY_RATE_PER_SECOND);
  });
});

describe('recoveryWindow', () => {
  it('ends now when no until is given, and normalizes since', () => {
    expect(recoveryWindow({ since: '2026-11-25T10:00:00Z' }, now)).toEqual({
      since: '2026-11-25T10:00:00.000Z',
      until: '2026-11-26T10:00:00.000Z',
      statuses: ['failed_permanent', 'dead_lettered'],
      includeReplayed: false,
    });
  });

  it('clamps a since before 1970 to 1970, as the delivery log does', () => {
    expect(recoveryWindow({ since: '1969-12-31T23:59:59.999Z' }, now).since).toBe('1970-01-01T00:00:00.000Z');
    expect(recoveryWindow({ since: '0001-01-01T00:00:00Z' }, now).since).toBe('1970-01-01T00:00:00.000Z');
  });

  it('keeps includeReplayed when asked for', () => {
    expect(recoveryWindow({ since: '2026-11-25T10:00:00Z', includeReplayed: true }, now).includeReplayed).toBe(true);
  });

  it('keeps an until in the past', () => {
    expect(recoveryWindow({ since: '2026-11-25T10:00:00.000Z', until: '2026-11-26T09:00:00+01:00' }, now).until).toBe(
      '2026-11-26T08:00:00.000Z',
    );
  });

  it('brings an until in the future back to now', () => {
    expect(recoveryWindow({ since: '2026-11-25T10:00:00.000Z', until: '2026-11-27T10:00:00.000Z' }, now).until).toBe(
      '2026-11-26T10:00:00.000Z',
    );
  });

  it('takes the statuses asked for, each once', () => {
    expect(recoveryWindow({ since: '2026-11-25T10:00:00.000Z', statuses: ['failed', 'failed', 'dead_lettered'] }, now).statuses).toEqual([
      'failed',
      'dead_lettered',
    ]);
  });
});

describe('newRecoveryJob', () => {
  it('is running, has replayed nothing, and may start its first slice now', () => {
    const window = recoveryWindow({ since: '2026-11-25T10:00:00.000Z' }, now);
    const count = { matched: 12, matchedAtLeast: false, skippedReplayed: 2 };
    const job = newRecoveryJob({ workspace: 'acme', endpointId: 'ep_1', actor: 'tok_1', count, window }, now);
    expect(job.jobId).toMatch(/^whj_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(decodeTime(job.jobId.slice(4))).toBe(now.getTime());
    expect(job).toEqual({
      jobId: job.jobId,
      kind: 'recover',
      workspace: 'acme',
      endpointId: 'ep_1',
      actor: 'tok_1',
      status: 'running',
      since: '2026-11-25T10:00:00.000Z',
      until: '2026-11-26T10:00:00.000Z',
      statuses: ['failed_permanent', 'dead_lettered'],
      includeReplayed: false,
      matched: 12,
      matchedAtLeast: false,
      skippedReplayed: 2,
      replayed: 0,
      skipped: 0,
      createdAt: '2026-11-26T10:00:00.000Z',
      updatedAt: '2026-11-26T10:00:00.000Z',
      finishedAt: null,
      cursor: null,
      version: 0,
      nextSliceAt: '2026-11-26T10:00:00.000Z',
      slotted: true,
    });
  });
});

describe('recoveryWindowIdRange', () => {
  it('runs from the lowest id of since’s millisecond to the highest of until’s', () => {
    const { from, to } = recoveryWindowIdRange('2026-11-25T10:00:00.000Z', '2026-11-26T10:00:00.000Z');
    expect(from).toMatch(/^whd_[0-9A-HJKMNP-TV-Z]{10}$/);
    expect(to).toBe(`whd_${to.slice(4, 14)}ZZZZZZZZZZZZZZZZ`);
    expect(decodeTime(`${from.slice(4)}0000000000000000`)).toBe(Date.parse('2026-11-25T10:00:00.000Z'));
    expect(decodeTime(to.slice(4))).toBe(Date.parse('2026-11-26T10:00:00.000Z'));
  });
});

describe('job status and pacing', () => {
  it('only a running job is unfinished', () => {
    expect(isFinished('running')).toBe(false);
    for (const status of ['completed', 'cancelled', 'failed'] as const) expect(isFinished(status)).toBe(true);
  });

  it('a slice waits until nextSliceAt, and not at all once it is due', () => {
    expect(sliceWaitMs({ nextSliceAt: '2026-11-26T10:00:01.500Z' }, now)).toBe(1500);
    expect(sliceWaitMs({ nextSliceAt: '2026-11-26T10:00:00.000Z' }, now)).toBe(0);
    expect(sliceWaitMs({ nextSliceAt: '2026-11-26T09:59:59.000Z' }, now)).toBe(0);
  });
});
