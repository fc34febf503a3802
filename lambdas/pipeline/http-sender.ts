/**
 * One outbound POST (docs/behaviour.md#deadlines-and-body-read): 10 s deadline, redirects
 * not followed, the response body read as at most a 2 KiB prefix under its own
 * 2 s deadline, and the connection pinned to an address that was checked
 * (no DNS rebinding between the check and the connect).
 *
 * Node's own `http`/`https` (no HTTP client library in the bundle): the request's `lookup`
 * answers the pinned address, so the host name is never resolved again, while TLS still
 * sends and verifies the host name (SNI and certificate).
 *
 * The container's sockets are a shared resource (docs/behaviour.md#sender-limits): an idle
 * keep-alive socket lives at most {@link KEEP_ALIVE_MS} whatever the receiver's `Keep-Alive`
 * header asks, and all receivers together hold at most {@link MAX_SOCKETS} sockets, so no tenant's
 * receivers can fill the container's file descriptors and fail everyone else's deliveries.
 */
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { LookupFunction, NetConnectOpts, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { ConnectionOptions } from 'node:tls';
import { SEND_LIMITS } from '../contract/limits';
import { isHttpStatus, serviceFaultReason } from '../domain/delivery-lifecycle';

/** Limits of one attempt. */
export interface SendLimits {
  readonly deadlineMs: number;
  readonly bodyReadMs: number;
  readonly bodyCapBytes: number;
}

/** A resolved, checked address to connect to. */
export interface PinnedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/**
 * What one POST observed: a response (its status as the receiver sent it, even outside 100–599;
 * `upgrade` when it switched protocols), or an error without one.
 */
export type SendResult =
  | { kind: 'response'; status: number; body: string | null; durationMs: number; upgrade?: true }
  | { kind: 'error'; reason: string; durationMs: number };

/** One POST to send. */
export interface SendInput {
  readonly url: URL;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly pinned: PinnedAddress;
  /** Time of the attempt's deadline already spent before the send (name resolution). @default 0 */
  readonly spentMs?: number;
}

/** Sends one POST; never throws. */
export type Sender = (input: SendInput) => Promise<SendResult>;

/**
 * Longest an idle keep-alive socket is kept, whether or not the receiver's `Keep-Alive: timeout=`
 * asks for more (Node's agent only ever shortens its own timeout from that hint).
 */
export const KEEP_ALIVE_MS = 4_000;

/**
 * Sockets the sender may hold, all receivers together: a Lambda container has 1,024 file
 * descriptors, and the AWS SDK clients, the runtime and the logs need theirs. A batch needs at
 * most one socket per record, so the rest only ever holds idle keep-alive sockets.
 */
export const MAX_SOCKETS = 256;

/**
 * Connections to one receiver (host, port and pinned address): the dispatcher's batch size, so
 * every record of a batch can hold its own connection (the deadline runs from the send, so no
 * record may wait for another's connection: a slow receiver would time it out unsent). Idle ones
 * are kept up to the same number, for the next batch.
 */
export const MAX_CONNECTIONS_PER_TARGET = 25;

/** The socket errors that mean the container (not the receiver) is out of a resource. */
const LOCAL_RESOURCE_CODES = new Set(['EMFILE', 'ENFILE', 'ENOBUFS', 'ENOMEM', 'EADDRNOTAVAIL']);

/** Code of the error a connect fails with when no socket came free under {@link MAX_SOCKETS} in time. */
const SOCKET_LIMIT_CODE = 'ESOCKETLIMIT';

/** What a {@link Connector} is given: Node's connect options (host, port, `servername`, and the `lookup` answering the pinned address). */
type ConnectOptions = NetConnectOpts & ConnectionOptions;

/** Opens one socket, or fails with the connect's error (`code` such as EMFILE). */
export type Connector = (options: ConnectOptions, callback: (error: Error | null, socket: Duplex | null) => void) => void;

/** Options of {@link createHttpSender}; production uses the defaults. */
export interface SenderOptions {
  /** @default {@link MAX_SOCKETS} */
  readonly maxSockets?: number;
  /** @default {@link KEEP_ALIVE_MS} */
  readonly keepAliveMs?: number;
  /**
   * Opens a socket to `pinned` (tests inject faults such as EMFILE here).
   * @default the agent's own (`net.connect`, or `tls.connect` with TLS session reuse), its lookup answering `pinned`
   */
  readonly connector?: (pinned: PinnedAddress, connectTimeoutMs: number) => Connector;
}

/** Names a transport failure briefly (stored as the attempt's failure reason). */
function failureReason(error: unknown): string {
  const e = error as { name?: string; code?: string; cause?: { code?: string } };
  const code = e?.code ?? e?.cause?.code ?? '';
  if (code === SOCKET_LIMIT_CODE) return serviceFaultReason('socket_limit');
  if (LOCAL_RESOURCE_CODES.has(code)) return serviceFaultReason(code);
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError' || /TIMEOUT/.test(code)) return 'timeout';
  if (code === 'ECONNREFUSED') return 'connection_refused';
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'connection_reset';
  if (/^ERR_TLS|CERT|SSL/.test(code)) return `tls_error: ${code}`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'dns_failure';
  return code ? `network_error: ${code}` : 'network_error';
}

/** A lookup that always answers the pinned address: the name is never resolved again after its check. */
function pinnedLookup(pinned: PinnedAddress): LookupFunction {
  return (_hostname, options, callback) => {
    // `all` is asked when happy eyeballs (autoSelectFamily) is on.
    if ((options as { all?: boolean } | undefined)?.all) (callback as unknown as (e: null, a: PinnedAddress[]) => void)(null, [pinned]);
    else callback(null, pinned.address, pinned.family);
  };
}

/** A counting semaphore over every socket of one sender. */
class SocketBudget {
  private open = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly max: number) {}

  /** True when a connect is waiting for a socket to close. */
  get contended(): boolean {
    return this.waiting.length > 0;
  }

  /** Takes a slot if one is free. */
  tryAcquire(): boolean {
    if (this.open >= this.max) return false;
    this.open++;
    return true;
  }

  /** Waits up to `waitMs` for a slot (after asking `makeRoom` to free one); false when none came. */
  wait(waitMs: number, makeRoom: () => void): Promise<boolean> {
    return new Promise((resolve) => {
      const grant = () => {
        clearTimeout(timer);
        this.open++;
        resolve(true);
      };
      const timer = setTimeout(() => {
        const i = this.waiting.indexOf(grant);
        if (i >= 0) this.waiting.splice(i, 1);
        resolve(false);
      }, waitMs);
      this.waiting.push(grant);
      makeRoom();
    });
  }

  /** Gives a slot back (a socket closed, or its connect failed) to the first waiter, if any. */
  release(): void {
    this.open--;
    this.waiting.shift()?.();
  }
}

