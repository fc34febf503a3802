/**
 * Typed deployment configuration of a stage, from three layers, each over the one before:
 * `cdk.json` "context" (the defaults of every stage), the stage's settings file
 * `stages/<stage>.json` when there is one (`-c stage=prod` reads `stages/prod.json`), and `-c
 * key=value` on the command line. Every key is optional; a missing key takes the documented
 * default. Values given on the command line arrive as strings, so numbers, JSON objects and lists
 * are parsed here, and anything invalid (an unknown key of a settings file included) fails synth
 * with one message that lists every problem.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import type { IConstruct } from 'constructs';
import { RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import {
  DEAD_LETTER_CONSUMER,
  DEAD_LETTER_MAX_CONCURRENCY_BOUNDS,
  DEFAULT_MCP_RESERVED_CONCURRENCY,
  DEFAULT_PUBLISHER_RESERVED_CONCURRENCY,
  DEFAULT_RECOVERY_RATE_PER_SECOND,
  DISPATCHER_CONSUMER,
  DISPATCHER_SETTING_BOUNDS,
  LAMBDA_UNRESERVED_CONCURRENCY_MINIMUM,
  MCP_CORS,
  RECOVERY_RATE_BOUNDS,
  RESERVED_CONCURRENCY_BOUNDS,
} from '#lambdas/contract/deployment';
import { parseConsoleOidc, type ConsoleOidcSettings } from '#lambdas/contract/console-oidc';
import { isFrameAncestorOrigin, MAX_FRAME_ANCESTORS } from '#lambdas/contract/frame-ancestors';
import { DEFAULT_RECOVERY_JOBS_PER_WORKSPACE, RECOVERY_JOBS_PER_WORKSPACE_BOUNDS } from '#lambdas/contract/jobs';
import { RATE_LIMIT_BUCKETS, resolveQuotas, type Quota, type RateLimitBucket } from '#lambdas/contract/rate-limits';
import { resolveWorkspaceLimits, WORKSPACE_LIMIT_BOUNDS, WORKSPACE_LIMIT_NAMES, type WorkspaceLimits } from '#lambdas/contract/limits';
import type { TableBilling, TableCapacity } from './constructs/table';
import { parsePlatformPrincipals } from './platform-principals';

/** Per-workspace limit overrides; omitted ones keep {@link DEFAULT_WORKSPACE_LIMITS}. */
type WorkspaceLimitOverrides = Partial<WorkspaceLimits>;

/** Per-bucket quota overrides; omitted buckets and fields keep {@link DEFAULT_QUOTAS}. */
type RateLimitOverrides = Partial<Record<RateLimitBucket, Partial<Quota>>>;

