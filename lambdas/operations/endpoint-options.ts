/**
 * An endpoint's delivery options as create and update take them (docs/behaviour.md#custom-headers,
 * docs/behaviour.md#oauth-20-client-credentials, docs/behaviour.md#delivery-rate-per-endpoint,
 * docs/behaviour.md#payload-filters): each checked with its own tag (never `ValidationError`, as
 * the schema lets them through), every check before any sealing, secrets sealed, and a write never
 * sends a stored secret to a new host (docs/behaviour.md#secrets-and-a-new-host). What the
 * audit keeps of them: names, never a value.
 */
import { AppError } from '../contract/errors';
import {
  headerPath,
  headerRefusal,
  planHeaderChange,
  sealHeaderPlan,
  type CustomHeaders,
  type EndpointOptions,
  type FilterDocument,
  type HeaderPlan,
  type OAuthClientCredentials,
} from '../domain/endpoint-options';
import { requirePayloadFilter } from '../domain/payload-filter';
import { redactUrl } from '../domain/url-redaction';
import { checkWebhookUrl } from '../domain/webhook-url';
import type { EndpointRecord } from '../store/endpoints';
import type { OperationDeps } from './context';

/** Where each option is in a request. */
const AT = { headers: 'body.headers', auth: 'body.auth', filter: 'body.filter' } as const;

/** OAuth 2.0 client credentials as a request sends them (the schema checked their shape). */
interface AuthInput {
  readonly type: 'oauth2_client_credentials';
  readonly tokenUrl: string;
  readonly clientId: string;
  readonly clientSecret?: string;
  readonly scope?: string;
  readonly audience?: string;
}

/** The options of a create or update body. */
export interface OptionsInput {
  readonly headers?: unknown;
  readonly auth?: AuthInput | null;
  readonly rateLimitPerSecond?: number | null;
  readonly filter?: unknown;
}

/** A 400 `InvalidAuth` about `field` of `auth`, named in its detail and issues. */
function authRefusal(field: string | null, message: string): AppError {
  const path = field === null ? AT.auth : `${AT.auth}.${field}`;
  return new AppError('InvalidAuth', `${path}: ${message}`, { issues: [{ path, message }] });
}

/** The origin (scheme, host and port) of a URL the service stored or checked. */
const originOf = (url: string): string => new URL(url).origin;

/** `headers` of a body as a change: an object of strings (or null, on update), else 400 `InvalidHeader`. */
function headerChangeOf(raw: unknown, update: boolean): Record<string, string | null> {
  const values = update ? 'a string, or null to remove the header' : 'a string';
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw headerRefusal(AT.headers, null, `headers is an object of header names to values, each ${values}`);
  const entries = Object.entries(raw as Record<string, unknown>);
  for (const [name, value] of entries)
    if (!(typeof value === 'string' || (update && value === null)))
      throw headerRefusal(AT.headers, name, `The value of ${name} is ${values}`);
  // fromEntries defines each name as an own property, `__proto__` included.
  return Object.fromEntries(entries) as Record<string, string | null>;
}

/** The token URL checked by the receiver URL rules (docs/architecture.md#url-guard), else 400 `InvalidAuth`. */
function checkedTokenUrl(deps: OperationDeps, raw: string): string {
  const check = checkWebhookUrl(raw, deps.urlPolicy);
  if (!check.ok) throw authRefusal('tokenUrl', check.detail);
  return check.url.href;
}

/** The filter checked (400 `InvalidFilter` naming each place), as its document is stored. */
function checkedFilter(raw: unknown): FilterDocument {
  requirePayloadFilter(raw, AT.filter);
  return raw as FilterDocument;
}

/** OAuth settings checked, their client secret still to seal (or the stored one kept). */
interface AuthPlan {
  readonly input: AuthInput;
  readonly tokenUrl: string;
  readonly keptSecret?: OAuthClientCredentials['clientSecret'];
}

async function sealAuth(plan: AuthPlan, deps: OperationDeps): Promise<OAuthClientCredentials> {
  const { input } = plan;
  return {
    type: 'oauth2_client_credentials',
    tokenUrl: plan.tokenUrl,
    clientId: input.clientId,
    clientSecret: input.clientSecret === undefined ? plan.keptSecret! : await deps.secretSealer.seal(input.clientSecret),
    ...(input.scope === undefined ? {} : { scope: input.scope }),
    ...(input.audience === undefined ? {} : { audience: input.audience }),
  };
}

/** OAuth settings as audit entries show them: never the client secret, the token URL redacted. */
const authForAudit = (auth: AuthInput | null) =>
  auth === null ? null : { type: auth.type, tokenUrl: redactUrl(auth.tokenUrl), clientId: auth.clientId };

