/**
 * `npm start` killed with SIGKILL while deliveries are queued and in flight, then started again on
 * the same data: every accepted event is delivered at least once under its own `webhook-id` and
 * recorded, as SQS and EventBridge would have it after a crash of their consumer.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { scriptedReceiver } from '../helpers/scripted-receiver';

/** Events published before the kill. */
const EVENTS = 40;
/** How long the receiver takes to answer: deliveries are in flight when the stack dies. */
const ANSWER_MS = 1_000;

interface RunningStack {
  readonly child: ChildProcess;
  readonly apiUrl: string;
  readonly token: string;
  readonly dynamoDbPid: number;
  readonly banner: string;
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

/** Starts `npm start`'s program as a child on `dataDir` and waits for its banner. */
async function startStack(dataDir: string): Promise<RunningStack> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/local.ts', '--port', '0', '--data-dir', dataDir, '--time-scale', '100'], {
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
  return {
    child,
    apiUrl: /API\s+(http:\S+)/.exec(out)![1]!,
    token: /Token\s+(\S+)/.exec(out)![1]!,
    dynamoDbPid,
    banner: out,
  };
}

/** SIGKILL, the stack and the DynamoDB Local it started (a crash of the machine's processes). */
async function kill(stack: RunningStack): Promise<void> {
  const exited = new Promise((done) => stack.child.once('exit', done));
  stack.child.kill('SIGKILL');
  await exited;
  process.kill(stack.dynamoDbPid, 'SIGKILL');
  // Until the Java process is gone its data files are still open.
  for (let i = 0; i < 100; i++) {
    try {
      process.kill(stack.dynamoDbPid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function api<T>(stack: RunningStack, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${stack.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as T };
}

it(
  'delivers and records every accepted event after a SIGKILL mid-flight and a restart on the same data',
  { timeout: 300_000 },
  async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'webhooks-kill-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const receiver = await scriptedReceiver((_req, res) => {
      setTimeout(() => {
        res.writeHead(200);
        res.end('ok');
      }, ANSWER_MS);
    });
    cleanups.push(() => receiver.stop());
    const seenIds = () => new Set(receiver.seen.map((r) => String(r.headers['webhook-id'])));

    const first = await startStack(dataDir);
    const ws = '/workspaces/demo';
    const created = await api<{ endpointId: string }>(first, 'POST', `${ws}/webhooks`, {
      url: receiver.url,
      eventTypes: ['order.shipped'],
    });
    expect(created.status).toBe(201);

    const published = await Promise.all(
      Array.from({ length: EVENTS }, async (_, i) => {
        const res = await fetch(`${first.apiUrl}/local/events`, {
          method: 'POST',
          body: JSON.stringify({ id: `evt-kill-${i}`, workspace: 'demo', type: 'order.shipped', payload: { orderId: `o-${i}` } }),
        });
        const text = await res.text();
        expect(res.status, text).toBe(202);
        return (JSON.parse(text) as { deliveryIds: string[] }).deliveryIds;
      }),
    );
    const deliveryIds = published.flat();
    expect(deliveryIds).toHaveLength(EVENTS);

    // Killed while some deliveries are at the receiver (in flight) and the rest still queued.
    await expect.poll(() => receiver.seen.length, { timeout: 30_000, interval: 20 }).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, ANSWER_MS / 2));
    await kill(first);
    const beforeKill = seenIds();
    expect(beforeKill.size).toBeGreaterThan(0);
    expect(beforeKill.size).toBeLessThan(EVENTS);

    const second = await startStack(dataDir);
    expect(second.banner).toMatch(/\d+ messages taken up from the last run/);

    // At least once, each under its own webhook-id (duplicates allowed), and none left pending.
    await expect.poll(() => deliveryIds.filter((id) => !seenIds().has(id)), { timeout: 180_000, interval: 500 }).toEqual([]);
    await expect
      .poll(
        async () => {
          const statuses = await Promise.all(
            deliveryIds.map(async (id) => (await api<{ status: string }>(second, 'GET', `${ws}/webhooks/deliveries/${id}`)).body.status),
          );
          return statuses.filter((s) => s !== 'delivered');
        },
        { timeout: 60_000, interval: 500 },
      )
      .toEqual([]);
    await kill(second);
  },
);
