/**
 * AWS Signature Version 4, checked as API Gateway's `AWS_IAM` authorization checks it, for the
 * local stack's platform routes (docs/architecture.md#route-kinds): the method, the path, the
 * query, every signed header (`host` among them), the body's hash (an `x-amz-content-sha256`
 * header must equal it; `UNSIGNED-PAYLOAD` is refused), the date within 15 minutes of the clock,
 * the scope's date, region and service, and the signature itself under the access key's secret.
 * Header-signed requests only (no presigned URLs), as the AWS SDK signs them.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/** The algorithm of every accepted signature. */
const ALGORITHM = 'AWS4-HMAC-SHA256';

/** The service API Gateway signs for. */
const EXECUTE_API_SERVICE = 'execute-api';

/** How far a request's date may be from the clock, as AWS allows. */
const MAX_CLOCK_SKEW_MS = 15 * 60 * 1000;

/** A key pair and the IAM principal it stands for. */
export interface SigV4Credential {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly principalArn: string;
}

/** A request as received: what a signature covers. */
export interface ReceivedRequest {
  readonly method: string;
  /** The request target as sent: path and query, still percent-encoded. */
  readonly target: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/** What a signature is checked against. */
export interface SigV4VerifierOptions {
  /** The region the scope must name. */
  readonly region: string;
  /** The known access keys. */
  readonly credentials: readonly SigV4Credential[];
  /** The clock. @default () => new Date() */
  readonly now?: () => Date;
}

/** The principal of a valid signature, or why it is not one (API Gateway's message). */
export type SigV4Verdict = { readonly ok: true; readonly principalArn: string } | { readonly ok: false; readonly reason: string };

const refuse = (reason: string): SigV4Verdict => ({ ok: false, reason });

const sha256Hex = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string): Buffer => createHmac('sha256', key).update(data, 'utf8').digest();

/** RFC 3986 encoding, as SigV4 wants it (encodeURIComponent leaves `!'()*` alone). */
function escapeUri(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** The canonical path: dot segments and empty segments removed, then each character encoded again (every service but S3). */
function canonicalPath(rawPath: string): string {
  const segments: string[] = [];
  for (const segment of rawPath.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  const normalized = `${rawPath.startsWith('/') ? '/' : ''}${segments.join('/')}${segments.length > 0 && rawPath.endsWith('/') ? '/' : ''}`;
  return escapeUri(normalized).replace(/%2F/g, '/');
}

/** The canonical query: each pair decoded, encoded again, sorted by name then value. */
function canonicalQuery(rawQuery: string): string {
  const pairs = [...new URLSearchParams(rawQuery)].map(([k, v]) => `${escapeUri(k)}=${escapeUri(v)}`);
  return pairs.sort().join('&');
}

/** A header's value as signed: repeated values joined, spaces trimmed and collapsed. */
function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  if (value === undefined) return undefined;
  return (Array.isArray(value) ? value.join(',') : value).trim().replace(/\s+/g, ' ');
}

/** `Credential=…, SignedHeaders=…, Signature=…` of a SigV4 Authorization header, or why it is not one. */
function parseAuthorization(value: string): { credential: string; signedHeaders: string[]; signature: string } | { refused: string } {
  if (!value.startsWith(`${ALGORITHM} `)) return { refused: `Authorization header is not AWS Signature Version 4 (${ALGORITHM}).` };
  const fields = new Map<string, string>();
  for (const part of value.slice(ALGORITHM.length + 1).split(',')) {
    const eq = part.indexOf('=');
    if (eq > 0) fields.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  const credential = fields.get('Credential');
  const signedHeaders = fields.get('SignedHeaders');
  const signature = fields.get('Signature');
  if (!credential || !signedHeaders || !signature) {
    const missing = ['Credential', 'SignedHeaders', 'Signature'].filter((f) => !fields.get(f));
    return { refused: `Authorization header requires ${missing.map((m) => `'${m}'`).join(', ')} parameter(s).` };
  }
  return { credential, signedHeaders: signedHeaders.split(';'), signature };
}

/** An ISO 8601 basic date-time (`20261125T120000Z`) as a Date, or null. */
function parseAmzDate(value: string): Date | null {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!m) return null;
  const date = new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!));
  return Number.isNaN(date.getTime()) ? null : date;
}

