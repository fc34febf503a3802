/**
 * Ctrl-C for the local commands (`npm start`, `npm run receiver`): stop once, cleanly, on SIGINT or
 * SIGTERM, and always within a few seconds (docs/architecture.md#the-local-stack): a clean stop waits
 * for in-flight work, which a receiver can hold until the attempt's deadline, so past
 * {@link STOP_GRACE_MS}, or on a second signal, the process stops anyway. Nothing is lost by that:
 * the local queues keep their messages on disk, as SQS does, and the next start takes them up.
 */

/** How long a clean stop may take before the process stops without it. */
const STOP_GRACE_MS = 3_000;

/** How long a forced stop waits for the processes it ends (e.g. DynamoDB Local) before it exits regardless. */
const FORCE_MS = 2_000;

/** Options of {@link stopOnSignals}. */
export interface StopOptions {
  /** Ends what must not outlive the process (child processes), when the clean stop is cut short. */
  readonly force?: () => Promise<void> | void;
  /** @default {@link STOP_GRACE_MS} */
  readonly graceMs?: number;
}

/**
 * Runs `stop` on the first SIGINT or SIGTERM (after `announce`), then exits 0, or 1 when stopping
 * failed. A second signal, or a stop still running after the grace, runs `force` and exits 1.
 */
export function stopOnSignals(announce: (signal: string) => void, stop: () => Promise<void>, options: StopOptions = {}): void {
  const graceMs = options.graceMs ?? STOP_GRACE_MS;
  let stopping = false;
  let forcing = false;
  const forceExit = (why: string): void => {
    if (forcing) return;
    forcing = true;
    console.error(`${why}: stopping now; deliveries in flight are taken up at the next start.`);
    // Bounded too: exit even if ending the children hangs.
    setTimeout(() => process.exit(1), FORCE_MS).unref();
    Promise.resolve()
      .then(() => options.force?.())
      .catch((e: unknown) => console.error(e))
      .finally(() => process.exit(1));
  };
  const onSignal = (signal: string): void => {
    if (stopping) return forceExit(`${signal} again`);
    stopping = true;
    announce(signal);
    setTimeout(() => forceExit(`Not stopped within ${graceMs / 1000} s`), graceMs).unref();
    stop()
      .then(() => process.exit(0))
      .catch((e: unknown) => {
        console.error(e);
        process.exit(1);
      });
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));
}

/**
 * Ends a process by its id: SIGTERM, then SIGKILL if it is still there after `graceMs`; resolves
 * when it is gone (or was never there).
 */
export async function endProcess(pid: number, graceMs = 1_500): Promise<void> {
  const alive = (): boolean => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (!alive()) return;
  process.kill(pid, 'SIGTERM');
  const until = Date.now() + graceMs;
  while (alive() && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  if (alive()) process.kill(pid, 'SIGKILL');
}
