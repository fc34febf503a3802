/**
 * The sender's socket limits (docs/behaviour.md#sender-limits) against real loopback receivers:
 * idle keep-alive capped whatever the receiver asks, one socket budget across every agent, and
 * the container's own resource errors named as the service's fault.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { isServiceFault } from '../../lambdas/domain/delivery-lifecycle';
import {
  createHttpSender,
  KEEP_ALIVE_MS,
  MAX_CONNECTIONS_PER_TARGET,
  MAX_SOCKETS,
  type SendInput,
} from '../../lambdas/pipeline/http-sender';

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((s) => s()));
});

/**
 * A receiver that answers 204 after `delayMs` and asks clients to keep the connection for 10
 * minutes (and would itself keep it that long); it tracks its open sockets, counts the
 * connections it accepted and keeps each request's Host header.
 */
async function keepAliveReceiver(delayMs = 0, address = '127.0.0.1', listenPort = 0) {
  const open = new Set<Socket>();
  const closedAfter: number[] = [];
  const hosts: string[] = [];
  const counts = { connections: 0 };
  let answeredAt = 0;
  const server: Server = createServer((req, res) => {
    hosts.push(req.headers.host ?? '');
    req.resume();
    req.on('end', () =>
      setTimeout(() => {
        answeredAt = performance.now();
        res.writeHead(204, { connection: 'keep-alive', 'keep-alive': 'timeout=600' }).end();
      }, delayMs),
    );
  });
  server.keepAliveTimeout = 600_000;
  server.on('connection', (socket: Socket) => {
    counts.connections++;
    open.add(socket);
    socket.on('close', () => {
      open.delete(socket);
      closedAfter.push(performance.now() - answeredAt);
    });
  });
  await new Promise<void>((ok) => server.listen(listenPort, address, () => ok()));
  const port = (server.address() as AddressInfo).port;
  stops.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((ok) => server.close(() => ok()));
  });
  return { port, open, closedAfter, hosts, counts };
}

