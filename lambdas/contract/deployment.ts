/**
 * The deployment contract (docs/architecture.md#layers): every value the CDK app (lib/), the local
 * stack (bin/local) and the functions share about how the service runs: the environment variables
 * a function is given, how each queue is consumed and when a message is dead-lettered, the
 * EventBridge source of the service's own events, the MCP endpoint's CORS, the KMS encryption
 * context of signing secrets, the recovery rate setting and the console bundle's entry. Defined
 * here once, so a construct and the code it deploys cannot disagree.
 *
 * Every Lambda bundle may include this module: it imports nothing but the contract's own
 * dependency-free modules (no zod, no AWS SDK).
 */
import { WORKSPACE_LIMITS_ENV } from './limits';

/**
 * The environment variables of the functions, by name. The CDK app sets them (lib/constructs), the
 * local stack sets them on its own process (bin/local/stack.ts), and the composition root reads
 * them (lambdas/composition/runtime.ts, lambdas/store/client.ts).
 */
export const ENV = {
  /** The service's table (every function that reads or writes items). */
  TABLE_NAME: 'TABLE_NAME',
  /** The table of the rate-limit counters (the same table when set); unset, an in-process bucket limits. */
  RATE_LIMIT_TABLE_NAME: 'RATE_LIMIT_TABLE_NAME',
  /** The rate-limit quota overrides, JSON of the `rateLimits` stage setting. */
  RATE_LIMITS: 'RATE_LIMITS',
  /** The workspace limit overrides, JSON of the `workspaceLimits` stage setting (its name is the published limits' own). */
  WORKSPACE_LIMITS: WORKSPACE_LIMITS_ENV,
  /** The delivery queue's URL (the fast lane when there is a slow one). */
  DELIVERY_QUEUE_URL: 'DELIVERY_QUEUE_URL',
  /** The slow lane's queue URL (docs/behaviour.md#delivery-lanes); unset, every delivery takes the one queue. */
  SLOW_DELIVERY_QUEUE_URL: 'SLOW_DELIVERY_QUEUE_URL',
  /** The dead-letter queue URL of both delivery queues. */
  DEAD_LETTER_QUEUE_URL: 'DEAD_LETTER_QUEUE_URL',
  /** The recovery jobs' queue URL (docs/architecture.md#recovery-jobs). */
  JOB_QUEUE_URL: 'JOB_QUEUE_URL',
  /** The bus of the service's own domain events: where the outbox relay puts them (docs/architecture.md#outbox). */
  EVENT_BUS_NAME: 'EVENT_BUS_NAME',
  /**
   * The outbox table (docs/architecture.md#outbox): a change that reports a domain event writes it
   * there in its own transaction; unset, such changes write no event.
   */
  OUTBOX_TABLE_NAME: 'OUTBOX_TABLE_NAME',
  /** The KMS key sealing signing secrets (docs/architecture.md#secrets), set only on the functions granted it. */
  SECRETS_KEY_ID: 'SECRETS_KEY_ID',
  /** The stage: the `stage` dimension of every metric; unset, `local`. */
  STAGE: 'STAGE',
  /** The `recoveryRatePerSecond` stage setting, given to the job worker. */
  RECOVERY_RATE_PER_SECOND: 'RECOVERY_RATE_PER_SECOND',
  /** The `recoveryJobsPerWorkspace` stage setting, given with the jobs queue to the operations that start jobs. */
  RECOVERY_JOBS_PER_WORKSPACE: 'RECOVERY_JOBS_PER_WORKSPACE',
  /** The folder of the docs bundle; unset, `docs` next to the function's code. */
  DOCS_DIR: 'DOCS_DIR',
  /** The folder of the console bundle; unset, `console` next to the function's code. */
  CONSOLE_DIR: 'CONSOLE_DIR',
  /**
   * The console's address (`https://<api>/<stage>/console/`; locally the local stack's `/console/`):
   * a portal link is this address with its code in the fragment (docs/behaviour.md#portal-sessions).
   */
  CONSOLE_URL: 'CONSOLE_URL',
  /**
   * The `consoleFrameAncestors` stage setting, JSON (an array of origins; lambdas/contract/frame-ancestors.ts):
   * the origins allowed to frame the console, and those a portal session's `returnUrl` may lead to
   * (docs/behaviour.md#the-embedded-console). Unset or `[]`: none, the console cannot be framed.
   */
  CONSOLE_FRAME_ANCESTORS: 'CONSOLE_FRAME_ANCESTORS',
  /**
   * The `consoleOidc` stage setting, JSON (lambdas/contract/console-oidc.ts): the identity provider
   * staff sign in with (docs/behaviour.md#staff-sign-in). Unset: staff sign-in is off. The console
   * page and the staff sign-in functions carry it.
   */
  CONSOLE_OIDC: 'CONSOLE_OIDC',
  /** The DynamoDB endpoint override. Local stack only: no deployed function may carry it. */
  DYNAMODB_ENDPOINT: 'DYNAMODB_ENDPOINT',
  /**
   * `true` lets webhooks target loopback addresses (docs/architecture.md#loopback-switch). Local
   * stack only: no deployed function may carry it.
   */
  ALLOW_LOOPBACK_TARGETS: 'ALLOW_LOOPBACK_TARGETS',
  /** Powertools' service name, also the logger's `service` key ({@link SERVICE_NAME}). */
  POWERTOOLS_SERVICE_NAME: 'POWERTOOLS_SERVICE_NAME',
  /** Powertools' metrics namespace. */
  POWERTOOLS_METRICS_NAMESPACE: 'POWERTOOLS_METRICS_NAMESPACE',
  /** Powertools' log level. */
  POWERTOOLS_LOG_LEVEL: 'POWERTOOLS_LOG_LEVEL',
} as const;

