/** The local stand-in for EventBridge schedules: each job on its own interval, never overlapping itself. */

/** A scheduled job. */
export interface ScheduledJob {
  readonly name: string;
  /** Interval at time scale 1. */
  readonly everyMs: number;
  readonly run: () => Promise<unknown>;
}

/** Starts the jobs (intervals divided by `timeScale`); the result stops them and waits for running ones. */
export function startSchedules(
  jobs: readonly ScheduledJob[],
  timeScale = 1,
  onError: (job: string, e: unknown) => void = () => undefined,
): () => Promise<void> {
  const running = new Set<Promise<unknown>>();
  const timers = jobs.map((job) => {
    let busy = false;
    const timer = setInterval(
      () => {
        if (busy) return;
        busy = true;
        const p = job
          .run()
          .catch((e: unknown) => onError(job.name, e))
          .finally(() => {
            busy = false;
            running.delete(p);
          });
        running.add(p);
      },
      Math.max(50, job.everyMs / timeScale),
    );
    timer.unref();
    return timer;
  });
  return async () => {
    timers.forEach(clearInterval);
    await Promise.allSettled([...running]);
  };
}