/** The deployment configuration of one stage. */
export interface WebhooksConfig {
  /**
   * Stage name: the stack is `Webhooks-<stage>` and the API Gateway stage is `<stage>`.
   * Lower-case letters, digits and `-`, starting with a letter, at most 24 characters.
   * @default 'dev'
   */
  readonly stage: string;
  /**
   * Per-client (API token) quota overrides of the rate-limit buckets, e.g.
   * `{"rest_write": {"limit": 60}}`. Merged over the contract's defaults and handed
   * to every REST function as the `RATE_LIMITS` environment variable.
   * @default {} (the defaults of lambdas/contract/rate-limits.ts)
   */
  readonly rateLimits: RateLimitOverrides;
  /**
   * Retention of every log group of the stack (function logs and API access logs),
   * in days; one of CloudWatch's allowed values (1, 3, 5, 7, 14, 30, 60, 90, ...).
   * @default 30
   */
  readonly logRetentionDays: number;
  /**
   * How long API Gateway caches the authorizer's decision for one token, in seconds
   * (0 to 3600; 0 disables caching). A revoked token keeps working for at most this long.
   * @default 60
   */
  readonly authorizerCacheTtlSeconds: number;
  /**
   * Steady-state request rate of the whole API stage (requests per second), enforced by
   * API Gateway before any Lambda runs. Per-token quotas are `rateLimits`.
   * @default 100
   */
  readonly throttlingRateLimit: number;
  /**
   * Burst capacity of the whole API stage (requests).
   * @default 200
   */
  readonly throttlingBurstLimit: number;
  /**
   * What happens to the table and the log groups when the stack is deleted:
   * `retain` keeps them (and turns on the table's deletion protection), `destroy`
   * deletes them (throw-away development stages only).
   * @default 'retain'
   */
  readonly removalPolicy: 'retain' | 'destroy';
  /**
   * E-mail address subscribed to the stack's alarm topic (the output AlarmTopicArn), which every
   * alarm notifies on ALARM and on OK (docs/operations.md lists every alarm with its runbook).
   * `null` (or an empty string): no subscription; the topic is there for other subscribers (a
   * pager), and the alarms show in CloudWatch. The address must confirm the subscription e-mail
   * SNS sends after deploy.
   * @default null
   */
  readonly alarmEmail: string | null;
  /**
   * Origins whose browser pages may call the MCP endpoint (the function URL's CORS
   * `AllowOrigins`): `[]` for none (browsers off: MCP clients are programs, and CORS
   * headers matter only to browsers), `["*"]` for any, or a list of origins such as
   * `["https://app.example.com", "http://localhost:6274"]` (scheme, host and an
   * optional port; no path). CORS only restrains browsers: every MCP request still
   * needs a workspace API token. On the command line, a JSON array or a
   * comma-separated list (`-c mcpAllowedOrigins=https://a.example,https://b.example`;
   * `-c mcpAllowedOrigins=` for none).
   * @default [] (MCP_CORS.defaultAllowedOrigins of lambdas/contract/deployment.ts)
   */
  readonly mcpAllowedOrigins: readonly string[];
  /**
   * Origins whose pages may show the console in a frame (docs/behaviour.md#the-embedded-console):
   * the console's `Content-Security-Policy: frame-ancestors`, handed to the console function as
   * `CONSOLE_FRAME_ANCESTORS`; a portal session's `returnUrl` must be one of them. Each is
   * `https://host[:port]` (or `http://` for a loopback host such as `http://localhost:5173`), at
   * most 50; no path, trailing slash or wildcard. `[]`: no frame, the console stays
   * `frame-ancestors 'none'`. On the command line, a JSON array or a comma-separated list.
   * @default []
   */
  readonly consoleFrameAncestors: readonly string[];
  /**
   * The OpenID Connect provider the platform's staff sign in to the console with
   * (docs/behaviour.md#staff-sign-in): `{issuer, clientId, groupsClaim?, roles: {read, write, admin},
   * trustEmailFromIssuer?, scopes?, name?}`, checked by `parseConsoleOidc`
   * (lambdas/contract/console-oidc.ts) and handed to the console function and the sign-in functions
   * as `CONSOLE_OIDC` (JSON). The console is a public client at the provider (Authorization Code
   * with PKCE, no secret); its redirect URI is the `ConsoleOidcRedirectUri` output. `null`: staff
   * sign-in is off, the console offers token sign-in only. On the command line, the object as JSON.
   * @default null
   */
  readonly consoleOidc: ConsoleOidcSettings | null;
  /**
   * Reserved concurrency of the MCP function, an integer from 1 to 1000: the most MCP requests
   * that run at once, so a flood on the public URL is throttled (HTTP 429 from Lambda) instead of
   * growing the bill and starving the account's other functions. A reservation is taken from the
   * account's Lambda concurrency quota, and Lambda refuses one that would leave less than 100 of
   * it unreserved (LAMBDA_UNRESERVED_CONCURRENCY_MINIMUM): the deploy then fails. A new or
   * low-quota account (a quota of 10 or 50) can reserve nothing and must set `null`, as must any
   * account whose quota minus its existing reservations is under 100 + this stage's reservations
   * ({@link reservedConcurrencyOf}). `null` leaves the function unreserved and uncapped. On the
   * command line, `-c mcpReservedConcurrency=null` (or an empty value) for none.
   * @default 10
   */
  readonly mcpReservedConcurrency: number | null;
  /**
   * Reserved concurrency of the publisher, an integer from 1 to 1000, or `null` for none: the most
   * events published at once, so a burst of events cannot take the account's concurrency from the
   * API and the authorizer. Events over it are throttled and retried by Lambda (for up to two
   * hours), so they arrive later, never lost. A reservation counts against the account's quota
   * like `mcpReservedConcurrency` (Lambda keeps 100 unreserved): new or low-quota accounts (a
   * quota of 10 or 50) must set `null`. On the command line, `-c publisherReservedConcurrency=null`.
   * @default 50 (DEFAULT_PUBLISHER_RESERVED_CONCURRENCY of lambdas/contract/deployment.ts)
   */
  readonly publisherReservedConcurrency: number | null;
  /**
   * Batches of the dead-letter queue its consumer runs at once (the event source's maximum
   * concurrency, which reserves nothing), an integer from 2 to 100: a flood of dead letters is
   * worked off at this pace instead of taking the account's concurrency.
   * @default 2 (DEAD_LETTER_CONSUMER of lambdas/contract/deployment.ts)
   */
  readonly deadLetterMaxConcurrency: number;
  /**
   * Let this stack own the region's API Gateway CloudWatch role: `true` creates an IAM role for
   * API Gateway and sets it as the account setting `cloudWatchRoleArn` (AWS::ApiGateway::Account),
   * which the stage's access logging needs; both are kept when the stack is deleted. The setting is
   * account-wide (one per region, shared by every REST API there), so turn it on in one stack per
   * account and region, and only where no role is set yet (`npm run preflight` tells). `false`:
   * the account must already have the role, or the deploy rolls back with "CloudWatch Logs role
   * ARN must be set in account settings".
   * @default false
   */
  readonly apiGatewayAccountRole: boolean;
  /**
   * Replays per second a recovery job writes at most (docs/behaviour.md#recovery-jobs), an
   * integer from 1 to 200; handed to the job worker as `RECOVERY_RATE_PER_SECOND`. Interactive
   * replay quotas (`rateLimits`, `workspaceLimits.replaysPerMinute`) do not apply to jobs.
   * @default 20
   */
  readonly recoveryRatePerSecond: number;
  /**
   * Recovery jobs one workspace may have running at once (docs/behaviour.md#recovery-jobs), an
   * integer from 1 to 100; a recover request past it is 409 `Conflict`. A job whose worker stopped
   * renewing its slot frees it after the slot's lease.
   * @default 3
   */
  readonly recoveryJobsPerWorkspace: number;
  /**
   * Per-workspace limit overrides (docs/behaviour.md#rate-limits), shared by every token of a
   * workspace, REST and MCP alike: `testSendsPerMinute` and `replaysPerMinute` (interactive single
   * replays; recovery jobs are paced by `recoveryRatePerSecond` instead), over which a call is 429
   * `RateLimited`; `endpoints` and `apiTokens`, the most a workspace may have, past which a create is
   * 409 `Conflict`. Each an integer from 1 to 100000, e.g. `{"endpoints": 200}`; omitted ones keep
   * the defaults. Merged over them and handed to every function running operations as the
   * `WORKSPACE_LIMITS` environment variable.
   * @default {} (DEFAULT_WORKSPACE_LIMITS of lambdas/contract/limits.ts: 60 test sends and 600 replays a minute, 1000 endpoints, 100 API tokens)
   */
  readonly workspaceLimits: WorkspaceLimitOverrides;
  /**
   * The delivery success rate, in percent, under which the `DeliverySuccessRateAlarm` fires
   * (docs/operations.md#delivery-success-rate): delivered / (delivered + failed + failed_permanent)
   * attempts over 15 minutes, from the service's `Attempts` metric, once there are at least 20
   * attempts. An integer from 1 to 100. Receivers' own failures count too, so set it from the
   * rate a stage normally sees.
   * @default 90
   */
  readonly deliverySuccessRateAlarmPercent: number;
  /**
   * Records per batch of the delivery queue's dispatcher (the fast lane), an integer from 1 to 100.
   * Above 10, Lambda gathers a batch for up to 1 s (its required batching window); at 10 or less
   * a batch leaves at once: lower publish-to-receipt latency at low traffic, more invocations at
   * high traffic (lambdas/contract/deployment.ts dispatcherConsumer).
   * @default 25 (the spec's)
   */
  readonly dispatcherBatchSize: number;
  /**
   * Batches of the delivery queue the dispatcher runs at once (the event source's maximum
   * concurrency), an integer from 2 to 1000: with the batch size, the most deliveries in flight,
   * and so the load on receivers and on the table. The slow lane keeps its own (4 batches of 10).
   * @default 4 (the spec's)
   */
  readonly dispatcherMaxConcurrency: number;
  /**
   * How the table pays for throughput: `on-demand` (per request, nothing to plan) or `provisioned`
   * (capacity units per second, auto scaled between the `tableCapacity` bounds to keep 70 % of
   * them in use, on the table and on each index): cheaper for steady high volume, but a burst
   * faster than scaling (minutes) is throttled. DynamoDB lets a table switch to on-demand at most
   * four times in 24 hours (docs/scaling.md).
   * @default 'on-demand'
   */
  readonly tableBillingMode: TableBilling['mode'];
  /**
   * The auto-scaling bounds of a provisioned table, units per second, applied to the table and to
   * each of its indexes: `readMin`, `readMax`, `writeMin`, `writeMax`, integers from 1 to 1000000
   * (min at most max), merged over the defaults, e.g. `{"writeMax": 20000}`. The minimum is paid
   * every hour; the maximum caps the bill and the throughput. Read only when `tableBillingMode` is
   * `provisioned`.
   * @default {} (read 5 to 2000, write 5 to 10000: DEFAULT_TABLE_CAPACITY)
   */
  readonly tableCapacity: Partial<TableCapacity>;
  /**
   * The IAM principals (role or user ARNs) allowed to call the platform API, `/platform/*`
   * (docs/deploy.md#platform-api): the API's resource policy explicitly denies every other
   * principal there. A JSON array, or on the command line a comma-separated list.
   * @default [] (every platform call refused)
   */
  readonly platformPrincipals: readonly string[];
}

