/**
 * The hostile-receiver corpus (docs/behaviour.md#outcome-classification,
 * docs/behaviour.md#deadlines-and-body-read): raw TCP receivers on loopback that answer a POST
 * with what no HTTP server should (a protocol switch, endless informational answers, statuses
 * outside 100–599, headers or a body that never end, garbage), each dispatched in one batch with
 * a healthy endpoint's delivery. For every case: exactly one attempt, settled within the deadline
 * (its recorded duration), bounded evidence, the right outcome and reason, and the healthy
 * endpoint delivered in the same batch. A table (case, outcome, reason, status, duration, stored body bytes) is
 * printed at the end.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { responseKey } from '../../lambdas/domain/delivery-health';
import { dispatchDelivery, type DispatchDeps } from '../../lambdas/pipeline/dispatcher';
import type { DispatchResult } from '../../lambdas/pipeline/delivery-decision';
import { createHttpSender } from '../../lambdas/pipeline/http-sender';
import { getDelivery, listAttempts } from '../../lambdas/store/deliveries';
import { testSealer } from '../helpers/pipeline';
import { scriptedReceiver } from '../helpers/scripted-receiver';
import { FAULT_SEND_LIMITS, startHarness } from './harness';

/** How long a batch may take before the case is reported wedged: well past the deadline and the records' writes. */
const WEDGED_AFTER_MS = FAULT_SEND_LIMITS.deadlineMs * 4;
/** What the recorded duration may exceed the deadline by: timer and event-loop latency on a loaded machine. */
const DEADLINE_SLACK_MS = 500;

/** What a hostile receiver does once the POST has arrived; `every` runs a step until the socket closes. */
type Script = (socket: Socket, every: (ms: number, step: () => void) => void) => void;

interface Case {
  readonly name: string;
  readonly script: Script;
  readonly outcome: 'delivered' | 'failed' | 'failed_permanent';
  readonly reason: string | null | RegExp;
  readonly status: number | null;
  /** The endpoint health key the attempt counts under. */
  readonly healthKey: string;
}

/** Writes `text`, then keeps the socket open and silent until the client closes it. */
const answerAndHold =
  (text: string | Buffer): Script =>
  (socket) =>
    socket.write(text);