/** The name of one of the functions' environment variables. */
export type EnvName = (typeof ENV)[keyof typeof ENV];

/** The variables only the local stack sets: a deployed function carrying one fails synth. */
export const LOCAL_ONLY_ENV = [ENV.ALLOW_LOOPBACK_TARGETS, ENV.DYNAMODB_ENDPOINT] as const;

/** The service's name: `POWERTOOLS_SERVICE_NAME` of every function, the logger's `service` key. */
export const SERVICE_NAME = 'webhooks';

/** EventBridge `source` of the service's own domain events. */
export const EVENT_SOURCE = 'webhooks.service';

/**
 * The outbox (docs/architecture.md#outbox): its table's keys, how long an outbox item is kept (its TTL; the stream
 * keeps a record for 24 hours, so an item outlives every retry of its record), and how the relay
 * consumes the table's stream: the event source mapping's batches, its retries of a failed
 * batch (each split in two, so one bad record is isolated) before the batch's records go to the
 * on-failure queue, and the relay's timeout. The local stack's stream poller runs the same numbers.
 */
export const OUTBOX = {
  /**
   * The outbox table's key schema: one item per event, keyed by the event's id alone, read only
   * from the table's stream (new images); its TTL attribute removes relayed items, and the stream's
   * removals are filtered out before the relay.
   */
  table: { partitionKey: 'pk', ttlAttribute: 'expiresAtEpoch', streamViewType: 'NEW_IMAGE' },
  retentionHours: 48,
  relay: {
    /** Records per invocation; PutEvents takes 10 entries a request. */
    batchSize: 10,
    maxBatchingWindowSeconds: 0,
    /** Retries of a failed batch before its records go to the on-failure queue. */
    retryAttempts: 5,
    /** A record older than this goes to the on-failure queue without another try (the stream keeps 24 hours). */
    maximumRecordAgeSeconds: 6 * 3600,
    timeoutSeconds: 30,
  },
} as const;

/** How a queue's consumer takes its messages: the event source mapping's settings and the function's timeout. */
export interface QueueConsumer {
  readonly batchSize: number;
  readonly maxBatchingWindowSeconds: number;
  readonly maxConcurrency: number;
  readonly timeoutSeconds: number;
  readonly visibilityTimeoutSeconds: number;
}

/**
 * Receives of one delivery message before SQS moves it to the dead-letter queue (its redrive's
 * maxReceiveCount): as many as a delivery has attempts (the retry ladder's `MAX_RETRIES` + 1,
 * lambdas/domain/backoff.ts), so a retry ladder that never misses a receive fits on one message;
 * a retry due past it is sent as a new message.
 */
export const MAX_RECEIVES = 7;

/** The bounds of the dispatcher's stage settings (`dispatcherBatchSize`, `dispatcherMaxConcurrency`). */
export const DISPATCHER_SETTING_BOUNDS = { batchSize: { min: 1, max: 100 }, maxConcurrency: { min: 2, max: 1000 } } as const;

/**
 * The delivery queue's consumer for a batch size and a concurrency (stage settings
 * `dispatcherBatchSize`, `dispatcherMaxConcurrency`), read by the CDK event source and the local
 * stack's in-process queue alike. Lambda requires a batching window of at least 1 s for a batch
 * over 10; at 10 or less there is none, so a batch leaves as soon as a message is there (the
 * latency-sensitive choice). A 30 s function timeout and a visibility timeout six times that
 * (Lambda's SQS guidance), so a batch still being processed is never handed out twice.
 */
export function dispatcherConsumer(batchSize: number, maxConcurrency: number): QueueConsumer {
  return {
    batchSize,
    maxBatchingWindowSeconds: batchSize > 10 ? 1 : 0,
    maxConcurrency,
    timeoutSeconds: 30,
    visibilityTimeoutSeconds: 6 * 30,
  };
}

/** The spec's defaults: batches of 25 gathered for at most 1 s, at most 4 batches at once. */
export const DISPATCHER_CONSUMER: QueueConsumer = dispatcherConsumer(25, 4);

