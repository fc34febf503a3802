/**
 * The composition root: every function's adapters, built once per container
 * from its environment (cold start), then reused; and the service's one logger.
 * The AWS adapters are the default; the local stack swaps in its in-process
 * ones through {@link useAdapters}, so production code never branches on where
 * it runs (docs/architecture.md#the-local-stack).
 */
import { Logger } from '@aws-lambda-powertools/logger';
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { KMSClient } from '@aws-sdk/client-kms';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { ENV, SERVICE_NAME, type EnvName } from '../contract/deployment';
import { resolveWorkspaceLimits, type WorkspaceLimits } from '../contract/limits';
import type { MetricDimensionValues, MetricKey, MetricsRecorder } from '../contract/metrics';
import { deploymentCatalogue } from '../domain/configured-event-types';
import type { SecretSealer } from '../domain/secrets';
import type { PortalSettings, SurfaceRuntime } from '../operations/context';
import { countingRefusals, rateLimiterFor } from '../operations/rate-limiter';
import type { DeliveryQueue, MessageDelayer } from '../queue/delivery-queue';
import { eventBridgeBus, type DomainEventBus } from '../queue/domain-events';
import { sqsDeliveryQueue, sqsMessageDelayer } from '../queue/sqs-delivery-queue';
import type { JobQueue } from '../queue/job-queue';
import { sqsJobQueue } from '../queue/sqs-job-queue';
import { recoveryRateFrom } from '../domain/recovery';
import type { RelayDeps } from '../pipeline/outbox-relay';
import type { RecoveryWorkerDeps } from '../pipeline/recovery-worker';
import { tableFromEnv } from '../store/client';
import { kmsSecretSealer } from '../store/secret-sealing';
import { BufferedMetrics, emfWriter, type MetricGroup, type MetricsWriter } from './metrics';

/** The service's logger (Powertools; `POWERTOOLS_*` env configures it). */
export const logger = new Logger({ serviceName: process.env[ENV.POWERTOOLS_SERVICE_NAME] ?? SERVICE_NAME });

/** How the queue and the bus named in the environment become adapters. */
export interface AdapterFactories {
  /** The delivery queue at `url`. */
  deliveryQueue(url: string): DeliveryQueue;
  /** The retry delayer of the queue at `url`. */
  messageDelayer(url: string): MessageDelayer;
  /** The domain-events bus `name`, as the outbox relay puts on it. */
  domainEvents(name: string): DomainEventBus;
  /** The jobs queue at `url` (recovery jobs). */
  jobQueue(url: string): JobQueue;
  /** The job worker's wait between slices. @default a timer */
  sleep?(ms: number): Promise<void>;
  /**
   * The secret sealer (docs/architecture.md#secrets) of the KMS key `keyId` (`SECRETS_KEY_ID`,
   * set only on the functions the key lets seal or open).
   * @default KMS; a sealer that refuses when `keyId` is unset
   */
  secretSealer?(keyId: string | undefined): SecretSealer;
  /**
   * Where the service's metrics go (docs/operations.md), for the stage `stage` (`STAGE`).
   * @default none: metrics are CloudWatch's, so a replacement (the local stack) writes none unless it names a writer
   */
  metrics?(stage: string): MetricsWriter;
  /**
   * The local stack's time scale (docs/architecture.md#the-local-stack): its queues divide every
   * delay by it, so the dispatcher records `nextAttemptAt` scaled the same. @default 1
   */
  readonly timeScale?: number;
}

/**
 * An AWS SDK client made on its first request: the SDK module of a service a function may never
 * call (most functions never send to SQS, EventBridge or KMS) is not loaded at cold start
 * (docs/architecture.md#lambda-bundles). Only `send` is used by the adapters.
 */
function lazyClient<C extends { send(command: never): Promise<unknown> }>(make: () => Promise<C>): C {
  let client: Promise<C> | undefined;
  const send = async (command: never) => (await (client ??= make())).send(command);
  return { send } as unknown as C;
}

/** One SQS client per container, made on its first request. */
let sharedSqs: SQSClient | undefined;
const sqsClient = (): SQSClient =>
  (sharedSqs ??= lazyClient<SQSClient>(async () => new (await import('@aws-sdk/client-sqs')).SQSClient({})));

/** Raised by the sealer of a function not given the key (`SECRETS_KEY_ID` unset): a deployment fault. */
export class SecretSealerMissing extends Error {
  override readonly name = 'SecretSealerMissing';
}

/** The sealer of a function not given the key: any use throws {@link SecretSealerMissing} (a queued message comes back). */
const refusingSealer: SecretSealer = {
  seal: () => Promise.reject(new SecretSealerMissing(`sealing a signing secret needs ${ENV.SECRETS_KEY_ID}`)),
  open: () => Promise.reject(new SecretSealerMissing(`opening a signing secret needs ${ENV.SECRETS_KEY_ID}`)),
};