/** Request options of ours: the pinned address travels with them to the agent (its pool key and its connect). */
type PinnedRequestOptions = RequestOptions & { readonly pinned: PinnedAddress };

/** What the agents of one sender share. */
interface Pool {
  readonly budget: SocketBudget;
  /** Wait for a socket at most this long (half the deadline). */
  readonly waitMs: number;
  readonly connector: SenderOptions['connector'];
  readonly deadlineMs: number;
  /** Closes the least recently used idle socket, so its slot comes back to the budget. */
  makeRoom(): void;
}

/**
 * A keep-alive agent whose sockets count against the sender's budget, pooled by host, port and
 * pinned address (a name that now resolves elsewhere never reuses a socket to its old address).
 *
 * Node's own `maxTotalSockets` is not the budget: it is per agent (http and https would each have
 * one), and at its limit it queues the request inside the agent, where no idle socket of another
 * receiver is closed to make room and the wait is bounded only by the deadline, so a full container
 * would time out deliveries as the receiver's fault.
 */
function pinnedAgent<A extends typeof HttpAgent>(Base: A, pool: Pool, keepAliveMs: number): InstanceType<A> {
  const Pinned = class extends (Base as typeof HttpAgent) {
    override getName(options?: Partial<PinnedRequestOptions>): string {
      return `${super.getName(options)}|${options?.pinned?.address ?? ''}`;
    }

    override createConnection(options: RequestOptions, oncreate?: (error: Error | null, socket: Duplex) => void): undefined {
      const done = oncreate as (error: Error | null, socket?: Duplex) => void;
      const pinned = (options as PinnedRequestOptions).pinned;
      const connect = () => {
        let released = false;
        const release = () => {
          if (released) return;
          released = true;
          pool.budget.release();
        };
        const open: Connector = pool.connector
          ? pool.connector(pinned, pool.deadlineMs)
          : (opts, callback) => callback(null, super.createConnection(opts) as Duplex);
        try {
          open(options as ConnectOptions, (error, socket) => {
            if (error || !socket) {
              release();
              done(error ?? new Error('connect failed'));
              return;
            }
            socket.once('close', release);
            done(null, socket);
          });
        } catch (error) {
          release();
          done(error as Error);
        }
      };
      // With a slot free the connect starts now, so the agent counts the socket at once and its
      // per-receiver cap holds for requests sent in the same tick.
      if (pool.budget.tryAcquire()) connect();
      else
        void pool.budget
          .wait(pool.waitMs, () => pool.makeRoom())
          .then((granted) => {
            if (granted) connect();
            else done(Object.assign(new Error(`no socket came free under the container's limit of sockets`), { code: SOCKET_LIMIT_CODE }));
          });
      return undefined;
    }
  };
  return new Pinned({
    keepAlive: true,
    // Idle (free) sockets close after this, and a receiver's `Keep-Alive: timeout=` can only shorten it.
    timeout: keepAliveMs,
    maxSockets: MAX_CONNECTIONS_PER_TARGET,
    maxFreeSockets: MAX_CONNECTIONS_PER_TARGET,
    // The hottest socket is reused; the others idle out.
    scheduling: 'lifo',
  }) as InstanceType<A>;
}