const CASES: readonly Case[] = [
  {
    name: '101 with Upgrade',
    script: answerAndHold('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n'),
    outcome: 'failed_permanent',
    reason: 'protocol_upgrade',
    status: 101,
    healthKey: 'protocol_upgrade',
  },
  {
    name: '101 without Upgrade',
    script: answerAndHold('HTTP/1.1 101 Switching Protocols\r\n\r\n'),
    outcome: 'failed_permanent',
    reason: 'protocol_upgrade',
    status: 101,
    healthKey: 'protocol_upgrade',
  },
  {
    name: 'endless 1xx (100, 102, 103)',
    script: (socket, every) => {
      const statuses = ['100 Continue', '102 Processing', '103 Early Hints'];
      let i = 0;
      every(40, () => socket.write(`HTTP/1.1 ${statuses[i++ % 3]}\r\n\r\n`));
    },
    outcome: 'failed',
    reason: 'timeout',
    status: null,
    healthKey: 'timeout',
  },
  ...[0, 99, 600, 999].map((status): Case => ({
    name: `status ${status}`,
    script: answerAndHold(`HTTP/1.1 ${status} Strange\r\nContent-Length: 2\r\n\r\nno`),
    outcome: 'failed_permanent',
    reason: 'invalid_status',
    status,
    healthKey: 'invalid_status',
  })),
  {
    name: 'response split across slow packets',
    script: (socket, every) => {
      const parts = ['HTTP/1.1 2', '00 OK\r\nContent-', 'Length: 7\r\n', '\r\n', 'receiv', 'ed'];
      every(100, () => {
        const part = parts.shift();
        if (part !== undefined) socket.write(part);
      });
    },
    outcome: 'delivered',
    reason: null,
    status: 200,
    healthKey: '200',
  },
  {
    name: 'headers that never end',
    script: (socket, every) => {
      socket.write('HTTP/1.1 200 OK\r\n');
      let i = 0;
      every(40, () => socket.write(`x-more-${i++}: yes\r\n`));
    },
    outcome: 'failed',
    reason: 'timeout',
    status: null,
    healthKey: 'timeout',
  },
  {
    name: 'body that never ends (invalid UTF-8)',
    script: (socket, every) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n');
      every(5, () => socket.write(Buffer.alloc(4096, 0xff)));
    },
    outcome: 'delivered',
    reason: null,
    status: 200,
    healthKey: '200',
  },
  {
    name: 'TLS-less garbage',
    script: answerAndHold(Buffer.concat([Buffer.from([0x16, 0x03, 0x01, 0x00, 0xa5]), Buffer.alloc(200, 0xfe), Buffer.from('\r\n\r\n')])),
    outcome: 'failed',
    reason: /^network_error/,
    status: null,
    healthKey: 'network_error',
  },
  {
    name: 'close before a response',
    script: (socket) => socket.end(),
    outcome: 'failed',
    reason: 'connection_reset',
    status: null,
    healthKey: 'network_error',
  },
  {
    name: 'close after headers',
    script: (socket) => socket.end('HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n'),
    outcome: 'delivered',
    reason: null,
    status: 200,
    healthKey: '200',
  },
  {
    name: 'reset after the body',
    script: (socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nreceived');
      setTimeout(() => socket.resetAndDestroy(), 50);
    },
    outcome: 'delivered',
    reason: null,
    status: 200,
    healthKey: '200',
  },
];

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Row {
  readonly name: string;
  readonly outcome: string;
  readonly reason: string;
  readonly status: string;
  readonly durationMs: string;
  readonly bodyBytes: string;
}
const rows: Row[] = [];
afterAll(() => {
  if (rows.length === 0) return;
  const head: Row = {
    name: 'case',
    outcome: 'outcome',
    reason: 'reason',
    status: 'status',
    durationMs: 'duration ms',
    bodyBytes: 'body bytes',
  };
  const keys = Object.keys(head) as (keyof Row)[];
  const all = [head, ...rows];
  const width = keys.map((k) => Math.max(...all.map((r) => r[k].length)));
  const line = (r: Row) => `| ${keys.map((k, i) => r[k].padEnd(width[i]!)).join(' | ')} |`;
  const table = [
    `Hostile receivers: ${rows.length} cases, deadline ${FAULT_SEND_LIMITS.deadlineMs} ms`,
    line(head),
    `|${width.map((w) => '-'.repeat(w + 2)).join('|')}|`,
    ...rows.map(line),
  ].join('\n');
  process.stdout.write(`\n${table}\n\n`);
});

/**
 * A raw TCP receiver on loopback running `script` on each connection once the request has arrived;
 * it keeps the first bytes of each request (other processes on a shared machine may reach a port
 * their own server just gave up, so POSTs are told apart by their `webhook-id`).
 */