/** The auto-scaling bounds of a provisioned table when `tableCapacity` leaves them out. */
export const DEFAULT_TABLE_CAPACITY: TableCapacity = { readMin: 5, readMax: 2000, writeMin: 5, writeMax: 10000 };

/** The bounds of each `tableCapacity` figure. */
const TABLE_CAPACITY_BOUNDS = { min: 1, max: 1_000_000 } as const;

/** The configuration used for every key that the context does not set. */
export const DEFAULT_CONFIG: WebhooksConfig = {
  stage: 'dev',
  rateLimits: {},
  logRetentionDays: 30,
  authorizerCacheTtlSeconds: 60,
  throttlingRateLimit: 100,
  throttlingBurstLimit: 200,
  removalPolicy: 'retain',
  alarmEmail: null,
  mcpAllowedOrigins: MCP_CORS.defaultAllowedOrigins,
  consoleFrameAncestors: [],
  consoleOidc: null,
  mcpReservedConcurrency: DEFAULT_MCP_RESERVED_CONCURRENCY,
  publisherReservedConcurrency: DEFAULT_PUBLISHER_RESERVED_CONCURRENCY,
  deadLetterMaxConcurrency: DEAD_LETTER_CONSUMER.maxConcurrency,
  apiGatewayAccountRole: false,
  recoveryRatePerSecond: DEFAULT_RECOVERY_RATE_PER_SECOND,
  recoveryJobsPerWorkspace: DEFAULT_RECOVERY_JOBS_PER_WORKSPACE,
  workspaceLimits: {},
  deliverySuccessRateAlarmPercent: 90,
  dispatcherBatchSize: DISPATCHER_CONSUMER.batchSize,
  dispatcherMaxConcurrency: DISPATCHER_CONSUMER.maxConcurrency,
  tableBillingMode: 'on-demand',
  tableCapacity: {},
  platformPrincipals: [],
};