/** Checks a request's SigV4 signature: the principal of its access key, or API Gateway's refusal. */
export function verifySigV4(request: ReceivedRequest, options: SigV4VerifierOptions): SigV4Verdict {
  const authorization = headerValue(request.headers, 'authorization');
  if (!authorization) return refuse('Missing Authentication Token');
  const parsed = parseAuthorization(authorization);
  if ('refused' in parsed) return refuse(parsed.refused);

  const [accessKeyId, scopeDate, region, service, terminator, ...rest] = parsed.credential.split('/');
  if (!accessKeyId || !scopeDate || !region || !service || terminator !== 'aws4_request' || rest.length > 0)
    return refuse('Credential should be scoped to a valid region, service and aws4_request.');
  if (service !== EXECUTE_API_SERVICE) return refuse(`Credential should be scoped to correct service: '${EXECUTE_API_SERVICE}'.`);
  if (region !== options.region) return refuse(`Credential should be scoped to a valid region: '${options.region}'.`);
  const credential = options.credentials.find((c) => c.accessKeyId === accessKeyId);
  if (!credential) return refuse('The security token included in the request is invalid.');

  const amzDate = headerValue(request.headers, 'x-amz-date');
  const signedAt = amzDate ? parseAmzDate(amzDate) : null;
  if (!amzDate || !signedAt) return refuse("Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.");
  if (scopeDate !== amzDate.slice(0, 8)) return refuse(`Credential should be scoped to a valid date: '${amzDate.slice(0, 8)}'.`);
  const now = (options.now ?? (() => new Date()))();
  if (Math.abs(now.getTime() - signedAt.getTime()) > MAX_CLOCK_SKEW_MS)
    return refuse(`Signature expired: ${amzDate} is not within 15 minutes of the server's time.`);

  const signed = parsed.signedHeaders;
  if (signed.some((h) => h !== h.toLowerCase()) || [...signed].sort().join(';') !== signed.join(';'))
    return refuse('SignedHeaders must be lower case and sorted.');
  for (const required of ['host', 'x-amz-date']) if (!signed.includes(required)) return refuse(`'${required}' must be a signed header.`);
  for (const name of signed) if (headerValue(request.headers, name) === undefined) return refuse(`The signed header '${name}' is missing.`);

  // The body's hash is always computed here: a header that says otherwise is refused, never trusted.
  const payloadHash = sha256Hex(request.body);
  const declared = headerValue(request.headers, 'x-amz-content-sha256');
  if (declared !== undefined) {
    if (declared === 'UNSIGNED-PAYLOAD') return refuse('UNSIGNED-PAYLOAD is not accepted: sign the body.');
    if (declared !== payloadHash) return refuse('The provided x-amz-content-sha256 header does not match what was computed.');
    if (!signed.includes('x-amz-content-sha256')) return refuse("'x-amz-content-sha256' must be a signed header.");
  }

  const queryAt = request.target.indexOf('?');
  const rawPath = queryAt < 0 ? request.target : request.target.slice(0, queryAt);
  const rawQuery = queryAt < 0 ? '' : request.target.slice(queryAt + 1);
  const canonicalRequest = [
    request.method.toUpperCase(),
    canonicalPath(rawPath),
    canonicalQuery(rawQuery),
    ...signed.map((name) => `${name}:${headerValue(request.headers, name)!}`),
    '',
    signed.join(';'),
    payloadHash,
  ].join('\n');
  const scope = `${scopeDate}/${region}/${service}/aws4_request`;
  const stringToSign = [ALGORITHM, amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${credential.secretAccessKey}`, scopeDate), region), service), 'aws4_request');
  const expected = Buffer.from(createHmac('sha256', key).update(stringToSign, 'utf8').digest('hex'), 'utf8');
  const given = Buffer.from(parsed.signature, 'utf8');
  if (expected.length !== given.length || !timingSafeEqual(expected, given))
    return refuse(
      'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.',
    );
  return { ok: true, principalArn: credential.principalArn };
}
