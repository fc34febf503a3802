/**
 * One outbound POST (docs/behaviour.md#deadlines-and-body-read): 10 s deadline, redirects
 * not followed, the response body read as at most a 2 KiB prefix under its own
 * 2 s deadline, and the connection pinned to an address that was checked
 * (no DNS rebinding between the check and the connect).
 *
 * The container's sockets are a shared resource (docs/behaviour.md#sender-limits): an idle
 * keep-alive socket lives at most {@link KEEP_ALIVE_MS} whatever the receiver's `Keep-Alive`
 * header asks, and all agents together hold at most {@link MAX_SOCKETS} sockets, so no tenant's
 * receivers can fill the container's file descriptors and fail everyone else's deliveries.
 */
import type { LookupFunction } from 'node:net';
import { Agent, buildConnector, request } from 'undici';
import { SEND_LIMITS } from '../contract/limits';
import { serviceFaultReason } from '../domain/delivery-lifecycle';

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

/** What one POST observed. */
export type SendResult =
  | { kind: 'response'; status: number; body: string | null; durationMs: number }
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
 * asks for more (undici would honour up to 10 minutes).
 */
export const KEEP_ALIVE_MS = 4_000;

/**
 * Sockets all of a sender's agents may hold together: a Lambda container has 1,024 file
 * descriptors, and the AWS SDK clients, the runtime and the logs need theirs. A batch needs at
 * most one socket per record, so the rest only ever holds idle keep-alive sockets.
 */
export const MAX_SOCKETS = 256;

/** The dispatcher's batch size: every record of a batch can hold its own connection. */
const MAX_CONNECTIONS_PER_TARGET = 25;
const MAX_AGENTS = 200;

/** The socket errors that mean the container (not the receiver) is out of a resource. */
const LOCAL_RESOURCE_CODES = new Set(['EMFILE', 'ENFILE', 'ENOBUFS', 'ENOMEM', 'EADDRNOTAVAIL']);

/** Code of the error a connect fails with when no socket came free under {@link MAX_SOCKETS} in time. */
const SOCKET_LIMIT_CODE = 'ESOCKETLIMIT';

/** Options of {@link createHttpSender}; production uses the defaults. */
export interface SenderOptions {
  /** @default {@link MAX_SOCKETS} */
  readonly maxSockets?: number;
  /** @default {@link KEEP_ALIVE_MS} */
  readonly keepAliveMs?: number;
  /**
   * Opens a socket to `pinned` (tests inject faults such as EMFILE here).
   * @default undici's connector, its lookup answering `pinned`
   */
  readonly connector?: (pinned: PinnedAddress, connectTimeoutMs: number) => buildConnector.connector;
}

/** Names a transport failure briefly (stored as the attempt's failure reason). */
export function failureReason(error: unknown): string {
  const e = error as { name?: string; code?: string; cause?: { code?: string } };
  const code = e?.code ?? e?.cause?.code ?? '';
  if (code === SOCKET_LIMIT_CODE) return serviceFaultReason('socket_limit');
  if (LOCAL_RESOURCE_CODES.has(code)) return serviceFaultReason(code);
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError' || /TIMEOUT/.test(code)) return 'timeout';
  if (code === 'ECONNREFUSED') return 'connection_refused';
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE') return 'connection_reset';
  if (/^ERR_TLS|CERT|SSL/.test(code)) return `tls_error: ${code}`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'dns_failure';
  return code ? `network_error: ${code}` : 'network_error';
}

/** The default connector: undici's, with a lookup that always answers the pinned address. */
function pinnedConnector(pinned: PinnedAddress, connectTimeoutMs: number): buildConnector.connector {
  const lookup: LookupFunction = (_hostname, options, callback) => {
    if (options && (options as { all?: boolean }).all) (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [pinned]);
    else callback(null, pinned.address, pinned.family);
  };
  return buildConnector({ lookup, timeout: connectTimeoutMs });
}