/** The context keys this app reads. */
export const CONFIG_KEYS = Object.keys(DEFAULT_CONFIG) as (keyof WebhooksConfig)[];

/** Invalid configuration; the message lists every problem found. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: readonly string[]) {
    super(`Invalid CDK context configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

/** A stage name: the stack, API stage, bus, dashboard and alarm names are made from it. */
const STAGE_NAME = /^[a-z][a-z0-9-]{0,23}$/;

/** A plausible e-mail address (SNS checks it for real by asking the address to confirm). */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * An origin as browsers send it: `http` or `https`, a host, an optional port, nothing after.
 * (A function URL takes at most {@link MAX_ALLOWED_ORIGINS} origins of up to 253 characters.)
 */
const ORIGIN = /^https?:\/\/[a-z0-9.-]+(:\d{1,5})?$/i;
const MAX_ALLOWED_ORIGINS = 100;

const RETENTION_VALUES = new Set<number>(Object.values(RetentionDays).filter((v): v is number => typeof v === 'number'));

/** A number from a context value: numbers as is, numeric strings (`-c key=30`) parsed. */
function toNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && value.trim() !== '') return Number(value);
  return Number.NaN;
}

/** A boolean from a context value: booleans as is, `true`/`false` strings (`-c key=true`); undefined otherwise. */
function toBoolean(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === 'false') return value === 'true';
  return undefined;
}

/** An object from a context value: objects as is, JSON strings (`-c rateLimits='{...}'`) parsed. */
function toObject(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return undefined;
  }
}

function parseRateLimits(value: unknown, problems: string[]): RateLimitOverrides {
  const raw = toObject(value);
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    problems.push('rateLimits must be an object such as {"rest_write": {"limit": 60, "windowSeconds": 60}}');
    return {};
  }
  const out: RateLimitOverrides = {};
  for (const [bucket, quota] of Object.entries(raw)) {
    if (!(RATE_LIMIT_BUCKETS as readonly string[]).includes(bucket)) {
      problems.push(`rateLimits.${bucket}: unknown bucket (known: ${RATE_LIMIT_BUCKETS.join(', ')})`);
      continue;
    }
    if (!quota || typeof quota !== 'object' || Array.isArray(quota)) {
      problems.push(`rateLimits.${bucket} must be an object with "limit" and/or "windowSeconds"`);
      continue;
    }
    const entry: { limit?: number; windowSeconds?: number } = {};
    for (const [field, v] of Object.entries(quota as Record<string, unknown>)) {
      if (field !== 'limit' && field !== 'windowSeconds') {
        problems.push(`rateLimits.${bucket}.${field}: unknown field (use "limit" and "windowSeconds")`);
      } else if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0) {
        problems.push(`rateLimits.${bucket}.${field} must be a positive integer`);
      } else {
        entry[field] = v;
      }
    }
    out[bucket as RateLimitBucket] = entry;
  }
  return out;
}

function parseWorkspaceLimits(value: unknown, problems: string[]): WorkspaceLimitOverrides {
  const raw = toObject(value);
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    problems.push(
      'workspaceLimits must be an object such as {"testSendsPerMinute": 60, "replaysPerMinute": 600, "endpoints": 1000, "apiTokens": 100}',
    );
    return {};
  }
  const { min, max } = WORKSPACE_LIMIT_BOUNDS;
  const out: Partial<Record<keyof WorkspaceLimits, number>> = {};
  for (const [name, v] of Object.entries(raw)) {
    if (!(WORKSPACE_LIMIT_NAMES as readonly string[]).includes(name)) {
      problems.push(`workspaceLimits.${name}: unknown limit (known: ${WORKSPACE_LIMIT_NAMES.join(', ')})`);
    } else if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
      problems.push(`workspaceLimits.${name} must be an integer from ${min} to ${max} (got ${JSON.stringify(v)})`);
    } else {
      out[name as keyof WorkspaceLimits] = v;
    }
  }
  return out;
}

