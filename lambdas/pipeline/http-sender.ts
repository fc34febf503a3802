/**
 * One outbound POST (docs/behaviour.md#deadlines-and-body-read): 10 s deadline, redirects
 * not followed, the response body read as at most a 2 KiB prefix under its own
 * 2 s deadline, and the connection pinned to an address that was checked
 * (no DNS rebinding between the check and the connect).
 */
import type { LookupFunction } from 'node:net';
import { Agent, request } from 'undici';
import { SEND_LIMITS } from '../contract/limits';

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

/** Sends one POST; never throws. */
export type Sender = (input: { url: URL; headers: Record<string, string>; body: string; pinned: PinnedAddress }) => Promise<SendResult>;

const agents = new Map<string, Agent>();
/** The dispatcher's batch size: every record of a batch can hold its own connection. */
const MAX_CONNECTIONS_PER_TARGET = 25;
const MAX_AGENTS = 200;

/** A keep-alive agent whose every connection goes to `pinned`, whatever DNS says later. */
function agentFor(host: string, pinned: PinnedAddress, limits: SendLimits): Agent {
  const key = `${host}|${pinned.address}|${limits.deadlineMs}`;
  let agent = agents.get(key);
  if (!agent) {
    const lookup: LookupFunction = (_hostname, options, callback) => {
      if (options && (options as { all?: boolean }).all) (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [pinned]);
      else callback(null, pinned.address, pinned.family);
    };
    // As many connections as a batch has records: the deadline runs from the send, so no
    // record of a batch may wait for another's connection (a slow receiver would time it out unsent).
    agent = new Agent({ connect: { lookup, timeout: limits.deadlineMs }, keepAliveTimeout: 30_000, connections: MAX_CONNECTIONS_PER_TARGET });
    if (agents.size >= MAX_AGENTS) {
      const [oldestKey, oldest] = agents.entries().next().value as [string, Agent];
      agents.delete(oldestKey);
      void oldest.close().catch(() => undefined);
    }
    agents.set(key, agent);
  }
  return agent;
}

/** Names a transport failure briefly (stored as the attempt's failure reason). */
export function failureReason(error: unknown): string {
  const e = error as { name?: string; code?: string; cause?: { code?: string } };
  const code = e?.code ?? e?.cause?.code ?? '';
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError' || /TIMEOUT/.test(code)) return 'timeout';
  if (code === 'ECONNREFUSED') return 'connection_refused';
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE') return 'connection_reset';
  if (/^ERR_TLS|CERT|SSL/.test(code)) return `tls_error: ${code}`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'dns_failure';
  return code ? `network_error: ${code}` : 'network_error';
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

/** A sender with the given limits (tests shorten them; production uses {@link SEND_LIMITS}). */
export function createHttpSender(limits: SendLimits = SEND_LIMITS): Sender {
  return async ({ url, headers, body, pinned }) => {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    try {
      const res = await request(url, {
        method: 'POST',
        headers,
        body,
        dispatcher: agentFor(url.host, pinned, limits),
        signal: AbortSignal.timeout(limits.deadlineMs),
        headersTimeout: limits.deadlineMs,
        bodyTimeout: limits.bodyReadMs,
      });
      const prefix = await readPrefix(res.body, limits.bodyCapBytes, limits.bodyReadMs);
      return { kind: 'response', status: res.statusCode, body: prefix, durationMs: elapsed() };
    } catch (error) {
      return { kind: 'error', reason: failureReason(error), durationMs: elapsed() };
    }
  };
}

/** The production sender (undici, the published SEND_LIMITS). */
export const httpSender: Sender = createHttpSender();