/**
 * The slow lane's consumption (docs/behaviour.md#delivery-lanes): batches of 10, with no batching
 * window (Lambda requires one only above 10), at most 4 batches at once. A batch there waits for
 * its slowest receiver (up to the 10 s deadline), so it is small, and each batch attempts only a
 * few deliveries per endpoint and workspace (lambdas/domain/delivery-lanes.ts).
 */
export const SLOW_LANE_CONSUMER: QueueConsumer = dispatcherConsumer(10, 4);

/**
 * The dead-letter consumer's batches and, unless the stage sets `deadLetterMaxConcurrency`, the
 * batches it runs at once (the event source's maximum concurrency, which reserves nothing): a
 * burst of dead letters (a receiver down for hours) is worked off a few batches at a time instead
 * of taking the account's concurrency from the API and the authorizer.
 */
export const DEAD_LETTER_CONSUMER = { batchSize: 10, maxConcurrency: 2 } as const;

/** The bounds of `deadLetterMaxConcurrency` (Lambda's SQS event sources take 2 at least). */
export const DEAD_LETTER_MAX_CONCURRENCY_BOUNDS = { min: 2, max: 100 } as const;

/**
 * The concurrency Lambda keeps unreserved in every account and region: a function's reserved
 * concurrency is refused when it would leave less than this of the account's concurrency quota
 * unreserved. A new account's quota can be as low as 10 or 50, so there nothing can be reserved.
 */
export const LAMBDA_UNRESERVED_CONCURRENCY_MINIMUM = 100;

/** The bounds of a reserved concurrency setting (`mcpReservedConcurrency`, `publisherReservedConcurrency`). */
export const RESERVED_CONCURRENCY_BOUNDS = { min: 1, max: 1000 } as const;

/**
 * The publisher's reserved concurrency unless the stage sets `publisherReservedConcurrency`. The
 * bus rule invokes it asynchronously, so there is no event source to cap: the reservation is the
 * cap, and a burst over it is throttled and retried by Lambda's asynchronous queue (for up to the
 * target's two hours), delayed rather than lost. At about 35 ms an event, 50 take about 1,400
 * events a second.
 */
export const DEFAULT_PUBLISHER_RESERVED_CONCURRENCY = 50;

/** The MCP function's reserved concurrency unless the stage sets `mcpReservedConcurrency`. */
export const DEFAULT_MCP_RESERVED_CONCURRENCY = 10;

/**
 * The job worker's consumption of the jobs queue, read by the CDK event source
 * and the local stack alike: one message per invocation (a slice is already a
 * batch of replays), a timeout well above one slice's replays, the visibility
 * timeout six times it, and the receives before a message is dead-lettered.
 */
export const JOB_WORKER_CONSUMER = {
  batchSize: 1,
  maxConcurrency: 2,
  timeoutSeconds: 60,
  visibilityTimeoutSeconds: 6 * 60,
  maxReceives: 5,
} as const;

/** Replays a recovery job writes per second unless the stage sets `recoveryRatePerSecond`. */
export const DEFAULT_RECOVERY_RATE_PER_SECOND = 20;

/** The bounds of the `recoveryRatePerSecond` setting (one slice's replays fit well within the worker's timeout). */
export const RECOVERY_RATE_BOUNDS = { min: 1, max: 200 } as const;

/**
 * The CORS the MCP endpoint answers with, in one list: the deployed function
 * URL's CORS configuration is built from it (lib/constructs/mcp-endpoint.ts),
 * and the function's own OPTIONS answer (what the local server sends) too. Only
 * POST: the server is stateless and answers JSON, so there is no GET event
 * stream and no DELETE of a session. The headers are what MCP clients send: the
 * token, JSON, the negotiated protocol version, and the session and resumption
 * headers some clients send even to a stateless server.
 */
export const MCP_CORS = {
  /**
   * The origins whose pages may call the endpoint, by default none: an MCP client is a program,
   * not a web page, and a browser page that holds a workspace token is what CORS exists to stop.
   * The `mcpAllowedOrigins` setting (lib/config.ts) defaults to this list; `["*"]` there opens it.
   */
  defaultAllowedOrigins: [] as readonly string[],
  allowedMethods: ['POST'],
  allowedHeaders: ['authorization', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'],
  exposedHeaders: ['mcp-session-id', 'mcp-protocol-version', 'x-trace-id'],
  maxAgeSeconds: 3600,
} as const;

/**
 * The KMS encryption context of every data key that seals a signing secret
 * (docs/architecture.md#secrets): the sealer passes it on each GenerateDataKey and Decrypt, and
 * the key's grants (lib/constructs/secrets-key.ts) allow only requests that carry it.
 */
export const KMS_ENCRYPTION_CONTEXT = { purpose: 'webhooks-endpoint-signing-secret' } as const;

/** The console bundle's page: what the bundler writes (lib/console) and the console function serves for `/console`. */
export const CONSOLE_INDEX = 'index.html';
