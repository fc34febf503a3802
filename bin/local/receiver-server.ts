/**
 * The demo webhook receiver behind `npm run receiver`: a small `node:http`
 * server that does what a real receiver should (docs/behaviour.md#receiver-rules):
 * verify the raw body with the `standardwebhooks` library before parsing it,
 * dedupe on `webhook-id`, and answer fast. It can be told to fail a share of
 * requests so the service's retries become visible.
 *
 * It is a development tool: deduplication is in memory and forgotten on
 * restart, which a production receiver must not do (spec: "atomically and
 * durably").
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** Largest request body accepted; bigger ones are answered 413. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** Options of {@link startReceiver}. */
export interface ReceiverOptions {
  /** Port on 127.0.0.1; 0 (the default) picks a free one. */
  port?: number;
  /**
   * One or more `whsec_…` signing secrets. A request passes when any of them
   * verifies it, so both secrets of a rotation grace window can be given.
   * Without a secret every request is accepted and recorded as unverified.
   */
  secret?: string | readonly string[];
  /** Share of requests (0..1) answered with {@link failStatus} before any processing. Default 0. */
  failRate?: number;
  /** Status of the simulated failures. Default 503. */
  failStatus?: number;
  /** Where the one-line-per-request log goes. Default: nowhere. */
  log?: (line: string) => void;
  /** Source of randomness for {@link failRate}, in [0, 1); injectable for tests. Default `Math.random`. */
  random?: () => number;
}

/** One delivery the receiver processed (duplicates and rejected requests are not recorded). */
interface ReceivedDelivery {
  /** When the request arrived. */
  receivedAt: Date;
  /** The `webhook-id` header: the delivery ID, the deduplication key. */
  webhookId: string;
  /** The `webhook-timestamp` header as sent (Unix seconds), if any. */
  webhookTimestamp: string | undefined;
  /** The `x-trace-id` header, if any. */
  traceId: string | undefined;
  /** Whether a configured secret verified the signature; `false` only when no secret is configured. */
  verified: boolean;
  /** 1-based index of the secret that verified it, when verified. */
  verifiedBySecret: number | undefined;
  /** Which request for this `webhook-id` it was (earlier ones failed or were rejected): 1 on a first try. */
  attempt: number;
  /** Request path, e.g. `/hooks`. */
  path: string;
  /** Body member `deliveryId`, when a string. */
  deliveryId: string | undefined;
  /** Body member `eventType`, when a string. */
  eventType: string | undefined;
  /** Body member `payload`. */
  payload: unknown;
  /** The raw body exactly as signed. */
  rawBody: string;
}

/** A running receiver, from {@link startReceiver}. */
export interface Receiver {
  /** Base URL, e.g. `http://127.0.0.1:4000`; any path under it receives deliveries. */
  readonly url: string;
  /** The port actually bound. */
  readonly port: number;
  /** Deliveries processed so far, oldest first. */
  readonly received: ReceivedDelivery[];
  /** Current share of requests failed on purpose. */
  readonly failRate: number;
  /** Changes the share of requests failed on purpose (0..1), e.g. to toggle failing everything. */
  setFailRate(rate: number): void;
  /** Stops listening and closes open connections; safe to call twice. */
  stop(): Promise<void>;
}

/** Thrown by {@link startReceiver} for invalid options (e.g. a malformed secret). */
export class ReceiverConfigError extends Error {
  override name = 'ReceiverConfigError';
}

function checkRate(rate: number): number {
  if (!Number.isFinite(rate) || rate < 0 || rate > 1) throw new ReceiverConfigError(`fail rate must be between 0 and 1, got ${rate}`);
  return rate;
}

/** Builds one verifier per secret up front, so a malformed secret fails at start, not per request. */
function verifiers(secret: ReceiverOptions['secret']): Webhook[] {
  const secrets = secret === undefined ? [] : typeof secret === 'string' ? [secret] : [...secret];
  return secrets.map((s, i) => {
    if (!s.startsWith('whsec_')) throw new ReceiverConfigError(`secret #${i + 1} does not start with "whsec_"`);
    try {
      return new Webhook(s);
    } catch (e) {
      throw new ReceiverConfigError(`secret #${i + 1} is not a whsec_ secret: ${e instanceof Error ? e.message : String(e)}`);
    }
  });
}

/** First value of a header (Node gives arrays for repeated ones). */
function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Reads the raw body, or resolves `undefined` as soon as it grows past
 * {@link MAX_BODY_BYTES}; the rest is then discarded unread while the 413 goes out.
 */
function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    if (Number(header(req, 'content-length')) > MAX_BODY_BYTES) {
      req.resume();
      resolve(undefined);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        over = true;
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: Record<string, unknown>, extra: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...extra });
  res.end(JSON.stringify(body));
}