/** The deployed secret sealer: the stack's KMS key, when the function was given it. */
function kmsSealer(keyId: string | undefined): SecretSealer {
  return keyId
    ? kmsSecretSealer(
        lazyClient<KMSClient>(async () => new (await import('@aws-sdk/client-kms')).KMSClient({})),
        keyId,
      )
    : refusingSealer;
}

/** SQS and EventBridge: what every deployed function runs with. */
export const awsAdapters: AdapterFactories = {
  deliveryQueue: (url) => sqsDeliveryQueue(sqsClient(), url),
  messageDelayer: (url) => sqsMessageDelayer(sqsClient(), url),
  domainEvents: (name) =>
    eventBridgeBus(
      lazyClient<EventBridgeClient>(async () => new (await import('@aws-sdk/client-eventbridge')).EventBridgeClient({})),
      name,
    ),
  jobQueue: (url) => sqsJobQueue(sqsClient(), url),
  secretSealer: kmsSealer,
  metrics: emfWriter,
};

let factories: AdapterFactories = awsAdapters;
let cached: SurfaceRuntime | undefined;
let cachedSealer: SecretSealer | undefined;
let cachedMetrics: { writer: MetricsWriter | undefined } | undefined;

/**
 * The injection seam of the local stack (and tests): every adapter built after
 * this call comes from `replacement`; the container's runtime is rebuilt on next use.
 */
export function useAdapters(replacement: AdapterFactories): void {
  factories = replacement;
  cached = undefined;
  cachedSealer = undefined;
  cachedMetrics = undefined;
}

/**
 * The container's secret sealer, built once so its data-key caches live as long as the container
 * (a delivery then pays no KMS call after the first for its data key); one that refuses where
 * `SECRETS_KEY_ID` is unset and no local factory is in use.
 */
export function secretSealerFromEnv(env: NodeJS.ProcessEnv = process.env): SecretSealer {
  cachedSealer ??= (factories.secretSealer ?? kmsSealer)(env[ENV.SECRETS_KEY_ID]);
  return cachedSealer;
}

/** The stage named in `STAGE`, the `stage` dimension of every metric; `local` when unset. */
function stageFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  return env[ENV.STAGE] || 'local';
}

/** Writes metric groups with the container's writer, built on first use; best effort: a failure is logged, never thrown. */
function writeMetrics(groups: readonly MetricGroup[]): void {
  try {
    cachedMetrics ??= { writer: factories.metrics?.(stageFromEnv()) };
    cachedMetrics.writer?.write(groups);
  } catch (error) {
    logger.warn('Metrics not written', { error: error as Error });
  }
}

/**
 * One invocation's metrics (docs/operations.md): recorded through the invocation, written once
 * by `flush` at the end of the handler.
 */
export function invocationMetrics(): BufferedMetrics {
  return new BufferedMetrics(writeMetrics);
}

/** The request surfaces' metrics: an operation records at most a few, each written as it happens (the surfaces have no end-of-invocation hook). */
const surfaceMetrics: MetricsRecorder = {
  add<K extends MetricKey>(key: K, value: number, dimensions: MetricDimensionValues<K>): void {
    const metrics = invocationMetrics();
    metrics.add(key, value, dimensions);
    metrics.flush();
  },
};

/** Builds a runtime from environment variables. */
function runtimeFromEnv(env: NodeJS.ProcessEnv = process.env): SurfaceRuntime {
  // A change's domain event is written to the outbox beside it (docs/architecture.md#outbox).
  const outboxTableName = env[ENV.OUTBOX_TABLE_NAME];
  const table = { ...tableFromEnv(env), ...(outboxTableName ? { outboxTableName } : {}) };
  const rateTableName = env[ENV.RATE_LIMIT_TABLE_NAME];
  const rateTable = rateTableName ? { ...table, tableName: rateTableName } : undefined;
  return {
    deps: {
      table,
      now: () => new Date(),
      eventTypes: deploymentCatalogue(),
      // The local-development switch (docs/architecture.md#security-model); the deployed stack never sets it.
      urlPolicy: { allowLoopback: env[ENV.ALLOW_LOOPBACK_TARGETS] === 'true' },
      queue: queueFromEnv(env),
      jobQueue: jobQueueFromEnv(env),
      ...recoveryJobsPerWorkspaceFromEnv(env),
      secretSealer: secretSealerFromEnv(env),
      workspaceLimits: workspaceLimitsFromEnv(env),
      metrics: surfaceMetrics,
      portal: portalSettingsFromEnv(env),
    },
    rateLimiter: countingRefusals(rateLimiterFor(rateTable, env[ENV.RATE_LIMITS]), surfaceMetrics),
  };
}

/** Where portal links lead: `CONSOLE_URL`, and `CONSOLE_FRAME_ANCESTORS` (a JSON array of origins; unreadable or unset: none). */
function portalSettingsFromEnv(env: NodeJS.ProcessEnv): PortalSettings {
  let ancestors: unknown;
  try {
    ancestors = JSON.parse(env[ENV.CONSOLE_FRAME_ANCESTORS] ?? '[]');
  } catch {
    ancestors = [];
  }
  const frameAncestors = Array.isArray(ancestors) ? ancestors.filter((a): a is string => typeof a === 'string') : [];
  return {
    // Read on use: the local stack learns its own address (so the console's) only once it listens.
    get consoleUrl() {
      return env[ENV.CONSOLE_URL] || null;
    },
    frameAncestors,
  };
}