function parseTableCapacity(value: unknown, problems: string[]): Partial<TableCapacity> {
  const raw = toObject(value);
  const names = Object.keys(DEFAULT_TABLE_CAPACITY) as (keyof TableCapacity)[];
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    problems.push(`tableCapacity must be an object such as {"readMin": 5, "readMax": 2000, "writeMin": 5, "writeMax": 10000}`);
    return {};
  }
  const { min, max } = TABLE_CAPACITY_BOUNDS;
  const out: Partial<Record<keyof TableCapacity, number>> = {};
  for (const [name, v] of Object.entries(raw)) {
    if (!(names as string[]).includes(name)) problems.push(`tableCapacity.${name}: unknown bound (known: ${names.join(', ')})`);
    else if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
      problems.push(`tableCapacity.${name} must be an integer from ${min} to ${max} (got ${JSON.stringify(v)})`);
    else out[name as keyof TableCapacity] = v;
  }
  const merged = { ...DEFAULT_TABLE_CAPACITY, ...out };
  for (const kind of ['read', 'write'] as const) {
    if (merged[`${kind}Min`] > merged[`${kind}Max`])
      problems.push(`tableCapacity: ${kind}Min (${merged[`${kind}Min`]}) must be at most ${kind}Max (${merged[`${kind}Max`]})`);
  }
  return out;
}

