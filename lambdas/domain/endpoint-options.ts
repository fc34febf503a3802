/**
 * An endpoint's delivery options (docs/behaviour.md#custom-headers,
 * docs/behaviour.md#oauth-20-client-credentials, docs/behaviour.md#delivery-rate-per-endpoint,
 * docs/behaviour.md#payload-filters) and their rules: which custom headers are allowed, which of
 * their values are secrets (sealed at rest like signing secrets: docs/architecture.md#secrets), how
 * a change merges into what is stored, and what each reader sees. Pure but for the sealer port.
 */
import { AppError } from '../contract/errors';
import { CUSTOM_HEADER_LIMITS, RATE_LIMIT_PER_SECOND_BOUNDS, REDACTED } from '../contract/limits';
import type { SealedSecret, SecretSealer } from './secrets';

/** An endpoint's custom headers as stored: plain values, and the values of secret names sealed. */
export interface CustomHeaders {
  readonly plain: Readonly<Record<string, string>>;
  readonly sealed: Readonly<Record<string, SealedSecret>>;
}

/** OAuth 2.0 client credentials as stored: the client secret sealed. */
export interface OAuthClientCredentials {
  readonly type: 'oauth2_client_credentials';
  readonly tokenUrl: string;
  readonly clientId: string;
  readonly clientSecret: SealedSecret;
  readonly scope?: string;
  readonly audience?: string;
}

/** A payload filter's document as stored (validated when written: lambdas/domain/payload-filter.ts). */
export type FilterDocument = Readonly<Record<string, unknown>>;

/** An endpoint's delivery options; each absent when unset. */
export interface EndpointOptions {
  readonly headers?: CustomHeaders;
  readonly auth?: OAuthClientCredentials;
  /** Most first attempts and retries sent to the endpoint in any second, across every dispatcher. */
  readonly rateLimitPerSecond?: number;
  /** Events whose payload it does not match are not delivered to the endpoint (the publisher applies it). */
  readonly filter?: FilterDocument;
}

/** RFC 9110 `token`: what a field name may be. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * What a value may hold: visible ASCII, space, tab and Latin-1 (what Node sends as is); never CR,
 * LF, NUL, another control character or DEL. No leading or trailing white space (HTTP strips it,
 * so the receiver would see another value than the one stored).
 */
