/**
 * A client of the platform API (docs/deploy.md#platform-api): `fetch` with the request signed by
 * the AWS SDK's own SigV4 signer (service `execute-api`), the same code against the local stack
 * (its `.local/stack.json` credentials) and a deployed stack (the environment's AWS credentials).
 */
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';

/** How a platform API client signs. */
export interface PlatformSigning {
  /** Static keys, or a provider (the SDK's default chain). */
  readonly credentials: ConstructorParameters<typeof SignatureV4>[0]['credentials'];
  /** The API's region. */
  readonly region: string;
}

/** One platform API request. */
export interface PlatformRequest {
  readonly method: string;
  /** The full URL: the API's base URL and the route's path (with its query). */
  readonly url: string;
  /** A JSON body. */
  readonly body?: unknown;
  /** The signing time. @default now */
  readonly signingDate?: Date;
}

/** The request as sent: its URL, method, signed headers and body. */
export async function signPlatformRequest(
  request: PlatformRequest,
  signing: PlatformSigning,
): Promise<{ url: string; method: string; headers: Record<string, string>; body?: string }> {
  const url = new URL(request.url);
  const body = request.body === undefined ? undefined : JSON.stringify(request.body);
  const signer = new SignatureV4({
    credentials: signing.credentials,
    region: signing.region,
    service: 'execute-api',
    sha256: Hash.bind(null, 'sha256'),
  });
  const signed = await signer.sign(
    {
      method: request.method,
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port ? { port: Number(url.port) } : {}),
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: { host: url.host, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body }),
    },
    request.signingDate ? { signingDate: request.signingDate } : {},
  );
  return { url: url.toString(), method: request.method, headers: signed.headers, ...(body === undefined ? {} : { body }) };
}

/** Sends a signed platform API request. */
export async function platformFetch(request: PlatformRequest, signing: PlatformSigning): Promise<Response> {
  const signed = await signPlatformRequest(request, signing);
  // fetch sets `host` itself, from the URL: the same value as signed.
  const { host: _host, ...headers } = signed.headers;
  return fetch(signed.url, { method: signed.method, headers, ...(signed.body === undefined ? {} : { body: signed.body }) });
}