/** A list from a context value: arrays as is, a JSON array string, or a comma-separated string (`-c key=a,b`). */
function toList(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  if (value.trim().startsWith('[')) return toObject(value);
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

function parseAllowedOrigins(value: unknown, problems: string[]): readonly string[] {
  const list = toList(value);
  const shape = 'mcpAllowedOrigins must be [] (none), ["*"] or a list of origins such as ["https://app.example.com"]';
  if (!Array.isArray(list) || !list.every((item): item is string => typeof item === 'string')) {
    problems.push(shape);
    return DEFAULT_CONFIG.mcpAllowedOrigins;
  }
  if (list.includes('*')) {
    if (list.length > 1) problems.push(`${shape}: "*" already allows every origin, list it alone`);
    return ['*'];
  }
  if (list.length > MAX_ALLOWED_ORIGINS)
    problems.push(`mcpAllowedOrigins takes at most ${MAX_ALLOWED_ORIGINS} origins (got ${list.length})`);
  for (const origin of list) {
    if (!ORIGIN.test(origin) || origin.length > 253) {
      problems.push(`mcpAllowedOrigins: ${JSON.stringify(origin)} is not an origin (scheme://host[:port], no path or trailing slash)`);
    }
  }
  return [...new Set(list)];
}

function parseFrameAncestors(value: unknown, problems: string[]): readonly string[] {
  const list = toList(value);
  if (!Array.isArray(list) || !list.every((item): item is string => typeof item === 'string')) {
    problems.push('consoleFrameAncestors must be a list of origins such as ["https://app.example.com"], or [] for none');
    return DEFAULT_CONFIG.consoleFrameAncestors;
  }
  if (list.length > MAX_FRAME_ANCESTORS)
    problems.push(`consoleFrameAncestors takes at most ${MAX_FRAME_ANCESTORS} origins (got ${list.length})`);
  for (const origin of list) {
    if (!isFrameAncestorOrigin(origin))
      problems.push(
        `consoleFrameAncestors: ${JSON.stringify(origin)} is not an origin that may frame the console (https://host[:port] in lower case, or http:// for a loopback host; no path, trailing slash or wildcard)`,
      );
  }
  return [...new Set(list)];
}

/**
 * Validates raw context values (any subset of the keys) into a configuration.
 * @throws ConfigError listing every invalid value
 */
export function parseConfig(raw: Readonly<Record<string, unknown>>): WebhooksConfig {
  const problems: string[] = [];
  const given = (key: keyof WebhooksConfig) => raw[key] !== undefined && raw[key] !== null;

  const stage = given('stage') ? raw.stage : DEFAULT_CONFIG.stage;
  if (typeof stage !== 'string' || !STAGE_NAME.test(stage)) {
    problems.push('stage must be lower-case letters, digits or "-", start with a letter and have at most 24 characters');
  }

  const integer = (key: keyof WebhooksConfig, min: number, max: number, extra?: (n: number) => string | undefined): number => {
    const fallback = DEFAULT_CONFIG[key] as number;
    if (!given(key)) return fallback;
    const n = toNumber(raw[key]);
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`${key} must be an integer from ${min} to ${max} (got ${JSON.stringify(raw[key])})`);
      return fallback;
    }
    const extraProblem = extra?.(n);
    if (extraProblem) problems.push(extraProblem);
    return n;
  };

  const logRetentionDays = integer('logRetentionDays', 1, 9999, (n) =>
    RETENTION_VALUES.has(n) ? undefined : `logRetentionDays must be one of ${[...RETENTION_VALUES].join(', ')} (got ${n})`,
  );
  const authorizerCacheTtlSeconds = integer('authorizerCacheTtlSeconds', 0, 3600);
  const throttlingBurstLimit = integer('throttlingBurstLimit', 0, 5000);
  const recoveryRatePerSecond = integer('recoveryRatePerSecond', RECOVERY_RATE_BOUNDS.min, RECOVERY_RATE_BOUNDS.max);
  const recoveryJobsPerWorkspace = integer(
    'recoveryJobsPerWorkspace',
    RECOVERY_JOBS_PER_WORKSPACE_BOUNDS.min,
    RECOVERY_JOBS_PER_WORKSPACE_BOUNDS.max,
  );
  const deliverySuccessRateAlarmPercent = integer('deliverySuccessRateAlarmPercent', 1, 100);
  const dispatcherBatchSize = integer(
    'dispatcherBatchSize',
    DISPATCHER_SETTING_BOUNDS.batchSize.min,
    DISPATCHER_SETTING_BOUNDS.batchSize.max,
  );
  const dispatcherMaxConcurrency = integer(
    'dispatcherMaxConcurrency',
    DISPATCHER_SETTING_BOUNDS.maxConcurrency.min,
    DISPATCHER_SETTING_BOUNDS.maxConcurrency.max,
  );

  let throttlingRateLimit = DEFAULT_CONFIG.throttlingRateLimit;
  if (given('throttlingRateLimit')) {
    const n = toNumber(raw.throttlingRateLimit);
    // API Gateway takes a fractional rate (e.g. 0.5 rps); the account default ceiling is 10000.
    if (!Number.isFinite(n) || n <= 0 || n > 10000)
      problems.push(`throttlingRateLimit must be a number above 0 and at most 10000 (got ${JSON.stringify(raw.throttlingRateLimit)})`);
    else throttlingRateLimit = n;
  }

  const removalPolicy = given('removalPolicy') ? raw.removalPolicy : DEFAULT_CONFIG.removalPolicy;
  if (removalPolicy !== 'retain' && removalPolicy !== 'destroy')
    problems.push(`removalPolicy must be "retain" or "destroy" (got ${JSON.stringify(removalPolicy)})`);

  // `-c alarmEmail=` (an empty string) also means none, so the command line can turn off an address set in cdk.json.
  const alarmEmail = given('alarmEmail') && raw.alarmEmail !== '' ? raw.alarmEmail : DEFAULT_CONFIG.alarmEmail;
  if (alarmEmail !== null && (typeof alarmEmail !== 'string' || !EMAIL.test(alarmEmail))) {
    problems.push(`alarmEmail must be an e-mail address such as ops@example.com, or null for none (got ${JSON.stringify(alarmEmail)})`);
  }

  const rateLimits = given('rateLimits') ? parseRateLimits(raw.rateLimits, problems) : DEFAULT_CONFIG.rateLimits;
  const workspaceLimits = given('workspaceLimits') ? parseWorkspaceLimits(raw.workspaceLimits, problems) : DEFAULT_CONFIG.workspaceLimits;
  const mcpAllowedOrigins = given('mcpAllowedOrigins')
    ? parseAllowedOrigins(raw.mcpAllowedOrigins, problems)
    : DEFAULT_CONFIG.mcpAllowedOrigins;
  const consoleFrameAncestors = given('consoleFrameAncestors')
    ? parseFrameAncestors(raw.consoleFrameAncestors, problems)
    : DEFAULT_CONFIG.consoleFrameAncestors;
  // `-c consoleOidc=` (an empty string) also means none, as for alarmEmail.
  const consoleOidc =
    given('consoleOidc') && raw.consoleOidc !== ''
      ? parseConsoleOidc(toObject(raw.consoleOidc) ?? raw.consoleOidc, problems)
      : DEFAULT_CONFIG.consoleOidc;
  // Unlike the other keys, null here is a value (unreserved), not "use the default".
  const reservation = (key: 'mcpReservedConcurrency' | 'publisherReservedConcurrency'): number | null => {
    const value = raw[key];
    if (value === null || value === '' || value === 'null') return null;
    if (value === undefined) return DEFAULT_CONFIG[key];
    const n = toNumber(value);
    const { min, max } = RESERVED_CONCURRENCY_BOUNDS;
    if (Number.isInteger(n) && n >= min && n <= max) return n;
    problems.push(
      `${key} must be an integer from ${min} to ${max}, or null for an unreserved function (needed where the account's Lambda concurrency quota leaves nothing to reserve) (got ${JSON.stringify(value)})`,
    );
    return DEFAULT_CONFIG[key];
  };
  const mcpReservedConcurrency = reservation('mcpReservedConcurrency');
  const publisherReservedConcurrency = reservation('publisherReservedConcurrency');
  const deadLetterMaxConcurrency = integer(
    'deadLetterMaxConcurrency',
    DEAD_LETTER_MAX_CONCURRENCY_BOUNDS.min,
    DEAD_LETTER_MAX_CONCURRENCY_BOUNDS.max,
  );
  const apiGatewayAccountRole = given('apiGatewayAccountRole')
    ? toBoolean(raw.apiGatewayAccountRole)
    : DEFAULT_CONFIG.apiGatewayAccountRole;
  if (apiGatewayAccountRole === undefined)
    problems.push(`apiGatewayAccountRole must be true or false (got ${JSON.stringify(raw.apiGatewayAccountRole)})`);

  const tableBillingMode = given('tableBillingMode') ? raw.tableBillingMode : DEFAULT_CONFIG.tableBillingMode;
  if (tableBillingMode !== 'on-demand' && tableBillingMode !== 'provisioned')
    problems.push(`tableBillingMode must be "on-demand" or "provisioned" (got ${JSON.stringify(tableBillingMode)})`);
  const tableCapacity = given('tableCapacity') ? parseTableCapacity(raw.tableCapacity, problems) : DEFAULT_CONFIG.tableCapacity;

  const platformPrincipals = given('platformPrincipals')
    ? parsePlatformPrincipals(raw.platformPrincipals, problems)
    : DEFAULT_CONFIG.platformPrincipals;

  if (problems.length > 0) throw new ConfigError(problems);
  return {
    platformPrincipals,
    stage: stage as string,
    rateLimits,
    logRetentionDays,
    authorizerCacheTtlSeconds,
    throttlingRateLimit,
    throttlingBurstLimit,
    removalPolicy: removalPolicy as WebhooksConfig['removalPolicy'],
    alarmEmail: alarmEmail as string | null,
    mcpAllowedOrigins,
    consoleFrameAncestors,
    consoleOidc,
    mcpReservedConcurrency,
    publisherReservedConcurrency,
    deadLetterMaxConcurrency,
    apiGatewayAccountRole: apiGatewayAccountRole ?? false,
    recoveryRatePerSecond,
    recoveryJobsPerWorkspace,
    workspaceLimits,
    deliverySuccessRateAlarmPercent,
    dispatcherBatchSize,
    dispatcherMaxConcurrency,
    tableBillingMode: tableBillingMode as WebhooksConfig['tableBillingMode'],
    tableCapacity,
  };
}