/** `recoveryJobsPerWorkspace` from `RECOVERY_JOBS_PER_WORKSPACE` when set (the operations fall back to the default otherwise). */
function recoveryJobsPerWorkspaceFromEnv(env: NodeJS.ProcessEnv): { recoveryJobsPerWorkspace?: number } {
  const n = Number(env[ENV.RECOVERY_JOBS_PER_WORKSPACE]);
  return env[ENV.RECOVERY_JOBS_PER_WORKSPACE] && Number.isInteger(n) ? { recoveryJobsPerWorkspace: n } : {};
}

/** The workspace limits of `WORKSPACE_LIMITS` (JSON, as the stack sets it), over the defaults; the defaults when unset or unreadable. */
function workspaceLimitsFromEnv(env: NodeJS.ProcessEnv = process.env): WorkspaceLimits {
  let overrides: unknown;
  try {
    const raw = env[ENV.WORKSPACE_LIMITS];
    overrides = raw ? JSON.parse(raw) : undefined;
  } catch {
    overrides = undefined;
  }
  return resolveWorkspaceLimits(overrides);
}

/** The time scale of the adapters in use: the local stack's, else 1 (a deployed stack never scales). */
export function adapterTimeScale(): number {
  return factories.timeScale ?? 1;
}

/** The container's runtime, built on first use. */
export function defaultRuntime(): SurfaceRuntime {
  cached ??= runtimeFromEnv();
  return cached;
}

/**
 * The adapter of the resource named by the environment variable `name`, built
 * on first use (a function that never sends never creates a client, and the
 * local stack's `useAdapters` may come after the module loads); using it with
 * the variable unset throws.
 */
function lazyAdapter<T>(env: NodeJS.ProcessEnv, name: EnvName, make: (value: string) => T): () => T {
  const value = env[name];
  let adapter: T | undefined;
  return () => {
    if (!value) throw new Error(`${name} is not set`);
    adapter ??= make(value);
    return adapter;
  };
}

/**
 * The delivery queue whose URL is in `name` (`DELIVERY_QUEUE_URL`; the slow lane's
 * `SLOW_DELIVERY_QUEUE_URL`, the dead letters' `DEAD_LETTER_QUEUE_URL`); created on first send.
 */
export function queueFromEnv(env: NodeJS.ProcessEnv = process.env, name: EnvName = ENV.DELIVERY_QUEUE_URL): DeliveryQueue {
  const queue = lazyAdapter(env, name, (url) => factories.deliveryQueue(url));
  return { send: (messages) => queue().send(messages) };
}

/** The jobs queue of `JOB_QUEUE_URL`; created on first send. */
function jobQueueFromEnv(env: NodeJS.ProcessEnv = process.env): JobQueue {
  const queue = lazyAdapter(env, ENV.JOB_QUEUE_URL, (url) => factories.jobQueue(url));
  return { send: (message, delaySeconds) => queue().send(message, delaySeconds) };
}

/** The job worker's adapters and rate, from the environment (docs/architecture.md#recovery-jobs). */
export function recoveryWorkerFromEnv(env: NodeJS.ProcessEnv = process.env): RecoveryWorkerDeps {
  const { deps } = defaultRuntime();
  return {
    table: deps.table,
    queue: deps.queue,
    jobQueue: jobQueueFromEnv(env),
    now: () => new Date(),
    sleep: (ms) => (factories.sleep ? factories.sleep(ms) : new Promise((resolve) => setTimeout(resolve, ms))),
    ratePerSecond: recoveryRateFrom(env),
    onSendFailure: (error, deliveryIds) =>
      logger.warn('Replay messages not sent: the stuck-pending repair will send them', { deliveryIds, error: error as Error }),
  };
}

/** The outbox relay's adapters (docs/architecture.md#outbox): the bus of `EVENT_BUS_NAME`, made on first put. */
export function outboxRelayFromEnv(env: NodeJS.ProcessEnv = process.env): RelayDeps {
  const bus = lazyAdapter(env, ENV.EVENT_BUS_NAME, (name) => factories.domainEvents(name));
  return { bus: { put: (events) => bus().put(events) }, log: logger };
}

/** The retry delayer of the queue whose URL is in `name` (ChangeMessageVisibility on SQS). */
export function delayerFromEnv(env: NodeJS.ProcessEnv = process.env, name: EnvName = ENV.DELIVERY_QUEUE_URL): MessageDelayer {
  const delayer = lazyAdapter(env, name, (url) => factories.messageDelayer(url));
  return { delay: (receiptHandle, seconds) => delayer().delay(receiptHandle, seconds) };
}