const VALUE = /^(?:[\x21-\x7e\x80-\xff](?:[\t\x20-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?)?$/;

/** Names the service sets, or that would break the request or its signature. */
const RESERVED = new Set([
  'content-type',
  'content-length',
  'host',
  'transfer-encoding',
  'connection',
  'user-agent',
  'x-trace-id',
  'keep-alive',
  'te',
  'trailer',
  'upgrade',
]);

/** Prefixes of refused names: the signature's headers, hop-by-hop proxy headers, AWS's own. */
const RESERVED_PREFIXES = ['webhook-', 'proxy-', 'x-amz-'];

/** Words that mark a header's value as a secret wherever they occur in its name. */
const SECRET_WORDS = ['key', 'token', 'secret', 'password'];

/**
 * True when a header's value is a secret (docs/behaviour.md#custom-headers): `authorization`,
 * `cookie`, or a name containing `key`, `token`, `secret` or `password`, in any case. Such a value
 * is sealed at rest and never read back.
 */
export function isSecretHeaderName(name: string): boolean {
  const lower = name.toLowerCase();
  return lower === 'authorization' || lower === 'cookie' || SECRET_WORDS.some((w) => lower.includes(w));
}

/** Why a header name is refused, or null when it is allowed; `oauth` when the endpoint gets its `authorization` from OAuth. */
export function headerNameRefusal(name: string, oauth: boolean): string | null {
  if (!TOKEN.test(name)) return `"${name.slice(0, 64)}" is not a valid header name (letters, digits and !#$%&'*+-.^_\`|~ only)`;
  const lower = name.toLowerCase();
  // A valid token, but as a key it would set an object's prototype instead of storing the header.
  if (lower === '__proto__') return `The header name ${name} is not allowed`;
  if (RESERVED.has(lower) || RESERVED_PREFIXES.some((p) => lower.startsWith(p)))
    return `The header ${name} is set by the service or would break the request or its signature`;
  if (oauth && lower === 'authorization') return `The header ${name} is set by OAuth 2.0 on this endpoint`;
  return null;
}

/** Why a header value is refused, or null when it is allowed. */
export function headerValueRefusal(name: string, value: string): string | null {
  return VALUE.test(value)
    ? null
    : `The value of ${name} holds a control character (CR, LF, NUL…), a character beyond Latin-1, or leading or trailing white space`;
}

/** Bytes a sealed value's plaintext has (AES-GCM: as many as its ciphertext). */
const sealedBytes = (s: SealedSecret) => Buffer.from(s.ciphertext, 'base64').length;

/** Bytes of a header set, names and values (UTF-8; a sealed value as its plaintext). */
function headerBytes(plain: Readonly<Record<string, string>>, sealed: Readonly<Record<string, SealedSecret>>): number {
  let total = 0;
  for (const [name, value] of Object.entries(plain)) total += Buffer.byteLength(name) + Buffer.byteLength(value);
  for (const [name, value] of Object.entries(sealed)) total += Buffer.byteLength(name) + sealedBytes(value);
  return total;
}

/** The place of header `name` under `where` (the headers' place in the request): `body.headers["X-Api-Key"]`. */
export function headerPath(where: string, name: string | null): string {
  return name === null ? where : `${where}[${JSON.stringify(name)}]`;
}

/** A 400 `InvalidHeader` naming `name` at `where` (the headers' place in the request) in its detail and issues. */
export function headerRefusal(where: string, name: string | null, message: string): AppError {
  const path = headerPath(where, name);
  return new AppError('InvalidHeader', `${path}: ${message}`, { issues: [{ path, message }] });
}

/** A header change planned: the values to keep or set plain, those to seal, and the sealed ones kept. */
export interface HeaderPlan {
  readonly plain: Record<string, string>;
  readonly toSeal: Record<string, string>;
  readonly keptSealed: Record<string, SealedSecret>;
}

/**
 * Merges a change into the stored headers (docs/behaviour.md#custom-headers) and checks the result:
 * by name, in any case (a name sent replaces the stored one of the same name, with the case sent);
 * `null` removes one; unsent names are kept, so a secret need not be sent again. Throws a
 * 400 `InvalidHeader` naming the header for a bad name or value, a refused name, or a result over
 * {@link CUSTOM_HEADER_LIMITS}; `oauth` when the endpoint (after the change) uses OAuth 2.0.
 * `where` is the headers' place in the request (`body.headers`).
 */
export function planHeaderChange(
  current: CustomHeaders | undefined,
  change: Readonly<Record<string, string | null>>,
  oauth: boolean,
  where = 'body.headers',
): HeaderPlan {
  const plain: Record<string, string> = { ...current?.plain };
  const keptSealed: Record<string, SealedSecret> = { ...current?.sealed };
  const toSeal: Record<string, string> = {};
  const seen = new Set<string>();
  const drop = (lower: string) => {
    for (const bag of [plain, keptSealed, toSeal]) for (const name of Object.keys(bag)) if (name.toLowerCase() === lower) delete bag[name];
  };
  for (const [name, value] of Object.entries(change)) {
    const lower = name.toLowerCase();
    if (seen.has(lower)) throw headerRefusal(where, name, `The header ${name} is sent twice (names are case-insensitive)`);
    seen.add(lower);
    if (value === null) {
      drop(lower);
      continue;
    }
    const bad = headerNameRefusal(name, oauth) ?? headerValueRefusal(name, value);
    if (bad) throw headerRefusal(where, name, bad);
    drop(lower);
    if (isSecretHeaderName(name)) toSeal[name] = value;
    else plain[name] = value;
  }
  // Kept names are checked again: turning OAuth on refuses a stored `authorization`.
  for (const name of [...Object.keys(plain), ...Object.keys(keptSealed)]) {
    const bad = headerNameRefusal(name, oauth);
    if (bad) throw headerRefusal(where, name, bad);
  }
  const count = Object.keys(plain).length + Object.keys(keptSealed).length + Object.keys(toSeal).length;
  if (count > CUSTOM_HEADER_LIMITS.maxHeaders)
    throw headerRefusal(where, null, `${count} headers; an endpoint may have at most ${CUSTOM_HEADER_LIMITS.maxHeaders}`);
  const bytes = headerBytes({ ...plain, ...toSeal }, keptSealed);
  if (bytes > CUSTOM_HEADER_LIMITS.maxTotalBytes)
    throw headerRefusal(
      where,
      null,
      `The headers hold ${bytes} bytes of names and values; at most ${CUSTOM_HEADER_LIMITS.maxTotalBytes} are allowed`,
    );
  return { plain, toSeal, keptSealed };
}

/** The headers a plan stores: its secret values sealed by `sealer`; undefined when none is left. */
export async function sealHeaderPlan(plan: HeaderPlan, sealer: SecretSealer): Promise<CustomHeaders | undefined> {
  const sealed: Record<string, SealedSecret> = { ...plan.keptSealed };
  for (const [name, value] of Object.entries(plan.toSeal)) sealed[name] = await sealer.seal(value);
  return Object.keys(plan.plain).length + Object.keys(sealed).length === 0 ? undefined : { plain: plan.plain, sealed };
}

/** The headers to send, secret values opened by `sealer` (the dispatcher's). */
export async function openHeaders(headers: CustomHeaders | undefined, sealer: SecretSealer): Promise<Record<string, string>> {
  if (!headers) return {};
  const out: Record<string, string> = { ...headers.plain };
  for (const [name, sealed] of Object.entries(headers.sealed)) out[name] = await sealer.open(sealed);
  return out;
}

/**
 * The request headers an attempt records (its evidence): every header sent, by name, with the value
 * of each secret name (a custom one, or `authorization`, however it was set) as {@link REDACTED}.
 */
export function redactRequestHeaders(sent: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(sent)) out[name] = isSecretHeaderName(name) ? REDACTED : value;
  return out;
}

/** Who reads an endpoint: write scope sees plain header values, read scope names only. */
export type OptionsReader = 'write' | 'read';

/**
 * The headers as a read shows them (docs/behaviour.md#custom-headers): each name, with its value
 * for a plain header read with write scope, else {@link REDACTED}. A secret value is never read back.
 */
export function headersForRead(headers: CustomHeaders | undefined, reader: OptionsReader): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers?.plain ?? {})) out[name] = reader === 'write' ? value : REDACTED;
  for (const name of Object.keys(headers?.sealed ?? {})) out[name] = REDACTED;
  return out;
}

/** OAuth 2.0 settings as a read shows them: the client secret never. */
export function authForRead(auth: OAuthClientCredentials | undefined): Omit<OAuthClientCredentials, 'clientSecret'> | null {
  if (!auth) return null;
  const { clientSecret: _secret, ...shown } = auth;
  return shown;
}

/** Why `n` is no valid `rateLimitPerSecond`, or null (null itself, unsetting it, is valid). */
export function rateLimitRefusal(n: unknown): string | null {
  if (n === null) return null;
  const { min, max } = RATE_LIMIT_PER_SECOND_BOUNDS;
  return typeof n === 'number' && Number.isInteger(n) && n >= min && n <= max
    ? null
    : `rateLimitPerSecond is an integer from ${min} to ${max}, or null`;
}