function preview(value: unknown, max = 100): string {
  const text = JSON.stringify(value) ?? 'undefined';
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * Starts the demo receiver on 127.0.0.1.
 *
 * Per request: non-POST → 405; body over 1 MiB → 413; a simulated failure
 * (`failRate`) → `failStatus`; signature missing or wrong (when a secret is
 * configured) → 401 with the library's reason; body not JSON → 400; a
 * `webhook-id` already processed → 200 `{"duplicate":true}`; otherwise the
 * delivery is recorded in `received` and answered 200 `{"ok":true}`. Every
 * request gets one log line.
 *
 * Rejects with the listen error (e.g. `EADDRINUSE`) when the port is taken,
 * and with {@link ReceiverConfigError} for invalid options.
 */
export async function startReceiver(options: ReceiverOptions = {}): Promise<Receiver> {
  const hooks = verifiers(options.secret);
  const failStatus = options.failStatus ?? 503;
  if (!Number.isInteger(failStatus) || failStatus < 100 || failStatus > 599)
    throw new ReceiverConfigError(`fail status must be an HTTP status, got ${failStatus}`);
  let failRate = checkRate(options.failRate ?? 0);
  const random = options.random ?? Math.random;
  const log = options.log ?? (() => {});
  const received: ReceivedDelivery[] = [];
  // webhook-id → requests seen, and the ids already processed. Both are
  // checked and updated synchronously, so concurrent retries cannot both pass.
  const requestsPerId = new Map<string, number>();
  const processed = new Set<string>();

  const line = (at: Date, id: string | undefined, eventType: string | undefined, verification: string, outcome: string): void => {
    log(`${at.toISOString()}  ${id ?? '(no webhook-id)'}  ${eventType ?? '-'}  ${verification}  ${outcome}`);
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const at = new Date();
    const id = header(req, 'webhook-id');
    if (req.method !== 'POST') {
      send(res, 405, { error: 'deliveries are POSTed' }, { allow: 'POST' });
      return;
    }
    const raw = await readBody(req);
    if (raw === undefined) {
      line(at, id, undefined, '-', `413 body over ${MAX_BODY_BYTES} bytes`);
      // Close the connection: the rest of the oversized body is not read.
      send(res, 413, { error: 'body too large' }, { connection: 'close' });
      return;
    }
    const attempt = id === undefined ? 1 : (requestsPerId.get(id) ?? 0) + 1;
    if (id !== undefined) requestsPerId.set(id, attempt);
    const tryNo = `try ${attempt}`;

    // Before any processing, so a failed request is redelivered and handled on a later try.
    if (failRate > 0 && random() < failRate) {
      line(at, id, undefined, '-', `${failStatus} simulated failure (fail rate ${Math.round(failRate * 100)}%, ${tryNo})`);
      send(res, failStatus, { error: 'simulated failure' });
      return;
    }

    // Verify the raw bytes before parsing: re-serialised JSON would not match the signature.
    const rawBody = raw.toString('utf8');
    let verifiedBySecret: number | undefined;
    if (hooks.length > 0) {
      // Only the three signature headers, as single strings, are what the library reads.
      const signed: Record<string, string> = {};
      for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
        const value = header(req, name);
        if (value !== undefined) signed[name] = value;
      }
      let reason = 'signature not verified';
      for (const [i, hook] of hooks.entries()) {
        try {
          // The library also enforces the ±5 minute timestamp tolerance.
          hook.verify(rawBody, signed, { jsonParse: false });
          verifiedBySecret = i + 1;
          break;
        } catch (e) {
          reason = e instanceof Error ? e.message : String(e);
        }
      }
      if (verifiedBySecret === undefined) {
        line(at, id, undefined, 'REJECTED', `401 ${reason} (${tryNo})`);
        send(res, 401, { error: reason });
        return;
      }
    } else if (id === undefined) {
      // Even unverified, the id is needed to dedupe.
      line(at, id, undefined, 'unverified', '400 missing webhook-id header');
      send(res, 400, { error: 'missing webhook-id header' });
      return;
    }
    // From here on the id is present: verification requires it, and so does the branch above.
    const webhookId = id ?? '';
    const verification =
      verifiedBySecret === undefined
        ? 'UNVERIFIED (no secret configured)'
        : hooks.length > 1
          ? `verified (secret ${verifiedBySecret} of ${hooks.length})`
          : 'verified';

    let body: unknown;
    try {
      body = JSON.parse(rawBody);
    } catch {
      line(at, webhookId, undefined, verification, `400 body is not JSON (${tryNo})`);
      send(res, 400, { error: 'body is not JSON' });
      return;
    }
    const fields = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
    const eventType = typeof fields.eventType === 'string' ? fields.eventType : undefined;

    if (processed.has(webhookId)) {
      line(at, webhookId, eventType, verification, `200 duplicate, already processed (${tryNo})`);
      send(res, 200, { ok: true, duplicate: true });
      return;
    }
    processed.add(webhookId);
    received.push({
      receivedAt: at,
      webhookId,
      webhookTimestamp: header(req, 'webhook-timestamp'),
      traceId: header(req, 'x-trace-id'),
      verified: verifiedBySecret !== undefined,
      verifiedBySecret,
      attempt,
      path: req.url ?? '/',
      deliveryId: typeof fields.deliveryId === 'string' ? fields.deliveryId : undefined,
      eventType,
      payload: fields.payload,
      rawBody,
    });
    const trace = header(req, 'x-trace-id');
    line(at, webhookId, eventType, verification, `200 ok (${tryNo})${trace ? `  trace=${trace}` : ''}  payload=${preview(fields.payload)}`);
    send(res, 200, { ok: true });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      // A stream error mid-body: answer if still possible, never crash the demo.
      log(`${new Date().toISOString()}  error: ${e instanceof Error ? e.message : String(e)}`);
      if (!res.headersSent) send(res, 500, { error: 'receiver error' });
      else res.end();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  let stopped: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    received,
    get failRate() {
      return failRate;
    },
    setFailRate(rate: number) {
      failRate = checkRate(rate);
    },
    stop() {
      stopped ??= new Promise<void>((resolve, reject) => {
        server.close((e) => (e ? reject(e) : resolve()));
        // Keep-alive sockets (fetch keeps them) would otherwise hold close() open.
        server.closeAllConnections();
      });
      return stopped;
    },
  };
}