/** The folder of the stages' settings files, `<stage>.json` each, relative to the project root. */
export const STAGES_DIR = 'stages';

/** The project root: where cdk.json and {@link STAGES_DIR} are. */
const PROJECT_ROOT = fileURLToPath(new URL('../', import.meta.url));

/** The settings file of a stage (it need not exist), relative to the project root. */
function stageFileOf(stage: string): string {
  return `${STAGES_DIR}/${stage}.json`;
}

/** What {@link resolveStageSettings} made of the layers. */
interface StageSettings {
  /** The raw settings, the three layers merged: what {@link parseConfig} takes. */
  readonly settings: Record<string, unknown>;
  /** The stage's settings file, relative to the project root, when one was read. */
  readonly stageFile: string | null;
  /** What is wrong with the file (unknown keys, `stage`); its values themselves are checked by {@link parseConfig}. */
  readonly problems: readonly string[];
}

/** The "context" of the project's cdk.json ({} without one). */
function cdkJsonContextAt(projectRoot: string): Record<string, unknown> {
  const file = join(projectRoot, 'cdk.json');
  if (!existsSync(file)) return {};
  return (JSON.parse(readFileSync(file, 'utf8')) as { context?: Record<string, unknown> }).context ?? {};
}

/**
 * Merges the layers of a stage's settings. `context` is what CDK hands the app: cdk.json's context
 * with the command line's `-c` values over it. CDK does not say which value came from where, so a
 * value equal to cdk.json's is taken as cdk.json's (the settings file wins over it) and any other
 * as the command line's (it wins over the file). The file must be a JSON object of known keys
 * other than `stage` (the file's name is the stage); other keys are reported in `problems`.
 * @throws ConfigError when the file is not a JSON object
 */
