/**
 * `npm start` stops on Ctrl-C (SIGINT) and SIGTERM within a few seconds while attempts are in
 * flight to receivers that never answer or answer `101 Switching Protocols`, and a second signal
 * stops it at once; the DynamoDB Local it started goes with it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';

/** "Within a few seconds": the stop's grace and the time to stop DynamoDB Local, with room for a loaded machine. */
const STOPS_WITHIN_MS = 7_000;

interface RunningStack {
  readonly child: ChildProcess;
  readonly apiUrl: string;
  readonly token: string;
  readonly dynamoDbPid: number;
  output(): string;
}

const pids: number[] = [];
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  // By PID, even when the test failed: the stacks and the DynamoDB Locals they started.
  for (const pid of pids.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** Starts `npm start`'s program as a child on a fresh data folder and waits for its banner. */
async function startStack(): Promise<RunningStack> {
  const dataDir = mkdtempSync(join(tmpdir(), 'webhooks-stop-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/local.ts', '--port', '0', '--data-dir', dataDir], {
    env: { ...process.env, NODE_NO_WARNINGS: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  pids.push(child.pid!);
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise<void>((ready, fail) => {
    const timer = setTimeout(() => fail(new Error(`the local stack did not start within 120 s:\n${out}`)), 120_000);
    const check = () => {
      if (/Ctrl-C stops/.test(out)) {
        clearTimeout(timer);
        ready();
      }
    };
    child.stdout.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`the local stack exited (${code}) before it was ready:\n${out}`));
    });
  });
  const dynamoDbPid = Number(/DynamoDB\s+\S+ \(pid (\d+)/.exec(out)?.[1]);
  pids.push(dynamoDbPid);
  return { child, apiUrl: /API\s+(http:\S+)/.exec(out)![1]!, token: /Token\s+(\S+)/.exec(out)![1]!, dynamoDbPid, output: () => out };
}

/** A raw TCP receiver that answers `answer` (or nothing) and holds every connection open; counts requests. */
async function holdingReceiver(answer: string | null): Promise<{ url: string; requests: () => number }> {
  const sockets = new Set<Socket>();
  let requests = 0;
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    socket.once('data', () => {
      requests++;
      if (answer) socket.write(answer);
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  cleanups.push(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((ok) => server.close(() => ok()));
  });
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, requests: () => requests };
}

/** Subscribes an endpoint at `url` to `order.shipped` in the demo workspace. */
async function subscribe(stack: RunningStack, url: string): Promise<void> {
  const created = await fetch(`${stack.apiUrl}/workspaces/demo/webhooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url, eventTypes: ['order.shipped'] }),
  });
  expect(created.status, await created.clone().text()).toBe(201);
}

/** Publishes one `order.shipped` event to the demo workspace. */
async function publish(stack: RunningStack, eventId: string): Promise<void> {
  const published = await fetch(`${stack.apiUrl}/local/events`, {
    method: 'POST',
    body: JSON.stringify({ id: eventId, workspace: 'demo', type: 'order.shipped', payload: { orderId: eventId } }),
  });
  expect(published.status, await published.clone().text()).toBe(202);
}

/** Sends the signals (the later ones `gapMs` apart) and resolves with the time from the first to the exit, and the exit code. */
async function stopWith(stack: RunningStack, signals: NodeJS.Signals[], gapMs = 300): Promise<{ ms: number; code: number | null }> {
  const started = performance.now();
  const exited = new Promise<number | null>((done) => stack.child.once('exit', (code) => done(code)));
  signals.forEach((s, i) => setTimeout(() => stack.child.exitCode === null && stack.child.kill(s), i * gapMs));
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<'stuck'>((resolve) => {
    timer = setTimeout(() => resolve('stuck'), 30_000);
  });
  const code = await Promise.race([exited, stuck]).finally(() => clearTimeout(timer));
  expect(code, `the local stack did not exit within 30 s of ${signals.join(', ')}:\n${stack.output().slice(-3000)}`).not.toBe('stuck');
  return { ms: performance.now() - started, code: code as number | null };
}

/** Whether a process is gone within `ms`. */
async function goneWithin(pid: number, ms: number): Promise<boolean> {
  const until = performance.now() + ms;
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return true;
    }
    if (performance.now() > until) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}

it(
  'stops on SIGINT within a few seconds with attempts in flight to a silent receiver and a 101 receiver',
  { timeout: 240_000 },
  async () => {
    const silent = await holdingReceiver(null);
    const upgrading = await holdingReceiver('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
    const stack = await startStack();
    await subscribe(stack, silent.url);
    await subscribe(stack, upgrading.url);
    await publish(stack, 'evt-stop-1');
    await expect.poll(() => silent.requests() > 0 && upgrading.requests() > 0, { timeout: 30_000, interval: 50 }).toBe(true);

    const { ms } = await stopWith(stack, ['SIGINT']);
    expect(ms).toBeLessThan(STOPS_WITHIN_MS);
    expect(await goneWithin(stack.dynamoDbPid, 5_000)).toBe(true);
  },
);

it('stops on SIGTERM, and at once on a second signal, with an attempt in flight to a silent receiver', { timeout: 240_000 }, async () => {
  const silent = await holdingReceiver(null);
  const stack = await startStack();
  await subscribe(stack, silent.url);
  await publish(stack, 'evt-stop-2');
  await expect.poll(() => silent.requests() > 0, { timeout: 30_000, interval: 50 }).toBe(true);

  // The second signal comes well before a clean stop could end (the attempt holds until its 10 s deadline).
  const { ms } = await stopWith(stack, ['SIGTERM', 'SIGINT'], 300);
  expect(ms).toBeLessThan(2_500);
  expect(await goneWithin(stack.dynamoDbPid, 5_000)).toBe(true);
});
