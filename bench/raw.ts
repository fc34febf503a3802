/**
 * The ceiling: this one process POSTing delivery-shaped requests (same body
 * shape and header set as the dispatcher's, no DynamoDB, no signing) to the
 * same receiver with undici keep-alive, `concurrency` requests in flight.
 */
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'undici';
import { USER_AGENT } from '#lambdas/contract/limits';
import { nowMs } from './stats';

/** Result of one raw run. */
export interface RawResult {
  readonly requests: number;
  readonly concurrency: number;
  readonly connections: number;
  readonly seconds: number;
  readonly perSecond: number;
  readonly errors: number;
  readonly non2xx: number;
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A `whd_` id of the real length (prefix + 26 characters). */
function fakeDeliveryId(): string {
  const bytes = randomBytes(26);
  let out = 'whd_';
  for (const b of bytes) out += CROCKFORD[b % 32];
  return out;
}

/** The dispatcher's request for `payload`, with a signature of the real length (one `v1,` + 32-byte HMAC in base64). */
function deliveryShapedRequest(eventType: string, payload: unknown): { headers: Record<string, string>; body: string } {
  const id = fakeDeliveryId();
  const body = JSON.stringify({ deliveryId: id, eventType, payload });
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
      'webhook-signature': `v1,${randomBytes(32).toString('base64')}`,
      'x-trace-id': crypto.randomUUID(),
    },
  };
}

/** POSTs `count` requests to `url` with `concurrency` in flight over at most `connections` keep-alive sockets. */
export async function rawPostRate(options: {
  url: string;
  count: number;
  concurrency: number;
  connections: number;
  eventType: string;
  payload: (i: number) => unknown;
}): Promise<RawResult> {
  const agent = new Agent({ connections: options.connections, keepAliveTimeout: 30_000 });
  // Build the requests first: the ceiling is the POST rate, not the id generator's.
  const prepared = Array.from({ length: options.count }, (_, i) => deliveryShapedRequest(options.eventType, options.payload(i)));
  let next = 0;
  let errors = 0;
  let non2xx = 0;
  const url = new URL('/hook', options.url);
  const started = nowMs();
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= prepared.length) return;
      const r = prepared[i]!;
      try {
        const res = await request(url, { method: 'POST', headers: r.headers, body: r.body, dispatcher: agent });
        await res.body.dump();
        if (res.statusCode < 200 || res.statusCode >= 300) non2xx++;
      } catch {
        errors++;
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: options.concurrency }, worker));
  } finally {
    await agent.close();
  }
  const seconds = (nowMs() - started) / 1000;
  return {
    requests: options.count,
    concurrency: options.concurrency,
    connections: options.connections,
    seconds,
    perSecond: options.count / seconds,
    errors,
    non2xx,
  };
}
