/**
 * Typed deployment configuration, read from CDK context (`cdk.json` "context",
 * or `-c key=value` on the command line). Every key is optional; a missing key
 * takes the documented default. Values given on the command line arrive as
 * strings, so numbers, JSON objects and lists are parsed here, and anything invalid
 * fails synth with one message that lists every problem.
 */
import type { IConstruct } from 'constructs';
import { RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import {
  DEFAULT_RECOVERY_RATE_PER_SECOND,
  DISPATCHER_CONSUMER,
  DISPATCHER_SETTING_BOUNDS,
  MCP_CORS,
  RECOVERY_RATE_BOUNDS,
} from '#lambdas/contract/deployment';
import { RATE_LIMIT_BUCKETS, resolveQuotas, type Quota, type RateLimitBucket } from '#lambdas/contract/rate-limits';
import { resolveWorkspaceLimits, WORKSPACE_LIMIT_BOUNDS, WORKSPACE_LIMIT_NAMES, type WorkspaceLimits } from '#lambdas/contract/limits';
import type { TableBilling, TableCapacity } from './constructs/table';

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
   * E-mail address notified (through an SNS topic) when an alarm of the stack
   * changes state, on ALARM and on OK (docs/operations.md lists every alarm with its runbook).
   * `null` (or an empty string): no topic; the alarms still show in CloudWatch.
   * The address must confirm the subscription e-mail SNS sends after deploy.
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
   * Reserved concurrency of the MCP function, an integer from 1 to 1000: the most MCP
   * requests that run at once, so a flood on the public URL is throttled (HTTP 429 from
   * Lambda) instead of growing the bill and starving the account's other functions.
   * `null` leaves the function unreserved (needed in an account whose concurrency quota
   * is too small to reserve any: Lambda keeps 100 unreserved). On the command line,
   * `-c mcpReservedConcurrency=null` (or an empty value) for none.
   * @default 10
   */
  readonly mcpReservedConcurrency: number | null;
  /**
   * Replays per second a recovery job writes at most (docs/behaviour.md#recovery-jobs), an
   * integer from 1 to 200; handed to the job worker as `RECOVERY_RATE_PER_SECOND`. Interactive
   * replay quotas (`rateLimits`, `workspaceLimits.replaysPerMinute`) do not apply to jobs.
   * @default 20
   */
  readonly recoveryRatePerSecond: number;
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
  mcpReservedConcurrency: 10,
  recoveryRatePerSecond: DEFAULT_RECOVERY_RATE_PER_SECOND,
  workspaceLimits: {},
  deliverySuccessRateAlarmPercent: 90,
  dispatcherBatchSize: DISPATCHER_CONSUMER.batchSize,
  dispatcherMaxConcurrency: DISPATCHER_CONSUMER.maxConcurrency,
  tableBillingMode: 'on-demand',
  tableCapacity: {},
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

/**
 * Validates raw context values (any subset of the keys) into a configuration.
 * @throws ConfigError listing every invalid value
 */
export function parseConfig(raw: Readonly<Record<string, unknown>>): WebhooksConfig {
  const problems: string[] = [];
  const given = (key: keyof WebhooksConfig) => raw[key] !== undefined && raw[key] !== null;

  const stage = given('stage') ? raw.stage : DEFAULT_CONFIG.stage;
  if (typeof stage !== 'string' || !/^[a-z][a-z0-9-]{0,23}$/.test(stage)) {
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
  // Unlike the other keys, null here is a value (unreserved), not "use the default".
  const unreserved = raw.mcpReservedConcurrency === null || raw.mcpReservedConcurrency === '' || raw.mcpReservedConcurrency === 'null';
  let mcpReservedConcurrency = unreserved ? null : DEFAULT_CONFIG.mcpReservedConcurrency;
  if (!unreserved && given('mcpReservedConcurrency')) {
    const n = toNumber(raw.mcpReservedConcurrency);
    if (!Number.isInteger(n) || n < 1 || n > 1000) {
      problems.push(
        `mcpReservedConcurrency must be an integer from 1 to 1000, or null for an unreserved function (got ${JSON.stringify(raw.mcpReservedConcurrency)})`,
      );
    } else mcpReservedConcurrency = n;
  }

  const tableBillingMode = given('tableBillingMode') ? raw.tableBillingMode : DEFAULT_CONFIG.tableBillingMode;
  if (tableBillingMode !== 'on-demand' && tableBillingMode !== 'provisioned')
    problems.push(`tableBillingMode must be "on-demand" or "provisioned" (got ${JSON.stringify(tableBillingMode)})`);
  const tableCapacity = given('tableCapacity') ? parseTableCapacity(raw.tableCapacity, problems) : DEFAULT_CONFIG.tableCapacity;

  if (problems.length > 0) throw new ConfigError(problems);
  return {
    stage: stage as string,
    rateLimits,
    logRetentionDays,
    authorizerCacheTtlSeconds,
    throttlingRateLimit,
    throttlingBurstLimit,
    removalPolicy: removalPolicy as WebhooksConfig['removalPolicy'],
    alarmEmail: alarmEmail as string | null,
    mcpAllowedOrigins,
    mcpReservedConcurrency,
    recoveryRatePerSecond,
    workspaceLimits,
    deliverySuccessRateAlarmPercent,
    dispatcherBatchSize,
    dispatcherMaxConcurrency,
    tableBillingMode: tableBillingMode as WebhooksConfig['tableBillingMode'],
    tableCapacity,
  };
}

/** Reads and validates the configuration from a construct's CDK context. */
export function loadConfig(scope: IConstruct): WebhooksConfig {
  const raw: Record<string, unknown> = {};
  for (const key of CONFIG_KEYS) raw[key] = scope.node.tryGetContext(key) as unknown;
  return parseConfig(raw);
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