function resolveStageSettings(context: Readonly<Record<string, unknown>>, projectRoot: string = PROJECT_ROOT): StageSettings {
  const settings: Record<string, unknown> = {};
  for (const key of CONFIG_KEYS) if (context[key] !== undefined) settings[key] = context[key];
  const stage = settings.stage ?? DEFAULT_CONFIG.stage;
  // An invalid stage name is parseConfig's to report; it names no file.
  if (typeof stage !== 'string' || !STAGE_NAME.test(stage)) return { settings, stageFile: null, problems: [] };
  const stageFile = stageFileOf(stage);
  const path = join(projectRoot, stageFile);
  if (!existsSync(path)) return { settings, stageFile: null, problems: [] };

  let file: unknown;
  try {
    file = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ConfigError([`${stageFile} is not valid JSON: ${(error as Error).message}`]);
  }
  if (!file || typeof file !== 'object' || Array.isArray(file))
    throw new ConfigError([`${stageFile} must be a JSON object of settings, such as {"alarmEmail": "ops@example.com"}`]);
  const problems: string[] = [];
  const defaults = cdkJsonContextAt(projectRoot);
  for (const [key, value] of Object.entries(file)) {
    if (key === 'stage') problems.push(`${stageFile}: remove "stage": the file's name is the stage`);
    else if (!(CONFIG_KEYS as string[]).includes(key))
      problems.push(`${stageFile}: unknown setting "${key}" (known: ${CONFIG_KEYS.filter((k) => k !== 'stage').join(', ')})`);
    else if (settings[key] === undefined || isDeepStrictEqual(settings[key], defaults[key])) settings[key] = value;
  }
  return { settings, stageFile, problems };
}

/** A stage's validated configuration and the settings file it was read with. */
export interface LoadedConfig {
  readonly config: WebhooksConfig;
  /** The stage's settings file, relative to the project root; null when the stage has none. */
  readonly stageFile: string | null;
}

/**
 * Reads and validates a stage's configuration: the construct's CDK context (cdk.json's, then the
 * command line's) and the stage's settings file ({@link resolveStageSettings}).
 * @throws ConfigError listing every problem
 */
export function loadStageConfig(scope: IConstruct, projectRoot?: string): LoadedConfig {
  const context: Record<string, unknown> = {};
  for (const key of CONFIG_KEYS) context[key] = scope.node.tryGetContext(key) as unknown;
  const { settings, stageFile, problems } = resolveStageSettings(context, projectRoot);
  let config: WebhooksConfig;
  try {
    config = parseConfig(settings);
  } catch (error) {
    // One message for everything wrong: the file's keys and every value.
    if (error instanceof ConfigError) throw new ConfigError([...problems, ...error.problems]);
    throw error;
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return { config, stageFile };
}

/** {@link loadStageConfig}'s configuration. */
export function loadConfig(scope: IConstruct, projectRoot?: string): WebhooksConfig {
  return loadStageConfig(scope, projectRoot).config;
}

/**
 * The Lambda concurrency a stage reserves (the MCP function's and the publisher's reservations).
 * Lambda refuses a reservation that leaves less than {@link LAMBDA_UNRESERVED_CONCURRENCY_MINIMUM}
 * of the account's quota unreserved, so the account needs a quota of at least this plus 100 plus
 * what its other functions already reserve ({@link minimumConcurrencyQuotaOf}).
 */
export function reservedConcurrencyOf(config: Pick<WebhooksConfig, 'mcpReservedConcurrency' | 'publisherReservedConcurrency'>): number {
  return (config.mcpReservedConcurrency ?? 0) + (config.publisherReservedConcurrency ?? 0);
}

/**
 * The smallest account concurrency quota a stage deploys into when nothing else in the account
 * reserves concurrency: its reservations plus the unreserved minimum, or 0 when it reserves nothing.
 */
export function minimumConcurrencyQuotaOf(config: Pick<WebhooksConfig, 'mcpReservedConcurrency' | 'publisherReservedConcurrency'>): number {
  const reserved = reservedConcurrencyOf(config);
  return reserved === 0 ? 0 : reserved + LAMBDA_UNRESERVED_CONCURRENCY_MINIMUM;
}

/** The CDK removal policy of a configuration. */
export function removalPolicyOf(config: Pick<WebhooksConfig, 'removalPolicy'>): RemovalPolicy {
  return config.removalPolicy === 'destroy' ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN;
}

/** The log retention of a configuration, as CDK's enum (validated to be one of its values). */
export function retentionOf(config: Pick<WebhooksConfig, 'logRetentionDays'>): RetentionDays {
  return config.logRetentionDays;
}

/** The complete quotas (defaults merged with the overrides): the `RATE_LIMITS` value of the REST functions. */
export function quotasOf(config: Pick<WebhooksConfig, 'rateLimits'>): Record<RateLimitBucket, Quota> {
  return resolveQuotas(config.rateLimits);
}

/** The table's billing (lib/constructs/table.ts): on-demand, or provisioned within the capacity bounds merged over {@link DEFAULT_TABLE_CAPACITY}. */
export function tableBillingOf(config: Pick<WebhooksConfig, 'tableBillingMode' | 'tableCapacity'>): TableBilling {
  return config.tableBillingMode === 'provisioned'
    ? { mode: 'provisioned', ...DEFAULT_TABLE_CAPACITY, ...config.tableCapacity }
    : { mode: 'on-demand' };
}

/** The complete workspace limits (defaults merged with the overrides): the `WORKSPACE_LIMITS` value of the functions running operations. */
export function workspaceLimitsOf(config: Pick<WebhooksConfig, 'workspaceLimits'>): WorkspaceLimits {
  return resolveWorkspaceLimits(config.workspaceLimits);
}