/** The options of a new endpoint, checked and sealed, and what its audit entry says of them. */
export async function optionsForCreate(
  deps: OperationDeps,
  body: OptionsInput,
): Promise<{ options: EndpointOptions | undefined; audit: Record<string, unknown> }> {
  const authInput = body.auth ?? undefined;
  const headerPlan =
    body.headers === undefined ? undefined : planHeaderChange(undefined, headerChangeOf(body.headers, false), authInput !== undefined);
  const authPlan: AuthPlan | undefined = authInput ? { input: authInput, tokenUrl: checkedTokenUrl(deps, authInput.tokenUrl) } : undefined;
  const filter = body.filter === undefined || body.filter === null ? undefined : checkedFilter(body.filter);
  const headers = headerPlan ? await sealHeaderPlan(headerPlan, deps.secretSealer) : undefined;
  const auth = authPlan ? await sealAuth(authPlan, deps) : undefined;
  const rate = body.rateLimitPerSecond ?? undefined;
  const options: EndpointOptions = {
    ...(headers ? { headers } : {}),
    ...(auth ? { auth } : {}),
    ...(rate === undefined ? {} : { rateLimitPerSecond: rate }),
    ...(filter ? { filter } : {}),
  };
  return {
    options: Object.keys(options).length ? options : undefined,
    audit: {
      headers: headers ? [...Object.keys(headers.plain), ...Object.keys(headers.sealed)] : [],
      auth: authForAudit(authPlan?.input ?? null),
      rateLimitPerSecond: rate ?? null,
      filter: filter !== undefined,
    },
  };
}

/** The option changes of an update, as the store takes them. */
export interface OptionChanges {
  headers?: CustomHeaders | null;
  auth?: OAuthClientCredentials | null;
  rateLimitPerSecond?: number | null;
  filter?: FilterDocument | null;
}

/**
 * An update's option changes against the endpoint as read (`current`), checked and sealed, and
 * what its audit entry says of them. `url` is the endpoint URL the update sets, if any: moved to
 * another origin, the stored secrets must be sent again (or removed), so no write sends one to a
 * host it was not given for (docs/behaviour.md#secrets-and-a-new-host).
 */
export async function optionChangesFor(
  deps: OperationDeps,
  body: OptionsInput,
  current: EndpointRecord,
  url: string | undefined,
): Promise<{ changes: OptionChanges; audit: Record<string, unknown> }> {
  const stored = current.options ?? {};
  const urlMoved = url !== undefined && originOf(url) !== originOf(current.url);
  const headerChange = body.headers === undefined ? undefined : headerChangeOf(body.headers, true);
  if (urlMoved) {
    const sent = new Set(Object.keys(headerChange ?? {}).map((n) => n.toLowerCase()));
    const unsent = Object.keys(stored.headers?.sealed ?? {}).filter((n) => !sent.has(n.toLowerCase()));
    if (unsent.length > 0) {
      const message = (name: string) =>
        `url moves to another origin: send the value of the secret header ${name} again, or null to remove it`;
      throw new AppError('InvalidHeader', unsent.map((n) => `${headerPath(AT.headers, n)}: ${message(n)}`).join('; '), {
        issues: unsent.map((n) => ({ path: headerPath(AT.headers, n), message: message(n) })),
      });
    }
    if (stored.auth && body.auth === undefined)
      throw authRefusal(null, 'url moves to another origin: send auth again with its clientSecret, or null to remove it');
  }
  const oauthAfter = body.auth === undefined ? stored.auth !== undefined : body.auth !== null;
  // Turning OAuth on checks the stored headers too: it refuses a stored `authorization`.
  const headerPlan: HeaderPlan | undefined =
    headerChange !== undefined || (oauthAfter && !stored.auth)
      ? planHeaderChange(stored.headers, headerChange ?? {}, oauthAfter)
      : undefined;
  let authPlan: AuthPlan | undefined;
  if (body.auth) {
    const tokenUrl = checkedTokenUrl(deps, body.auth.tokenUrl);
    if (body.auth.clientSecret === undefined) {
      const why = !stored.auth
        ? 'the endpoint has no OAuth 2.0 client secret yet'
        : originOf(tokenUrl) !== originOf(stored.auth.tokenUrl)
          ? 'tokenUrl moves to another origin, and a secret is never sent to a new host without being given again'
          : urlMoved
            ? 'url moves to another origin, and a secret is never sent to a new host without being given again'
            : null;
      if (why) throw authRefusal('clientSecret', `required: ${why}`);
    }
    authPlan = { input: body.auth, tokenUrl, keptSecret: stored.auth?.clientSecret };
  }
  const filter = body.filter === undefined || body.filter === null ? body.filter : checkedFilter(body.filter);

  const changes: OptionChanges = {};
  const audit: Record<string, unknown> = {};
  if (headerChange !== undefined) {
    changes.headers = (await sealHeaderPlan(headerPlan!, deps.secretSealer)) ?? null;
    audit.headersSet = Object.keys(headerChange).filter((n) => headerChange[n] !== null);
    audit.headersRemoved = Object.keys(headerChange).filter((n) => headerChange[n] === null);
  }
  if (body.auth !== undefined) {
    changes.auth = authPlan ? await sealAuth(authPlan, deps) : null;
    audit.auth = authForAudit(body.auth);
  }
  if (body.rateLimitPerSecond !== undefined) changes.rateLimitPerSecond = audit.rateLimitPerSecond = body.rateLimitPerSecond;
  if (filter !== undefined) {
    changes.filter = filter;
    audit.filter = filter !== null;
  }
  return { changes, audit };
}
