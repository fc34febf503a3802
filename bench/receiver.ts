/**
 * The benchmark's loopback receiver, run as its own process (forked by
 * `bench/receiver-process.ts`) so that neither the pipeline nor the raw
 * poster pays for its CPU. It is deliberately minimal: no signature
 * verification (bin/local/receiver-server.ts does that, more slowly), it
 * reads the body, parses `deliveryId`, records the receipt time of each
 * `webhook-id` and answers 200 with an empty body at once.
 *
 * IPC protocol (parent → child): `{ cmd: 'reset' }`, `{ cmd: 'dump' }`;
 * (child → parent): `{ kind: 'ready', port }`, `{ kind: 'reset' }`,
 * `{ kind: 'dump', ... }`. The child exits when the parent goes away.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the receiver saw since the last reset. */
export interface ReceiverDump {
  readonly kind: 'dump';
  /** Requests answered. */
  readonly requests: number;
  /** First receipt (epoch ms, sub-ms precision) per `webhook-id`. */
  readonly firstReceipt: Record<string, number>;
  /** Requests whose `webhook-id` had been seen before. */
  readonly duplicates: number;
  /** Bodies that were not JSON or whose `deliveryId` differed from `webhook-id`. */
  readonly badBodies: number;
  /** Requests without a `webhook-id` header. */
  readonly missingId: number;
}

function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

let firstReceipt = new Map<string, number>();
let requests = 0;
let duplicates = 0;
let badBodies = 0;
let missingId = 0;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = nowMs();
    requests++;
    const id = req.headers['webhook-id'];
    if (typeof id !== 'string') missingId++;
    else if (firstReceipt.has(id)) duplicates++;
    else firstReceipt.set(id, at);
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { deliveryId?: unknown };
      if (body.deliveryId !== id) badBodies++;
    } catch {
      badBodies++;
    }
    res.writeHead(200, { 'content-length': '0' });
    res.end();
  });
});
// Longer than the senders' keep-alive (the raw baseline's undici: 30 s; the dispatcher's: 4 s), so an idle pause never races a reused socket.
server.keepAliveTimeout = 65_000;
server.headersTimeout = 66_000;

process.on('message', (message: { cmd?: string }) => {
  if (message.cmd === 'reset') {
    firstReceipt = new Map();
    requests = duplicates = badBodies = missingId = 0;
    process.send?.({ kind: 'reset' });
  } else if (message.cmd === 'dump') {
    const dump: ReceiverDump = { kind: 'dump', requests, firstReceipt: Object.fromEntries(firstReceipt), duplicates, badBodies, missingId };
    process.send?.(dump);
  }
});
// The parent went away (finished or crashed): leave with it.
process.on('disconnect', () => {
  server.closeAllConnections();
  server.close();
  process.exit(0);
});

server.listen(0, '127.0.0.1', () => {
  process.send?.({ kind: 'ready', port: (server.address() as AddressInfo).port });
});