/** A counting semaphore over the sockets of every agent of one sender. */
class SocketBudget {
  private open = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly max: number) {}

  /** True when a connect is waiting for a socket to close. */
  get contended(): boolean {
    return this.waiting.length > 0;
  }

  /** Takes a slot now, or waits up to `waitMs` for one (after asking `makeRoom` to free one); false when none came. */
  acquire(waitMs: number, makeRoom: () => void): Promise<boolean> {
    if (this.open < this.max) {
      this.open++;
      return Promise.resolve(true);
    }
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

/** An agent and what the sender knows of it. */
interface AgentEntry {
  readonly key: string;
  readonly agent: Agent;
  /** Requests of ours using the agent right now. */
  inFlight: number;
  /** Sockets it holds (connected, not yet closed). */
  sockets: number;
}

/** A pool of keep-alive agents, one per (host, pinned address), under one socket budget. */
class AgentPool {
  /** In least-recently-used order: every use moves its entry to the end. */
  private readonly agents = new Map<string, AgentEntry>();
  private readonly budget: SocketBudget;

  constructor(
    private readonly limits: SendLimits,
    private readonly options: Required<SenderOptions>,
  ) {
    this.budget = new SocketBudget(options.maxSockets);
  }

  /** The agent for `host` pinned to `pinned`, marked in flight until `done` is called. */
  use(host: string, pinned: PinnedAddress): { agent: Agent; done: () => void } {
    const key = `${host}|${pinned.address}`;
    let entry = this.agents.get(key);
    if (entry) this.agents.delete(key);
    else {
      if (this.agents.size >= MAX_AGENTS) this.evict(this.leastRecentlyUsed(true) ?? this.leastRecentlyUsed(false));
      entry = this.create(key, pinned);
    }
    this.agents.set(key, entry);
    entry.inFlight++;
    const used = entry;
    let finished = false;
    return {
      agent: used.agent,
      done: () => {
        if (finished) return;
        finished = true;
        used.inFlight--;
        // A connect is waiting for a socket: this agent's are idle now, so it can give them back.
        if (used.inFlight === 0 && this.budget.contended) this.makeRoom();
      },
    };
  }

  private create(key: string, pinned: PinnedAddress): AgentEntry {
    const open = this.options.connector(pinned, this.limits.deadlineMs);
    // Wait for a socket at most half the deadline, so a full container fails as the service's own
    // fault (retried, streak unchanged) before the deadline would blame the receiver.
    const waitMs = Math.floor(this.limits.deadlineMs / 2);
    const entry: AgentEntry = { key, inFlight: 0, sockets: 0, agent: undefined as unknown as Agent };
    const connect: buildConnector.connector = (opts, callback) => {
      void this.budget.acquire(waitMs, () => this.makeRoom()).then((granted) => {
        if (!granted) {
          callback(Object.assign(new Error(`no socket came free under the container's limit of ${this.options.maxSockets}`), { code: SOCKET_LIMIT_CODE }), null);
          return;
        }
        let released = false;
        const release = () => {
          if (released) return;
          released = true;
          entry.sockets--;
          this.budget.release();
        };
        entry.sockets++;
        try {
          open(opts, (error, socket) => {
            if (error || !socket) {
              release();
              callback(error ?? new Error('connect failed'), null);
              return;
            }
            socket.once('close', release);
            callback(null, socket);
          });
        } catch (error) {
          release();
          callback(error as Error, null);
        }
      });
    };
    // As many connections as a batch has records: the deadline runs from the send, so no
    // record of a batch may wait for another's connection (a slow receiver would time it out unsent).
    (entry as { agent: Agent }).agent = new Agent({
      connect,
      keepAliveTimeout: this.options.keepAliveMs,
      // Caps the receiver's `Keep-Alive: timeout=` hint too.
      keepAliveMaxTimeout: this.options.keepAliveMs,
      connections: MAX_CONNECTIONS_PER_TARGET,
    });
    return entry;
  }

  /** The least recently used agent, among those with no request in flight (and some socket) when `idleOnly`. */
  private leastRecentlyUsed(idleOnly: boolean): AgentEntry | undefined {
    for (const entry of this.agents.values()) if (!idleOnly || (entry.inFlight === 0 && entry.sockets > 0)) return entry;
    return undefined;
  }

  /** Closes the least recently used idle agent, so its sockets come back to the budget. */
  private makeRoom(): void {
    this.evict(this.leastRecentlyUsed(true));
  }

  private evict(entry: AgentEntry | undefined): void {
    if (!entry) return;
    this.agents.delete(entry.key);
    // Graceful: a request still in flight on it finishes first.
    void entry.agent.close().catch(() => undefined);
  }
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
    return Buffer.concat(chunks).subarray(0, cap).toString('utf8');
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
    // Whatever is left is never read: memory stays bounded whatever the receiver sends.
    body.destroy();
    read.catch(() => undefined);
  }
}

/**
 * A sender with the given limits (tests shorten them; production uses {@link SEND_LIMITS}) and its
 * own agents and socket budget: the production {@link httpSender} is the container's only one.
 */
export function createHttpSender(limits: SendLimits = SEND_LIMITS, options: SenderOptions = {}): Sender {
  const pool = new AgentPool(limits, {
    maxSockets: options.maxSockets ?? MAX_SOCKETS,
    keepAliveMs: options.keepAliveMs ?? KEEP_ALIVE_MS,
    connector: options.connector ?? pinnedConnector,
  });
  return async ({ url, headers, body, pinned, spentMs = 0 }) => {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    // What name resolution left of the attempt's deadline.
    const deadlineMs = Math.max(1, limits.deadlineMs - spentMs);
    const { agent, done } = pool.use(url.host, pinned);
    try {
      const res = await request(url, {
        method: 'POST',
        headers,
        body,
        dispatcher: agent,
        signal: AbortSignal.timeout(deadlineMs),
        headersTimeout: deadlineMs,
        bodyTimeout: limits.bodyReadMs,
      });
      const prefix = await readPrefix(res.body, limits.bodyCapBytes, limits.bodyReadMs);
      return { kind: 'response', status: res.statusCode, body: prefix, durationMs: elapsed() };
    } catch (error) {
      return { kind: 'error', reason: failureReason(error), durationMs: elapsed() };
    } finally {
      done();
    }
  };
}

/** The production sender (undici, the published SEND_LIMITS). */
export const httpSender: Sender = createHttpSender();
