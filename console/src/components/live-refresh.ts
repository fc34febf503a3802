/**
 * Pages that show something still in progress (a pending or retrying delivery, a running job, a
 * test send) refresh by themselves on the shared schedule of ../poller.ts: backing off from 1 s
 * to 30 s, never two requests at once, paused while the tab is hidden.
 */
import { useEffect, useRef } from 'preact/hooks';
import type { DeliveryStatus } from '../api/contract';
import { startPoller } from '../poller';

/** Delivery statuses that change by themselves: the page showing one keeps refreshing. */
export function inProgress(status: DeliveryStatus): boolean {
  return status === 'pending' || status === 'failed';
}

/**
 * Runs `refresh` on the backoff schedule while `active`. A change of `progress` (e.g. a new
 * status or attempt count) starts the schedule again from 1 s: something is moving.
 */
export function useLiveRefresh(active: boolean, refresh: () => Promise<unknown>, progress: unknown = null): void {
  const latest = useRef(refresh);
  latest.current = refresh;
  useEffect(() => {
    if (!active) return;
    const poller = startPoller({ run: () => latest.current(), visibility: document });
    return () => poller.stop();
  }, [active, progress]);
}
