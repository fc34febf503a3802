/**
 * A bare HTTP/1.1 client on a TCP socket, for requests `fetch` refuses to send:
 * duplicate or invalid header lines, odd methods and request targets, broken
 * chunking, bytes that are not UTF-8. One request per connection.
 */
import { connect } from 'node:net';

/** An answer as the fuzz oracle reads it (the same shape for fetch and raw sockets). */
export interface WireResponse {
  readonly status: number;
  /** Header names lower-cased; repeated headers joined with `, `. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

/** Thrown when the server closed or stalled without a parsable answer. */
export class NoAnswerError extends Error {
  override readonly name = 'NoAnswerError';
}

/**
 * Sends `request` (the complete bytes: request line, headers, blank line, body)
 * and parses the one response. `Connection: close` is the caller's to add, or
 * the server's keep-alive holds the socket until `timeoutMs`.
 */
export function rawRequest(port: number, request: Buffer, timeoutMs = 10_000): Promise<WireResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (error?: Error) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      const parsed = error ? null : parseResponse(Buffer.concat(chunks));
      if (parsed) resolve(parsed);
      else
        reject(
          error ??
            new NoAnswerError(
              `no parsable answer (${Buffer.concat(chunks).length} bytes: ${JSON.stringify(Buffer.concat(chunks).toString('latin1').slice(0, 200))})`,
            ),
        );
    };
    socket.setTimeout(timeoutMs, () => finish(new NoAnswerError(`no answer within ${timeoutMs} ms`)));
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      // Done once the declared body is complete: the server need not close first.
      const parsed = parseResponse(Buffer.concat(chunks));
      if (parsed && parsed.complete) finish();
    });
    socket.on('end', () => finish());
    // A reset after the answer is fine (the server may close while we still write a refused body).
    socket.on('error', (e) => (chunks.length ? finish() : finish(e)));
    socket.write(request);
  });
}

function parseResponse(data: Buffer): (WireResponse & { complete: boolean }) | null {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const lines = data.subarray(0, end).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
  if (!m) return null;
  // An interim answer (100 Continue): the final one follows.
  if (m[1]!.startsWith('1')) return parseResponse(data.subarray(end + 4));
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    if (i <= 0) continue;
    const name = line.slice(0, i).trim().toLowerCase();
    const value = line.slice(i + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  let body = data.subarray(end + 4);
  let complete = false;
  if (headers['content-length'] !== undefined) {
    const length = Number(headers['content-length']);
    complete = body.length >= length;
    body = body.subarray(0, length);
  } else if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const decoded = dechunk(body);
    complete = decoded !== null;
    body = decoded ?? Buffer.alloc(0);
  }
  return { status: Number(m[1]), headers, body, complete };
}

/** A complete chunked body decoded; null while incomplete. */
function dechunk(data: Buffer): Buffer | null {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = data.indexOf('\r\n', at);
    if (eol < 0) return null;
    const size = parseInt(data.subarray(at, eol).toString('latin1'), 16);
    if (!Number.isFinite(size)) return null;
    if (size === 0) return Buffer.concat(parts);
    if (data.length < eol + 2 + size + 2) return null;
    parts.push(data.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

/** Builds request bytes from parts; header values may hold any bytes (latin1 strings or Buffers). */
export function buildRawRequest(parts: {
  method: string;
  target: string;
  headers: readonly (readonly [string, string | Buffer])[];
  body?: Buffer;
  version?: string;
}): Buffer {
  const out: Buffer[] = [Buffer.from(`${parts.method} ${parts.target} ${parts.version ?? 'HTTP/1.1'}\r\n`, 'latin1')];
  for (const [name, value] of parts.headers)
    out.push(Buffer.from(`${name}: `, 'latin1'), typeof value === 'string' ? Buffer.from(value, 'latin1') : value, Buffer.from('\r\n'));
  out.push(Buffer.from('\r\n'));
  if (parts.body) out.push(parts.body);
  return Buffer.concat(out);
}
