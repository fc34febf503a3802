/**
 * The schedule behind pages that refresh by themselves (./components/live-refresh.ts): a refresh
 * after `firstDelayMs`, then after twice that each time up to `maxDelayMs`; never two at once
 * (the next is scheduled only when one has finished); paused while the page is hidden, and run
 * at once, from the first delay again, when it is shown. Free of the DOM, so it is unit-tested
 * with fake timers (test/console/poller.test.ts).
 */

/** Whether the page is hidden, and a way to hear when that changes (the Page Visibility API's `document`). */
export interface VisibilitySource {
  readonly hidden: boolean;
  addEventListener(type: 'visibilitychange', listener: () => void): void;
  removeEventListener(type: 'visibilitychange', listener: () => void): void;
}

/** What {@link startPoller} runs and how often. */
export interface PollerOptions {
  /** One refresh; the next is scheduled when it settles (resolved or rejected). */
  readonly run: () => Promise<unknown>;
  readonly visibility: VisibilitySource;
  readonly firstDelayMs?: number;
  readonly maxDelayMs?: number;
}

/** The default schedule: 1 s, doubling to 30 s. */
const FIRST_DELAY_MS = 1000;
const MAX_DELAY_MS = 30_000;

/** Starts refreshing; `stop()` ends it (a refresh in flight is let finish, and nothing follows it). */
export function startPoller(options: PollerOptions): { stop(): void } {
  const first = options.firstDelayMs ?? FIRST_DELAY_MS;
  const max = options.maxDelayMs ?? MAX_DELAY_MS;
  // The wait after the refresh now coming.
  let next = Math.min(first * 2, max);
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running = false;
  let stopped = false;

  const schedule = (ms: number) => {
    clearTimeout(timer);
    timer = undefined;
    if (stopped || running || options.visibility.hidden) return;
    timer = setTimeout(tick, ms);
  };

  function tick(): void {
    timer = undefined;
    if (stopped || running || options.visibility.hidden) return;
    running = true;
    const settle = () => {
      running = false;
      schedule(next);
      next = Math.min(next * 2, max);
    };
    let pending: Promise<unknown>;
    try {
      pending = options.run();
    } catch (e) {
      pending = Promise.reject(e instanceof Error ? e : new Error(String(e)));
    }
    pending.then(settle, settle);
  }

  const onVisibility = () => {
    if (options.visibility.hidden) {
      clearTimeout(timer);
      timer = undefined;
      return;
    }
    // Shown again: catch up now, then back off from the start.
    next = first;
    schedule(0);
  };

  options.visibility.addEventListener('visibilitychange', onVisibility);
  schedule(first);
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
      options.visibility.removeEventListener('visibilitychange', onVisibility);
    },
  };
}