/**
 * The decoded text of `bytes` cut to whole characters of at most `cap` bytes as stored (UTF-8):
 * an invalid byte decodes to U+FFFD, three bytes stored, so cutting the raw bytes alone would let
 * 2 KiB of invalid input store as 6 KiB (docs/behaviour.md#deadlines-and-body-read).
 */
function utf8Prefix(bytes: Buffer, cap: number): string {
  const text = bytes.subarray(0, cap).toString('utf8');
  if (Buffer.byteLength(text, 'utf8') <= cap) return text;
  let size = 0;
  let end = 0;
  for (const char of text) {
    const n = Buffer.byteLength(char, 'utf8');
    if (size + n > cap) break;
    size += n;
    end += char.length;
  }
  return text.slice(0, end);
}

/** Reads at most `cap` bytes of a body within `ms`; null when unreadable or timed out. */
async function readPrefix(body: AsyncIterable<Buffer> & { destroy(): unknown }, cap: number, ms: number): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ms);
  });
  const read = (async () => {
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= cap) break;
    }
    return 'done' as const;
  })();
  try {
    const outcome = await Promise.race([read, deadline]);
    if (outcome === 'timeout') return null;
    return utf8Prefix(Buffer.concat(chunks), cap);
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
    // Whatever is left is never read: memory stays bounded whatever the receiver sends. A body read
    // to its end keeps its socket for keep-alive; one cut short closes it.
    body.destroy();
    read.catch(() => undefined);
  }
}

/** What a POST got back: a response's headers, or a protocol switch (its socket handed over by Node). */
type Answer =
  | { readonly kind: 'response'; readonly res: IncomingMessage }
  | { readonly kind: 'upgrade'; readonly res: IncomingMessage; readonly socket: Duplex };

/**
 * Sends the POST; resolves at the response's headers or at an upgrade. Without an `upgrade`
 * listener Node would destroy the socket of a `101` and emit nothing at all, neither a response
 * nor an error.
 */
function post(options: PinnedRequestOptions, https: boolean, body: string): { req: ClientRequest; answer: Promise<Answer> } {
  let req!: ClientRequest;
  const answer = new Promise<Answer>((resolve, reject) => {
    req = (https ? httpsRequest : httpRequest)(options, (res) => resolve({ kind: 'response', res }));
    req.on('upgrade', (res: IncomingMessage, socket: Duplex) => resolve({ kind: 'upgrade', res, socket }));
    // Stays attached: a late error (after the response) must never go unhandled.
    req.on('error', reject);
    req.end(body);
  });
  return { req, answer };
}

/**
 * The status of a status line Node's parser refused (`HTTP/1.1 0`, `HTTP/1.1 99`, `HTTP/1.1 1000`:
 * not three digits), read from the bytes the parse error carries; null for any other error.
 */
function refusedStatus(error: unknown): number | null {
  const e = error as { code?: string; rawPacket?: unknown };
  if (e?.code !== 'HPE_INVALID_STATUS' || !Buffer.isBuffer(e.rawPacket)) return null;
  const digits = /^HTTP\/\d(?:\.\d)? +(\d{1,6})[ \r\n]/.exec(e.rawPacket.subarray(0, 64).toString('latin1'))?.[1];
  return digits === undefined ? null : Number(digits);
}

