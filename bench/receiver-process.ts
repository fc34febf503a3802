/** Starts `bench/receiver.ts` in a child process and talks to it over IPC. */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ReceiverDump } from './receiver';

/** The running receiver process. */
export interface ReceiverProcess {
  readonly url: string;
  readonly pid: number;
  reset(): Promise<void>;
  dump(): Promise<ReceiverDump>;
  stop(): Promise<void>;
}

function waitFor<T>(child: ChildProcess, kind: string, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`receiver: no "${kind}" message within ${timeoutMs} ms`));
    }, timeoutMs);
    const onMessage = (m: { kind?: string }) => {
      if (m.kind !== kind) return;
      cleanup();
      resolve(m as T);
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`receiver exited (${code}) before "${kind}"`));
    };
    const cleanup = () => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/** Forks the receiver (through tsx) and waits until it listens on 127.0.0.1. */
export async function startReceiverProcess(): Promise<ReceiverProcess> {
  const child = fork(fileURLToPath(new URL('./receiver.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let ready: { port: number };
  try {
    ready = await waitFor<{ port: number }>(child, 'ready', 30_000);
  } catch (e) {
    child.kill('SIGKILL');
    throw e;
  }
  return {
    url: `http://127.0.0.1:${ready.port}`,
    pid: child.pid ?? -1,
    async reset() {
      const done = waitFor(child, 'reset', 10_000);
      child.send({ cmd: 'reset' });
      await done;
    },
    async dump() {
      const done = waitFor<ReceiverDump>(child, 'dump', 30_000);
      child.send({ cmd: 'dump' });
      return done;
    },
    stop() {
      return new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill('SIGTERM');
      });
    },
  };
}
