/**
 * The sender against receivers that break HTTP (docs/behaviour.md#deadlines-and-body-read,
 * docs/behaviour.md#outcome-classification): every send settles by its deadline whatever the
 * socket does, a protocol switch and a status outside 100–599 are reported as such, and the
 * stored body prefix is bounded in bytes as stored.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpSender, type SendInput, type SendResult } from '../../lambdas/pipeline/http-sender';

const limits = { deadlineMs: 800, bodyReadMs: 300, bodyCapBytes: 2048 };
/** What a recorded duration may exceed the deadline by: timer and event-loop latency on a loaded machine. */
const SLACK_MS = 400;

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((s) => s()));
});

/** A raw TCP receiver on loopback that writes `answer` once the request arrived and then holds the socket open. */
async function rawReceiver(answer: string | Buffer): Promise<number> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    socket.once('data', () => socket.write(answer));
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  stops.push(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((ok) => server.close(() => ok()));
  });
  return (server.address() as { port: number }).port;
}

const post = (port: number): SendInput => ({
  url: new URL(`http://127.0.0.1:${port}/hook`),
  headers: { 'content-type': 'application/json' },
  body: '{}',
  pinned: { address: '127.0.0.1', family: 4 },
});

/** The send's result, or 'unsettled' when it has not settled well after its deadline. */
async function settledWithin(send: Promise<SendResult>, ms = limits.deadlineMs * 4): Promise<SendResult | 'unsettled'> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<'unsettled'>((resolve) => {
    timer = setTimeout(() => resolve('unsettled'), ms);
  });
  try {
    return await Promise.race([send, guard]);
  } finally {
    clearTimeout(timer);
  }
}

describe('every send settles by its deadline', () => {
  it('a 101 with Upgrade (the socket Node takes away without an event) is a protocol upgrade', async () => {
    const port = await rawReceiver('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
    const result = await settledWithin(createHttpSender(limits)(post(port)));
    expect(result).toMatchObject({ kind: 'response', status: 101, upgrade: true, body: null });
    expect((result as SendResult).durationMs).toBeLessThanOrEqual(limits.deadlineMs + SLACK_MS);
  });

  it('a 101 without Upgrade is a protocol upgrade too', async () => {
    const port = await rawReceiver('HTTP/1.1 101 Switching Protocols\r\n\r\n');
    const result = await settledWithin(createHttpSender(limits)(post(port)));
    expect(result).toMatchObject({ kind: 'response', status: 101, body: null });
  });

  it('a socket whose destroy never completes (no close, no error) still times out at the deadline', async () => {
    // A connection that takes the request and then never says anything, not even on destroy: the
    // deadline must not depend on the socket emitting an event.
    const swallowing = () => (_options: unknown, callback: (error: Error | null, socket: Duplex | null) => void) =>
      callback(
        null,
        new Duplex({
          read() {},
          write(_chunk, _encoding, done) {
            done();
          },
          destroy() {
            // Never calls back.
          },
        }),
      );
    const send = createHttpSender(limits, { connector: swallowing });
    const result = await settledWithin(send(post(1)));
    expect(result).toMatchObject({ kind: 'error', reason: 'timeout' });
    expect((result as SendResult).durationMs).toBeGreaterThanOrEqual(limits.deadlineMs - 5);
    expect((result as SendResult).durationMs).toBeLessThanOrEqual(limits.deadlineMs + SLACK_MS);
  });
});

describe('a status outside 100–599 is reported with the status the receiver sent', () => {
  it.each([0, 99, 600, 999, 1000])('HTTP/1.1 %i', async (status) => {
    const port = await rawReceiver(`HTTP/1.1 ${status} Strange\r\nContent-Length: 2\r\n\r\nno`);
    const result = await settledWithin(createHttpSender(limits)(post(port)));
    expect(result).toMatchObject({ kind: 'response', status });
  });
});

describe('the stored body prefix is bounded in bytes as stored (UTF-8)', () => {
  it.each([2048, 8192])('%i bytes of invalid UTF-8 store at most 2048 bytes', async (size) => {
    const port = await rawReceiver(
      Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Length: ${size}\r\n\r\n`), Buffer.alloc(size, 0xff)]),
    );
    const result = await settledWithin(createHttpSender(limits)(post(port)));
    expect(result).toMatchObject({ kind: 'response', status: 200 });
    const body = (result as Extract<SendResult, { kind: 'response' }>).body!;
    expect(body.length).toBeGreaterThan(0);
    expect(Buffer.byteLength(body, 'utf8')).toBeLessThanOrEqual(limits.bodyCapBytes);
  });

  it('valid text cut inside a character keeps whole characters within the cap', async () => {
    const text = `a${'é'.repeat(1500)}`;
    const port = await rawReceiver(`HTTP/1.1 200 OK\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
    const result = await settledWithin(createHttpSender(limits)(post(port)));
    const body = (result as Extract<SendResult, { kind: 'response' }>).body!;
    expect(Buffer.byteLength(body, 'utf8')).toBeLessThanOrEqual(limits.bodyCapBytes);
    expect(body).toBe(text.slice(0, 1024));
  });
});