/**
 * A sender with the given limits (tests shorten them; production uses {@link SEND_LIMITS}) and its
 * own agents and socket budget: the production {@link httpSender} is the container's only one.
 */
export function createHttpSender(limits: SendLimits = SEND_LIMITS, options: SenderOptions = {}): Sender {
  const lastUsed = new WeakMap<Duplex, number>();
  const agents: HttpAgent[] = [];
  const pool: Pool = {
    budget: new SocketBudget(options.maxSockets ?? MAX_SOCKETS),
    // At most half the deadline, so a full container fails as the service's own fault (retried,
    // streak unchanged) before the deadline would blame the receiver.
    waitMs: Math.floor(limits.deadlineMs / 2),
    connector: options.connector,
    deadlineMs: limits.deadlineMs,
    makeRoom() {
      let oldest: Duplex | undefined;
      for (const agent of agents)
        for (const sockets of Object.values(agent.freeSockets))
          for (const socket of sockets ?? [])
            if (!socket.destroyed && (!oldest || (lastUsed.get(socket) ?? 0) < (lastUsed.get(oldest) ?? 0))) oldest = socket;
      oldest?.destroy();
    },
  };
  const keepAliveMs = options.keepAliveMs ?? KEEP_ALIVE_MS;
  const http = pinnedAgent(HttpAgent, pool, keepAliveMs);
  const https = pinnedAgent(HttpsAgent, pool, keepAliveMs);
  for (const agent of [http, https]) {
    agents.push(agent);
    // After the agent's own listener: the socket is idle in `freeSockets` now (or closed).
    agent.on('free', (socket: Socket) => {
      lastUsed.set(socket, performance.now());
      // A connect is waiting for a slot: idle sockets give theirs back.
      if (pool.budget.contended) pool.makeRoom();
    });
  }

  return async ({ url, headers, body, pinned, spentMs = 0 }) => {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    // What name resolution left of the attempt's deadline; it covers connect, headers and body.
    const deadlineMs = Math.max(1, limits.deadlineMs - spentMs);
    const secure = url.protocol === 'https:';
    const { req, answer } = post(
      {
        method: 'POST',
        // Without an IPv6 literal's brackets; TLS sends and verifies this name (never for an IP literal).
        host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
        port: url.port || (secure ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        headers,
        agent: secure ? https : http,
        lookup: pinnedLookup(pinned),
        pinned,
      },
      secure,
      body,
    );
    // The status, once the response's headers came: a deadline during the body read keeps it.
    let status: number | null = null;
    const exchange = (async (): Promise<SendResult> => {
      try {
        const got = await answer;
        if (got.kind === 'upgrade') {
          // The connection now speaks another protocol: it is closed, never read, never reused.
          got.socket.destroy();
          return { kind: 'response', status: got.res.statusCode ?? 101, body: null, upgrade: true, durationMs: elapsed() };
        }
        const res = got.res;
        status = res.statusCode ?? 0;
        if (status === 101 || !isHttpStatus(status)) {
          // A switch without an upgrade, or nonsense: nothing after it is HTTP, so the socket is not kept.
          res.socket?.destroy();
          return { kind: 'response', status, body: null, durationMs: elapsed() };
        }
        const prefix = await readPrefix(res, limits.bodyCapBytes, limits.bodyReadMs);
        return { kind: 'response', status, body: prefix, durationMs: elapsed() };
      } catch (error) {
        const refused = refusedStatus(error);
        if (refused !== null) return { kind: 'response', status: refused, body: null, durationMs: elapsed() };
        return { kind: 'error', reason: failureReason(error), durationMs: elapsed() };
      }
    })();
    // The deadline decides the attempt above the socket layer: whatever the socket does or fails to
    // emit (a protocol switch Node swallows, a destroy that never completes), the attempt settles
    // here, and only then is the request destroyed.
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'deadline'>((resolve) => {
      timer = setTimeout(() => resolve('deadline'), deadlineMs);
    });
    const outcome = await Promise.race([exchange, deadline]);
    clearTimeout(timer);
    if (outcome !== 'deadline') return outcome;
    req.destroy(Object.assign(new Error(`no complete response within ${deadlineMs} ms`), { name: 'TimeoutError' }));
    // Headers came but the body did not finish: the status stands, the body is not kept.
    return status === null
      ? { kind: 'error', reason: 'timeout', durationMs: elapsed() }
      : { kind: 'response', status, body: null, durationMs: elapsed() };
  };
}

/** The production sender (Node's https, the published SEND_LIMITS). */
export const httpSender: Sender = createHttpSender();
