/**
 * The console's self-refresh schedule (console/src/poller.ts), with fake timers: it backs off
 * from 1 s to 30 s, never overlaps two refreshes, pauses while the tab is hidden and catches up
 * when it is shown, and stops for good.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startPoller, type VisibilitySource } from '../../console/src/poller';

/** A document stand-in: `hidden` and its visibilitychange event. */
class FakeVisibility extends EventTarget implements VisibilitySource {
  hidden = false;
  set(hidden: boolean): void {
    this.hidden = hidden;
    this.dispatchEvent(new Event('visibilitychange'));
  }
  override addEventListener(type: 'visibilitychange', listener: () => void): void {
    super.addEventListener(type, listener);
  }
  override removeEventListener(type: 'visibilitychange', listener: () => void): void {
    super.removeEventListener(type, listener);
  }
}

describe('startPoller', () => {
  let visibility: FakeVisibility;
  let starts: number[];
  beforeEach(() => {
    vi.useFakeTimers();
    visibility = new FakeVisibility();
    starts = [];
  });
  afterEach(() => vi.useRealTimers());

  /** A refresh that records when it started and answers at once. */
  const quick = () => {
    starts.push(Date.now());
    return Promise.resolve();
  };

  it('refreshes after 1 s, then backs off by doubling up to 30 s', async () => {
    const t0 = Date.now();
    const poller = startPoller({ run: quick, visibility });
    await vi.advanceTimersByTimeAsync(120_000);
    poller.stop();
    const gaps = starts.map((t, i) => t - (i === 0 ? t0 : starts[i - 1]!));
    expect(gaps.slice(0, 7)).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]);
  });

  it('never starts a refresh while one is in flight, and waits for it before the next', async () => {
    let inFlight = 0;
    let most = 0;
    let finish: () => void = () => undefined;
    const slow = () => {
      starts.push(Date.now());
      inFlight++;
      most = Math.max(most, inFlight);
      return new Promise<void>((resolve) => {
        finish = () => {
          inFlight--;
          resolve();
        };
      });
    };
    const poller = startPoller({ run: slow, visibility });
    await vi.advanceTimersByTimeAsync(1000);
    expect(starts).toHaveLength(1);
    // The request takes 10 s: no second one meanwhile, even past the 2 s the schedule says.
    await vi.advanceTimersByTimeAsync(10_000);
    expect(starts).toHaveLength(1);
    finish();
    await vi.advanceTimersByTimeAsync(1999);
    expect(starts).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(starts).toHaveLength(2);
    expect(most).toBe(1);
    finish();
    poller.stop();
  });

  it('keeps going after a failed refresh', async () => {
    const failing = () => {
      starts.push(Date.now());
      return Promise.reject(new Error('network'));
    };
    const poller = startPoller({ run: failing, visibility });
    await vi.advanceTimersByTimeAsync(3000);
    expect(starts).toHaveLength(2);
    poller.stop();
  });

  it('pauses while the tab is hidden and refreshes at once, from 1 s again, when it is shown', async () => {
    const poller = startPoller({ run: quick, visibility });
    await vi.advanceTimersByTimeAsync(1000 + 2000 + 4000);
    expect(starts).toHaveLength(3);
    visibility.set(true);
    await vi.advanceTimersByTimeAsync(600_000);
    expect(starts).toHaveLength(3);
    const shownAt = Date.now();
    visibility.set(false);
    await vi.advanceTimersByTimeAsync(0);
    expect(starts).toHaveLength(4);
    expect(starts[3]).toBe(shownAt);
    await vi.advanceTimersByTimeAsync(1000);
    expect(starts).toHaveLength(5);
    poller.stop();
  });

  it('does nothing while hidden from the start, and nothing after stop()', async () => {
    visibility.hidden = true;
    const poller = startPoller({ run: quick, visibility });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(starts).toHaveLength(0);
    poller.stop();
    visibility.set(false);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(starts).toHaveLength(0);
  });
});