async function rawReceiver(script: Script): Promise<{ url: string; postsOf: (deliveryId: string) => number }> {
  const sockets = new Set<Socket>();
  const heads: string[] = [];
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    const timers: NodeJS.Timeout[] = [];
    socket.on('error', () => undefined);
    socket.on('close', () => {
      sockets.delete(socket);
      timers.forEach(clearInterval);
    });
    socket.once('data', (head: Buffer) => {
      heads.push(head.toString('latin1'));
      script(socket, (ms, step) => {
        const timer = setInterval(() => {
          if (!socket.destroyed && socket.writable) step();
        }, ms);
        timers.push(timer);
      });
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  cleanups.push(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((ok) => server.close(() => ok()));
  });
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/hook`,
    postsOf: (deliveryId) =>
      heads.filter((h) => h.startsWith('POST ') && h.toLowerCase().includes(`webhook-id: ${deliveryId.toLowerCase()}`)).length,
  };
}

describe('a hostile receiver settles one attempt within the deadline and leaves its batch alone', () => {
  for (const c of CASES) {
    it(c.name, async () => {
      const h = await startHarness();
      cleanups.push(() => h.close());
      const healthy = await scriptedReceiver((_req, res) => res.writeHead(200).end('ok'));
      cleanups.push(() => healthy.stop());
      const hostile = await rawReceiver(c.script);
      const hostileEndpoint = await h.endpoint(hostile.url);
      const healthyEndpoint = await h.endpoint(healthy.url);
      const eventId = `evt-hostile-${c.name.replace(/\W+/g, '-')}`;
      const { result } = await h.publish(h.event(eventId));
      expect(result.deliveryIds).toHaveLength(2);

      const deps: DispatchDeps = {
        table: h.table,
        now: () => h.now(),
        sender: createHttpSender(FAULT_SEND_LIMITS),
        resolve: async () => [{ address: '127.0.0.1', family: 4 }],
        urlPolicy: { allowLoopback: true },
        secrets: testSealer,
      };
      // One batch: both records dispatched concurrently, as the dispatcher's handler does.
      const batch = Promise.all(result.deliveryIds.map((id) => dispatchDelivery(deps, id)));
      let guard: NodeJS.Timeout | undefined;
      const wedged = new Promise<'wedged'>((resolve) => {
        guard = setTimeout(() => resolve('wedged'), WEDGED_AFTER_MS);
      });
      const settled = await Promise.race([batch, wedged]).finally(() => clearTimeout(guard));

      const rowOf = async (endpointId: string) => {
        const ids = await Promise.all(result.deliveryIds.map((id) => getDelivery(h.reader, id)));
        return ids.find((d) => d?.endpointId === endpointId)!;
      };
      const hostileRow = await rowOf(hostileEndpoint.endpointId);
      const attempts = (await listAttempts(h.reader, hostileRow.deliveryId, 50)).items;
      const attempt = attempts[0];
      rows.push({
        name: c.name,
        outcome: settled === 'wedged' && !attempt ? `wedged (${hostileRow.status}, no attempt)` : (attempt?.outcome ?? 'none'),
        reason: attempt?.failureReason ?? (attempt ? '-' : 'none'),
        status: attempt?.responseStatus === null || attempt === undefined ? '-' : String(attempt.responseStatus),
        durationMs: attempt?.durationMs === null || attempt === undefined ? `> ${WEDGED_AFTER_MS} (unsettled)` : String(attempt.durationMs),
        bodyBytes: attempt?.responseBody == null ? '-' : String(Buffer.byteLength(attempt.responseBody, 'utf8')),
      });

      expect(settled, 'the batch settles').not.toBe('wedged');
      const results = settled as DispatchResult[];
      expect(hostile.postsOf(hostileRow.deliveryId)).toBe(1);
      expect(attempts).toHaveLength(1);
      expect(hostileRow.attempts).toBe(1);
      expect(attempt!.outcome).toBe(c.outcome);
      if (c.reason instanceof RegExp) expect(attempt!.failureReason).toMatch(c.reason);
      else expect(attempt!.failureReason).toBe(c.reason);
      expect(attempt!.responseStatus).toBe(c.status);
      expect(attempt!.durationMs).toBeLessThanOrEqual(FAULT_SEND_LIMITS.deadlineMs + DEADLINE_SLACK_MS);
      // Bounded evidence: the stored body is at most the cap, in bytes as stored (UTF-8).
      expect(Buffer.byteLength(attempt!.responseBody ?? '', 'utf8')).toBeLessThanOrEqual(FAULT_SEND_LIMITS.bodyCapBytes);
      // What the batch's health counts for the hostile endpoint.
      const recorded = results.map((r) => r.recorded).find((o) => o?.endpointId === hostileEndpoint.endpointId);
      expect(recorded && responseKey(recorded)).toBe(c.healthKey);
      // A permanent failure is never retried; a retryable one is.
      expect(hostileRow.status).toBe(c.outcome);

      // The healthy endpoint in the same batch: delivered once, on time.
      const healthyRow = await rowOf(healthyEndpoint.endpointId);
      expect(healthyRow).toMatchObject({ status: 'delivered', attempts: 1, lastResponseStatus: 200 });
      expect(healthy.seen.filter((r) => r.headers['webhook-id'] === healthyRow.deliveryId)).toHaveLength(1);
    });
  }
});