/** Polls `condition` every 50 ms until it holds or `ms` pass; whether it held. */
async function eventually(condition: () => boolean, ms: number): Promise<boolean> {
  const until = performance.now() + ms;
  while (!condition()) {
    if (performance.now() > until) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

const limits = { deadlineMs: 2_000, bodyReadMs: 300, bodyCapBytes: 2048 };
const pinned = { address: '127.0.0.1', family: 4 } as const;
/** A POST to `host` on the receiver's port (each host name gets its own agent). */
const post = (host: string, port: number, to: SendInput['pinned'] = pinned): SendInput => ({
  url: new URL(`http://${host}:${port}/hook`),
  headers: { 'content-type': 'application/json' },
  body: '{}',
  pinned: to,
});

describe('keep-alive', () => {
  it('two POSTs to one receiver share one connection', async () => {
    const r = await keepAliveReceiver();
    const send = createHttpSender(limits);
    for (let i = 0; i < 2; i++) expect(await send(post('hooks.example.test', r.port))).toMatchObject({ kind: 'response', status: 204 });
    expect(r.counts.connections).toBe(1);
    expect(r.open.size).toBe(1);
  });

  it(`at most ${MAX_CONNECTIONS_PER_TARGET} connections to one receiver, even for requests sent in the same tick`, async () => {
    const r = await keepAliveReceiver(200);
    const send = createHttpSender(limits);
    const results = await Promise.all(
      Array.from({ length: MAX_CONNECTIONS_PER_TARGET * 2 }, () => send(post('hooks.example.test', r.port))),
    );
    expect(results.filter((x) => x.kind === 'response' && x.status === 204)).toHaveLength(MAX_CONNECTIONS_PER_TARGET * 2);
    expect(r.counts.connections).toBe(MAX_CONNECTIONS_PER_TARGET);
  });

  it('the idle cap never cuts a request in flight', async () => {
    // The receiver is silent for 600 ms mid-request: three times the idle cap.
    const r = await keepAliveReceiver(600);
    const send = createHttpSender(limits, { keepAliveMs: 200 });
    expect(await send(post('hooks.example.test', r.port))).toMatchObject({ kind: 'response', status: 204 });
    // Idle afterwards, the socket closes at the (short) cap.
    expect(await eventually(() => r.open.size === 0, 1_500)).toBe(true);
  });
});

describe('pinning (docs/architecture.md#address-pinning)', () => {
  it('connects to the pinned address, never the name; the name pinned elsewhere gets its own connection', async () => {
    const a = await keepAliveReceiver(0, '127.0.0.1');
    const b = await keepAliveReceiver(0, '127.0.0.2', a.port);
    const send = createHttpSender(limits);
    expect(await send(post('hooks.example.test', a.port, { address: '127.0.0.1', family: 4 }))).toMatchObject({
      kind: 'response',
      status: 204,
    });
    // a's idle keep-alive socket is not reused for the other address.
    expect(await send(post('hooks.example.test', a.port, { address: '127.0.0.2', family: 4 }))).toMatchObject({
      kind: 'response',
      status: 204,
    });
    expect([a.counts.connections, b.counts.connections]).toEqual([1, 1]);
    expect([...a.hosts, ...b.hosts]).toEqual([`hooks.example.test:${a.port}`, `hooks.example.test:${a.port}`]);
  });

  it('an IPv6 address, pinned for a name or written as a literal', async () => {
    const r = await keepAliveReceiver(0, '::1');
    const send = createHttpSender(limits);
    const v6 = { address: '::1', family: 6 } as const;
    expect(await send(post('hooks.example.test', r.port, v6))).toMatchObject({ kind: 'response', status: 204 });
    expect(await send(post('[::1]', r.port, v6))).toMatchObject({ kind: 'response', status: 204 });
    expect(r.hosts).toEqual([`hooks.example.test:${r.port}`, `[::1]:${r.port}`]);
  });
});

describe('deadlines (docs/behaviour.md#deadlines-and-body-read)', () => {
  it('one deadline covers connect, headers and body: a body trickling past it is stored as absent', async () => {
    const server = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/plain' });
      const drip = setInterval(() => res.write('x'), 50);
      res.on('close', () => clearInterval(drip));
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
    stops.push(async () => {
      server.closeAllConnections();
      await new Promise<void>((ok) => server.close(() => ok()));
    });
    const send = createHttpSender({ deadlineMs: 500, bodyReadMs: 5_000, bodyCapBytes: 2048 });
    const result = await send(post('hooks.example.test', (server.address() as AddressInfo).port));
    expect(result).toMatchObject({ kind: 'response', status: 200, body: null });
    expect(result.durationMs).toBeGreaterThanOrEqual(450);
    expect(result.durationMs).toBeLessThan(1_500);
  });

  it('a receiver that never answers times out at the deadline less what resolution spent', async () => {
    const r = await keepAliveReceiver(3_000);
    const result = await createHttpSender(limits)({ ...post('hooks.example.test', r.port), spentMs: 1_500 });
    expect(result).toMatchObject({ kind: 'error', reason: 'timeout' });
    expect(result.durationMs).toBeGreaterThanOrEqual(450);
    expect(result.durationMs).toBeLessThan(1_500);
  });
});

describe('idle keep-alive', () => {
  it('a receiver’s `Keep-Alive: timeout=600` does not keep our idle socket past the cap', async () => {
    expect(KEEP_ALIVE_MS).toBeLessThanOrEqual(5_000);
    const r = await keepAliveReceiver();
    const send = createHttpSender(limits);
    expect(await send(post('hooks.example.test', r.port))).toMatchObject({ kind: 'response', status: 204 });
    expect(r.open.size).toBe(1);
    // Bounded wait: the cap plus slack. Before the cap, the socket stayed open for 10 minutes.
    expect(await eventually(() => r.open.size === 0, KEEP_ALIVE_MS + 3_000)).toBe(true);
    expect(r.closedAfter[0]).toBeLessThanOrEqual(KEEP_ALIVE_MS + 1_000);
  });
});

describe('one socket budget across agents', () => {
  it('never holds more idle sockets than the budget, whatever the number of host names', async () => {
    expect(MAX_SOCKETS).toBeLessThanOrEqual(512);
    const r = await keepAliveReceiver();
    const send = createHttpSender(limits, { maxSockets: 3 });
    for (let i = 1; i <= 8; i++) {
      expect(await send(post(`h${i}.example.test`, r.port))).toMatchObject({ kind: 'response', status: 204 });
    }
    // The least recently used idle agents were closed to make room; the rest stay open (keep-alive).
    expect(await eventually(() => r.open.size <= 3, 1_000)).toBe(true);
    expect(r.open.size).toBe(3);
  });

  it('a connect waiting for a socket gets one as soon as another host’s request ends', async () => {
    const r = await keepAliveReceiver(300);
    const send = createHttpSender(limits, { maxSockets: 2 });
    const results = await Promise.all(['a', 'b', 'c'].map((h) => send(post(`${h}.example.test`, r.port))));
    expect(results).toEqual([0, 1, 2].map(() => expect.objectContaining({ kind: 'response', status: 204 })));
  });

  it('when every socket is busy past the wait, the attempt fails as the service’s fault (socket_limit)', async () => {
    const r = await keepAliveReceiver(1_500);
    const send = createHttpSender(limits, { maxSockets: 1 });
    const busy = send(post('busy.example.test', r.port));
    const starved = await send(post('other.example.test', r.port));
    expect(starved).toMatchObject({ kind: 'error', reason: 'service_error: socket_limit' });
    expect(isServiceFault(starved.kind === 'error' ? starved.reason : null)).toBe(true);
    expect(starved.durationMs).toBeLessThan(limits.deadlineMs);
    expect(await busy).toMatchObject({ kind: 'response', status: 204 });
  });
});

describe('whose fault a transport error is', () => {
  it.each(['EMFILE', 'ENFILE'])('%s on connect is the service’s fault', async (code) => {
    const send = createHttpSender(limits, {
      connector: () => (_opts, callback) => callback(Object.assign(new Error(`connect ${code}`), { code }), null),
    });
    const result = await send(post('hooks.example.test', 1));
    expect(result).toMatchObject({ kind: 'error', reason: `service_error: ${code}` });
  });

  it('a refused connection is the receiver’s (connection_refused)', async () => {
    const r = await keepAliveReceiver();
    const port = r.port;
    await stops.pop()!();
    const result = await createHttpSender(limits)(post('hooks.example.test', port));
    expect(result).toMatchObject({ kind: 'error', reason: 'connection_refused' });
    expect(isServiceFault(result.kind === 'error' ? result.reason : null)).toBe(false);
  });
});
