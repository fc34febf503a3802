/** Ctrl-C for the local commands (`npm start`, `npm run receiver`): stop once, cleanly, on SIGINT or SIGTERM. */

/** Runs `stop` on the first SIGINT or SIGTERM (after `announce`), then exits 0, or 1 when stopping failed. */
export function stopOnSignals(announce: (signal: string) => void, stop: () => Promise<void>): void {
  let stopping = false;
  const onSignal = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    announce(signal);
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
