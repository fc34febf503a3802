/**
 * The local stack: DynamoDB Local, the table, a seeded workspace and the REST
 * API on localhost, running the same handlers as Lambda. Used by `npm start`
 * and by the HTTP tests.
 */
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { writeConsoleBundle } from '../../lib/console/console-bundle';
import { writeDocsBundle } from '../../lib/docs/docs-bundle';
import {
  busEventDetail,
  createTableContext,
  ensureWorkspace,
  issueToken,
  localSecretSealer,
  problemResponse,
  publishWithRuntime,
  resolveCaller,
  seedMember,
  type DomainEventBus,
  type JobQueue,
  type TableContext,
} from '#lambdas/composition/tools';
import { ensureOutboxTable, ensureTable } from './create-table';
import { dynamoDbQueueStore, ensureQueueTable, memoryQueueStore } from './durable-queue-store';
import { assertPortFree, startDynamoDbLocal, type DynamoDbLocal } from './dynamodb-local';
import { createHttpFront, type ExtraRoute } from './http-front';
import { localPlatformAccess, localPlatformAuthenticator, type LocalPlatformAccess } from './sigv4-credentials';
import type { Context, EventBridgeEvent, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import {
  DEAD_LETTER_CONSUMER,
  DISPATCHER_CONSUMER,
  dispatcherConsumer,
  ENV,
  EVENT_SOURCE,
  JOB_WORKER_CONSUMER,
  MAX_RECEIVES,
  SERVICE_NAME,
  SLOW_LANE_CONSUMER,
} from '#lambdas/contract/deployment';
import { AppError } from '#lambdas/contract/errors';
import { frameAncestorsFrom } from '#lambdas/contract/frame-ancestors';
import { parseConsoleOidc, type ConsoleOidcSettings, type StaffRole } from '#lambdas/contract/console-oidc';
import { EVENTBRIDGE_ENTRY_BYTES, putEventsEntryBytes } from '#lambdas/contract/aws-limits';
import { payloadDepthRefusal } from '#lambdas/contract/input-validation';
import { MAX_PAYLOAD_BYTES } from '#lambdas/contract/limits';
import { SCHEDULED_JOBS } from '#lambdas/domain/scheduled-jobs';
import { InProcessQueue, type BatchConsumer } from './in-process-queue';
import type { AdapterFactories } from '#lambdas/composition/runtime';
import { lambdaContext, loadHandler } from './lambda-loader';
import type { AwsCallRecorder } from './aws-call-recorder';
import { startSchedules } from './scheduler';
import { startOutboxStream } from './outbox-stream';

/** Options of {@link startLocalStack}. */
export interface LocalStackOptions {
  /** API port; 0 picks a free one. @default 3000 */
  readonly port?: number;
  /** Where data, docs and stack.json live. @default '.local' */
  readonly dataDir?: string;
  /** Use an already running DynamoDB (tests); otherwise DynamoDB Local is started. */
  readonly dynamoDbEndpoint?: string;
  /** DynamoDB Local port when started here. @default a free port */
  readonly dynamoDbPort?: number;
  /** Keep DynamoDB Local data in memory instead of under dataDir. @default false */
  readonly inMemory?: boolean;
  /** @default 'webhooks-local' */
  readonly tableName?: string;
  /** Seeded workspace slug. @default 'demo' */
  readonly workspace?: string;
  /** Rate-limit quota overrides (JSON of the `rateLimits` setting). */
  readonly rateLimits?: string;
  /**
   * Per-workspace limit overrides (JSON of the `workspaceLimits` setting); unset, the functions read
   * `WORKSPACE_LIMITS` from the environment as on Lambda, and without it the defaults apply.
   */
  readonly workspaceLimits?: string;
  /**
   * Origins whose pages may frame the console, as the stage setting `consoleFrameAncestors`
   * (loopback ones such as `http://localhost:5173` for a page on this machine); unset, the
   * `CONSOLE_FRAME_ANCESTORS` environment variable (a JSON array) as set around `npm start`, else none.
   */
  readonly consoleFrameAncestors?: readonly string[];
  /**
   * The identity provider staff sign in to the console with, as the stage setting `consoleOidc`
   * (docs/behaviour.md#staff-sign-in), where an `http://localhost` or `http://127.0.0.1` issuer is
   * allowed too (a provider on this machine); unset, the `CONSOLE_OIDC` environment variable (the
   * setting as JSON) as set around `npm start`, else none: token sign-in only. A value the setting's
   * parser refuses fails the start with its problems. The redirect URI to register at the provider
   * is {@link LocalStack.consoleOidcRedirectUri}.
   */
  readonly consoleOidc?: ConsoleOidcInput;
  /** Records per batch of the delivery queue's dispatcher, as the stage setting `dispatcherBatchSize` (over 10: a 1 s batching window). @default 25 */
  readonly dispatcherBatchSize?: number;
  /** Batches of the delivery queue at once, as the stage setting `dispatcherMaxConcurrency`. @default 4 */
  readonly dispatcherMaxConcurrency?: number;
  /**
   * Run the slow lane (docs/behaviour.md#delivery-lanes). `false` is the single-queue pipeline of
   * a stage without one: the benchmark's "one lane" comparison. @default true
   */
  readonly slowLane?: boolean;
  /** How long a REST function may run before the front answers API Gateway's 504 (tests shorten it). @default API Gateway's 29 s */
  readonly integrationTimeoutMs?: number;
  /** Write `.local/stack.json`. @default true */
  readonly writeStackFile?: boolean;
  /** Divides retry delays, visibility timeouts, batching windows and schedule intervals. @default 1 */
  readonly timeScale?: number;
  /**
   * Keep the queues' messages in DynamoDB Local (table `local-queues`), so a kill loses none
   * (docs/architecture.md#the-local-stack); `false` keeps them in memory only, faster, lost on a kill.
   * @default true, unless `inMemory` (a DynamoDB Local in memory keeps nothing across a kill either)
   */
  readonly durableQueues?: boolean;
  /** Run the scheduled jobs (retention, secret expiry, stuck-pending repair). @default true */
  readonly schedules?: boolean;
  /** Called with pipeline errors (a consumer or a job that threw). @default console.error */
  readonly onPipelineError?: (where: string, error: unknown) => void;
  /**
   * Instruments the stack (the benchmark counts queue requests, KMS calls, metrics and invocations
   * through it): decorates the adapter factories the handlers get, and each queue's consumer (the
   * Lambda invocation of a batch), by function name. @default none
   */
  readonly instrument?: {
    readonly adapters?: (own: AdapterFactories) => AdapterFactories;
    readonly consumer?: (name: string, consume: BatchConsumer) => BatchConsumer;
  };
  /**
   * Records every AWS call the functions would make (docs/architecture.md#the-iam-check): the
   * adapters' SQS, EventBridge and KMS requests, the functions' DynamoDB requests, and the queue
   * polling Lambda does with a consumer's role. @default none
   */
  readonly recordAwsCalls?: AwsCallRecorder;
}

/** What a running local stack offers. */
/** The `consoleOidc` setting as written (lambdas/contract/console-oidc.ts fills in the defaults). */
interface ConsoleOidcInput {
  readonly issuer: string;
  readonly clientId: string;
  readonly roles: Readonly<Partial<Record<StaffRole, readonly string[]>>>;
  readonly groupsClaim?: string;
  readonly trustEmailFromIssuer?: boolean;
  readonly scopes?: readonly string[];
  readonly name?: string;
}

export interface LocalStack {
  readonly apiUrl: string;
  /**
   * With staff sign-in on ({@link LocalStackOptions.consoleOidc}): the redirect URI to register for
   * the console's client at the provider, `<apiUrl>/console/` (the deployed stack's
   * `ConsoleOidcRedirectUri`); null when off.
   */
  readonly consoleOidcRedirectUri: string | null;
  readonly mcpUrl: string;
  readonly workspace: string;
  /** Admin token of the seeded workspace. */
  readonly token: string;
  readonly table: TableContext;
  readonly dynamoDbEndpoint: string;
  /** PID of DynamoDB Local when this stack started it. */
  readonly dynamoDbPid: number | null;
  /** The platform API's key pairs (docs/api.md#platform-api): one allowed, one valid but not allowed. */
  readonly platform: LocalPlatformAccess;
  /**
   * The delivery queue, the slow lane's, their dead-letter queue, the jobs queue, and the outbox
   * relay's on-failure queue (in-process, SQS semantics; the last has no consumer: an operator reads it).
   */
  readonly queues: {
    readonly deliveries: InProcessQueue;
    readonly slowDeliveries: InProcessQueue;
    readonly deadLetters: InProcessQueue;
    readonly jobs: InProcessQueue;
    readonly outboxFailures: InProcessQueue;
  };
  /** The outbox table, whose stream the local relay polls (docs/architecture.md#outbox). */
  readonly outboxTableName: string;
  /** Resolves once every event written to the outbox before the call has reached the relay (tests settle on it). */
  outboxCaughtUp(timeoutMs?: number): Promise<void>;
  /** Messages the queues took up from the last run (queued, delayed or in flight when it stopped). */
  readonly restoredMessages: number;
  stop(): Promise<void>;
}

function docsRoute(): ExtraRoute {
  return async (req, _body, url, requestId) => {
    if (req.method !== 'GET' || !(url.pathname === '/openapi.json' || url.pathname.startsWith('/reference'))) return null;
    const handler = await loadHandler<(e: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>>('serve-docs');
    return handler({
      path: url.pathname,
      headers: { host: req.headers.host },
      requestContext: { requestId },
    } as unknown as APIGatewayProxyEvent);
  };
}

/** `/console` and its assets: the console bundle, built into `dir` on the first request (API-only runs never pay for it). */
function consoleRoute(dir: string): ExtraRoute {
  let built = false;
  return async (req, _body, url, requestId) => {
    if (req.method !== 'GET' || !(url.pathname === '/console' || url.pathname.startsWith('/console/'))) return null;
    if (!built) {
      writeConsoleBundle(dir);
      built = true;
    }
    const handler = await loadHandler<(e: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>>('serve-console');
    return handler({
      path: url.pathname,
      headers: { host: req.headers.host },
      requestContext: { requestId },
    } as unknown as APIGatewayProxyEvent);
  };
}

/** The origins that may frame the local console ({@link LocalStackOptions.consoleFrameAncestors}); a list with a word that is not one fails the start. */
function localFrameAncestors(given: readonly string[] | undefined): readonly string[] {
  const raw = given ? JSON.stringify(given) : process.env[ENV.CONSOLE_FRAME_ANCESTORS];
  const list = frameAncestorsFrom(raw);
  if (raw && list.length === 0 && raw.trim() !== '[]')
    throw new Error(
      `${ENV.CONSOLE_FRAME_ANCESTORS} must be a JSON array of origins such as ["http://localhost:5173"] (https://host[:port], or http:// for a loopback host), got ${raw}`,
    );
  return list;
}

/**
 * The local console's staff sign-in ({@link LocalStackOptions.consoleOidc}): null when none is
 * given; a value the setting's parser refuses fails the start with its problems.
 */
function localConsoleOidc(given: ConsoleOidcInput | undefined): ConsoleOidcSettings | null {
  const raw = given ? JSON.stringify(given) : process.env[ENV.CONSOLE_OIDC];
  if (raw === undefined || raw.trim() === '') return null;
  const problems: string[] = [];
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    problems.push(`it is not JSON: ${raw}`);
  }
  const settings = problems.length === 0 ? parseConsoleOidc(value, problems, true) : null;
  if (problems.length > 0)
    throw new Error(
      `${ENV.CONSOLE_OIDC} must be the consoleOidc setting as JSON, such as {"issuer":"http://localhost:8080","clientId":"webhooks-console","roles":{"admin":["webhooks-admins"]}}: ${problems.join('; ')}`,
    );
  return settings;
}

/**
 * `POST /local/events`: the local stand-in for EventBridge PutEvents on the
 * domain-events bus (`npm run admin -- publish` uses it). Local stack only.
 * `{id?, workspace, type, payload}`: `id` stands in for the EventBridge event id, so
 * posting an id again is a redelivery of that event (same id, same `time`: nothing new).
 * An event whose PutEvents entry would be over EventBridge's limit is refused (413
 * `PayloadTooLarge`, the tag the publisher gives an oversized payload), as PutEvents would; one
 * nested too deep is refused as the publisher refuses it, before its size is measured.
 * The publisher runs before the answer, so a 202 means its messages are kept in the durable
 * queues: a kill after it loses none of the event's deliveries.
 */
function localEventsRoute(): ExtraRoute {
  // EventBridge retries an event with its original `time`; the stand-in remembers it per id (bounded).
  const firstSeen = new Map<string, string>();
  const timeOf = (id: string): string => {
    const known = firstSeen.get(id);
    if (known) return known;
    if (firstSeen.size >= 10_000) firstSeen.delete(firstSeen.keys().next().value!);
    const time = new Date().toISOString();
    firstSeen.set(id, time);
    return time;
  };
  return async (req, body, url, requestId) => {
    if (url.pathname !== '/local/events') return null;
    const json = (status: number, value: unknown): APIGatewayProxyResult => ({
      statusCode: status,
      headers: {
        'content-type': status < 300 ? 'application/json' : 'application/problem+json',
        'x-trace-id': requestId,
        'cache-control': 'no-store',
      },
      body: JSON.stringify(value),
    });
    if (req.method !== 'POST')
      return json(404, {
        type: 'urn:problem:webhooks:RouteNotFound',
        title: 'No such route',
        status: 404,
        detail: 'POST only',
        tag: 'RouteNotFound',
        traceId: requestId,
      });
    let event: { id?: unknown; workspace?: unknown; type?: unknown; payload?: unknown };
    try {
      const parsed = JSON.parse(body.toString('utf8')) as unknown;
      // Anything but an object is an event with no fields: refused below as an unknown type.
      event = parsed !== null && typeof parsed === 'object' ? parsed : {};
    } catch {
      return json(400, {
        type: 'urn:problem:webhooks:ValidationError',
        title: 'The request is not valid',
        status: 400,
        detail: 'Body is not JSON',
        tag: 'ValidationError',
        traceId: requestId,
      });
    }
    try {
      if (event.id !== undefined && (typeof event.id !== 'string' || event.id.length === 0 || event.id.length > 256)) {
        const message = 'id must be a string of 1 to 256 characters';
        throw new AppError('ValidationError', message, { issues: [{ path: 'body.id', message }] });
      }
      const id = typeof event.id === 'string' ? event.id : null;
      const workspace = typeof event.workspace === 'string' ? event.workspace : '';
      const type = typeof event.type === 'string' ? event.type : '';
      // Before the entry's size: measuring it stringifies the payload, recursively.
      const tooDeep = payloadDepthRefusal(event.payload);
      if (tooDeep) throw tooDeep;
      // The entry `npm run admin -- publish --bus` would put: EventBridge refuses it over its limit.
      const entryBytes = putEventsEntryBytes({
        source: EVENT_SOURCE,
        detailType: type,
        detail: JSON.stringify({ workspace, payload: event.payload }),
      });
      if (entryBytes > EVENTBRIDGE_ENTRY_BYTES)
        throw new AppError(
          'PayloadTooLarge',
          `The EventBridge entry would be ${entryBytes} bytes; PutEvents refuses an entry over ${EVENTBRIDGE_ENTRY_BYTES} (a payload of at most ${MAX_PAYLOAD_BYTES} bytes of JSON always fits)`,
        );
      const result = await publishWithRuntime({
        id: id ?? randomUUID(),
        time: id ? timeOf(id) : new Date().toISOString(),
        workspace,
        type,
        payload: event.payload,
      });
      return json(202, result);
    } catch (e) {
      return problemResponse(e, requestId, url.pathname);
    }
  };
}

/** `detail` as EventBridge hands it to a rule's target (here, the publisher), with a fresh event id. */
export function eventBridgeEvent<T>(source: string, detailType: string, detail: T): EventBridgeEvent<string, T> {
  return {
    id: randomUUID(),
    version: '0',
    account: 'local',
    time: new Date().toISOString(),
    region: 'local',
    resources: [],
    source,
    'detail-type': detailType,
    detail,
  };
}

/** Starts the local stack. */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const dataDir = resolve(options.dataDir ?? '.local');
  const port = options.port ?? 3000;
  const slug = options.workspace ?? 'demo';
  // Checked before anything starts: a bad setting fails the start at once, leaving nothing running.
  const consoleOidc = localConsoleOidc(options.consoleOidc);
  if (port !== 0) await assertPortFree(port, 'the local API');
  mkdirSync(dataDir, { recursive: true });

  let dynamo: DynamoDbLocal | undefined;
  const endpoint =
    options.dynamoDbEndpoint ??
    (dynamo = await startDynamoDbLocal({
      ...(options.dynamoDbPort ? { port: options.dynamoDbPort } : {}),
      ...(options.inMemory ? {} : { dataDir: join(dataDir, 'dynamodb') }),
    })).endpoint;
  try {
    const tableName = options.tableName ?? 'webhooks-local';
    const table = createTableContext({ tableName, endpoint });
    await ensureTable(table);
    // The outbox of the service's own events, beside the table, with the stream the local relay polls.
    const outboxTableName = `${tableName}-outbox`;
    const outboxStreamArn = await ensureOutboxTable(table, outboxTableName);

    // The pipeline: SQS, its DLQ and EventBridge stand in-process, injected into the composition root below.
    // The queues keep their messages in DynamoDB Local, next to the table, so a kill loses none.
    const durable = options.durableQueues ?? !options.inMemory;
    if (durable) await ensureQueueTable(table.doc);
    const store = durable ? dynamoDbQueueStore(table.doc, tableName) : memoryQueueStore();
    const timeScale = options.timeScale ?? 1;
    const report = options.onPipelineError ?? ((where: string, e: unknown) => console.error(`[${where}]`, e));
    const deadLetters = new InProcessQueue({
      name: 'deliveries-dlq',
      store,
      batchSize: DEAD_LETTER_CONSUMER.batchSize,
      maxConcurrency: DEAD_LETTER_CONSUMER.maxConcurrency,
      timeScale,
      onError: (e) => report('dead-letter', e),
    });
    // The same rule as the deployed event source: a batch over 10 gets the 1 s window.
    const consumer = dispatcherConsumer(
      options.dispatcherBatchSize ?? DISPATCHER_CONSUMER.batchSize,
      options.dispatcherMaxConcurrency ?? DISPATCHER_CONSUMER.maxConcurrency,
    );
    const deliveries = new InProcessQueue({
      name: 'deliveries',
      store,
      ...consumer,
      deadLetterQueue: deadLetters,
      maxReceiveCount: MAX_RECEIVES,
      timeScale,
      onError: (e) => report('dispatcher', e),
    });
    // The slow lane (docs/behaviour.md#delivery-lanes): its own queue and consumer, the same dead-letter queue.
    const slowDeliveries = new InProcessQueue({
      name: 'deliveries-slow',
      store,
      ...SLOW_LANE_CONSUMER,
      deadLetterQueue: deadLetters,
      maxReceiveCount: MAX_RECEIVES,
      timeScale,
      onError: (e) => report('slow-dispatcher', e),
    });
    const deliveryQueues: Record<string, InProcessQueue> = {
      'local:deliveries': deliveries,
      'local:deliveries-slow': slowDeliveries,
      'local:deliveries-dlq': deadLetters,
    };
    const deliveryQueueAt = (url: string) => {
      const queue = deliveryQueues[url];
      if (!queue) throw new Error(`No local delivery queue ${url}`);
      return queue;
    };
    // Recovery jobs run the same way: their own queue (one message per slice, delayed between slices), the same worker handler.
    const jobDeadLetters = new InProcessQueue({ name: 'jobs-dlq', store, timeScale, onError: (e) => report('jobs-dlq', e) });
    const jobs = new InProcessQueue({
      name: 'jobs',
      store,
      batchSize: JOB_WORKER_CONSUMER.batchSize,
      maxConcurrency: JOB_WORKER_CONSUMER.maxConcurrency,
      visibilityTimeoutSeconds: JOB_WORKER_CONSUMER.visibilityTimeoutSeconds,
      maxReceiveCount: JOB_WORKER_CONSUMER.maxReceives,
      deadLetterQueue: jobDeadLetters,
      timeScale,
      onError: (e) => report('recovery-worker', e),
    });
    const jobQueue: JobQueue = {
      send: async (message, delaySeconds) => jobs.sendBody(JSON.stringify({ jobId: message.jobId }), delaySeconds),
    };
    // The bus the outbox relay puts on: each event goes to the publisher as EventBridge's rule hands
    // it over (a fresh event id; the outbox id in `detail`), within the put, so a put that fails is retried.
    const events: DomainEventBus = {
      async put(batch) {
        const publish = await loadHandler<(e: EventBridgeEvent<string, unknown>) => Promise<unknown>>('publisher');
        const results: (string | null)[] = [];
        for (const e of batch) {
          try {
            await publish({ ...eventBridgeEvent(EVENT_SOURCE, e.type, JSON.parse(busEventDetail(e)) as unknown), time: e.createdAt });
            results.push(null);
          } catch (error) {
            results.push(`InternalFailure: ${(error as Error).message}`);
          }
        }
        return results;
      },
    };
    // The relay's on-failure destination: what the relay gave up on waits here for an operator.
    const outboxFailures = new InProcessQueue({ name: 'outbox-relay-failures', store, timeScale, onError: (e) => report('outbox', e) });

    // The handlers build their adapters from the environment, as on Lambda; the queue and bus
    // names only say that one is bound: the adapters behind them are the in-process ones.
    // As on AWS, where only the console and the sign-in functions carry it; unset when off (a stack
    // started before in this process may have set it).
    if (consoleOidc) process.env[ENV.CONSOLE_OIDC] = JSON.stringify(consoleOidc);
    else delete process.env[ENV.CONSOLE_OIDC];
    Object.assign(process.env, {
      [ENV.DELIVERY_QUEUE_URL]: 'local:deliveries',
      ...(options.slowLane === false ? {} : { [ENV.SLOW_DELIVERY_QUEUE_URL]: 'local:deliveries-slow' }),
      [ENV.DEAD_LETTER_QUEUE_URL]: 'local:deliveries-dlq',
      [ENV.JOB_QUEUE_URL]: 'local:jobs',
      [ENV.EVENT_BUS_NAME]: 'local:events',
      [ENV.TABLE_NAME]: tableName,
      [ENV.OUTBOX_TABLE_NAME]: outboxTableName,
      [ENV.RATE_LIMIT_TABLE_NAME]: tableName,
      [ENV.DYNAMODB_ENDPOINT]: endpoint,
      [ENV.ALLOW_LOOPBACK_TARGETS]: 'true',
      [ENV.DOCS_DIR]: join(dataDir, 'docs'),
      [ENV.CONSOLE_DIR]: join(dataDir, 'console'),
      [ENV.CONSOLE_FRAME_ANCESTORS]: JSON.stringify(localFrameAncestors(options.consoleFrameAncestors)),
      [ENV.POWERTOOLS_SERVICE_NAME]: SERVICE_NAME,
      [ENV.POWERTOOLS_LOG_LEVEL]: process.env[ENV.POWERTOOLS_LOG_LEVEL] ?? 'WARN',
      AWS_REGION: process.env.AWS_REGION ?? 'local',
      ...(options.rateLimits ? { [ENV.RATE_LIMITS]: options.rateLimits } : {}),
      ...(options.workspaceLimits ? { [ENV.WORKSPACE_LIMITS]: options.workspaceLimits } : {}),
    });
    // The local document admits what this stack's loopback switch (set just above) admits.
    writeDocsBundle(join(dataDir, 'docs'), { loopbackHttp: true });
    // Imported only now: the logger reads POWERTOOLS_LOG_LEVEL when its module loads.
    const { defaultRuntime, useAdapters } = await import('#lambdas/composition/runtime');
    const ownAdapters: AdapterFactories = {
      deliveryQueue: deliveryQueueAt,
      messageDelayer: deliveryQueueAt,
      domainEvents: () => events,
      jobQueue: () => jobQueue,
      // The pacing between a job's slices, shortened like every other delay.
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms / timeScale)),
      // LOCAL ONLY: real envelope encryption under a fixed in-process key, no KMS (docs/architecture.md#secrets).
      secretSealer: () => localSecretSealer(),
      // The queues above divide delays by it; the dispatcher records nextAttemptAt scaled the same.
      timeScale,
    };
    const instrumentedAdapters = options.instrument?.adapters?.(ownAdapters) ?? ownAdapters;
    const recorder = options.recordAwsCalls;
    useAdapters(recorder ? recorder.adapters(instrumentedAdapters) : instrumentedAdapters);
    // Every function's table requests go through the runtime's one client (built here, reused by the handlers).
    if (recorder) recorder.watchTable(defaultRuntime().deps.table.doc);

    const stackFile = join(dataDir, 'stack.json');
    const created = await ensureWorkspace(table, slug, 'Demo workspace');
    if (created) await seedMember(table, slug, 'owner@example.com', 'owner');
    let token: string | undefined;
    let savedStack: Record<string, unknown> | undefined;
    if (existsSync(stackFile)) {
      const saved = JSON.parse(readFileSync(stackFile, 'utf8')) as { token?: string; workspace?: string };
      savedStack = saved;
      if (saved.token && saved.workspace === slug && (await resolveCaller(table, `Bearer ${saved.token}`))?.workspace === slug)
        token = saved.token;
    }
    token ??= (await issueToken(table, slug, { name: 'local admin', scopes: ['admin'] })).token;

    // What a kill left queued or in flight comes back, in-flight messages after their visibility timeout.
    const restored = await Promise.all(
      [deliveries, slowDeliveries, deadLetters, jobs, jobDeadLetters, outboxFailures].map((q) => q.restore()),
    );
    type SqsHandler = (e: SQSEvent, c: Context) => Promise<SQSBatchResponse>;
    const dispatcher = await loadHandler<SqsHandler>('dispatcher');
    const slowDispatcher = await loadHandler<SqsHandler>('slow-dispatcher');
    const deadLetter = await loadHandler<SqsHandler>('dead-letter');
    const instrumented = (name: string, consume: BatchConsumer) => options.instrument?.consumer?.(name, consume) ?? consume;
    // The event source mapping polls each queue with its consumer's role.
    const polled = (name: string, url: string, consume: BatchConsumer): BatchConsumer =>
      recorder
        ? (e) => {
            recorder.recordPolling(name, url);
            return consume(e);
          }
        : consume;
    deliveries.consume(
      polled(
        'dispatcher',
        'local:deliveries',
        instrumented('dispatcher', (e) => dispatcher(e, lambdaContext('dispatcher', randomUUID()))),
      ),
    );
    slowDeliveries.consume(
      polled(
        'slow-dispatcher',
        'local:deliveries-slow',
        instrumented('slow-dispatcher', (e) => slowDispatcher(e, lambdaContext('slow-dispatcher', randomUUID()))),
      ),
    );
    deadLetters.consume(
      polled(
        'dead-letter',
        'local:deliveries-dlq',
        instrumented('dead-letter', (e) => deadLetter(e, lambdaContext('dead-letter', randomUUID()))),
      ),
    );
    const recoveryWorker = await loadHandler<SqsHandler>('recovery-worker');
    jobs.consume(polled('recovery-worker', 'local:jobs', (e) => recoveryWorker(e, lambdaContext('recovery-worker', randomUUID()))));
    // The outbox relay on the outbox table's stream, as its event source mapping runs it.
    const relay = await loadHandler<(e: unknown) => Promise<{ batchItemFailures: { itemIdentifier: string }[] }>>('outbox-relay');
    const outboxStream = startOutboxStream({
      endpoint,
      streamArn: outboxStreamArn,
      relay: (e) => {
        recorder?.recordStreamPolling('outbox-relay', outboxTableName);
        return relay(e);
      },
      onFailure: async (body) => {
        recorder?.recordOnFailure('outbox-relay');
        await outboxFailures.sendBody(body);
      },
      timeScale,
      onError: (e) => report('outbox-relay', e),
    });
    const stopSchedules =
      options.schedules === false
        ? async () => undefined
        : startSchedules(
            SCHEDULED_JOBS.map((job) => ({
              name: job.entry,
              everyMs: job.everyMinutes * 60_000,
              run: async () => (await loadHandler<() => Promise<unknown>>(job.entry))(),
            })),
            timeScale,
            report,
          );

    const platform = localPlatformAccess(savedStack);
    const server = createHttpFront({
      platformAuth: localPlatformAuthenticator(platform),
      extraRoutes: [docsRoute(), consoleRoute(join(dataDir, 'console')), localEventsRoute()],
      // The MCP function, as its function URL invokes it (payload format 2.0, the URL's own limits).
      functionUrls: [{ path: '/mcp', function: 'mcp' }],
      ...(options.integrationTimeoutMs ? { integrationTimeoutMs: options.integrationTimeoutMs } : {}),
    });
    await new Promise<void>((ok, fail) => {
      server.once('error', fail);
      server.listen(port, '127.0.0.1', () => ok());
    });
    const apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const mcpUrl = `${apiUrl}/mcp`;
    // Portal links lead to this stack's console, whose address is known only now.
    process.env[ENV.CONSOLE_URL] = `${apiUrl}/console/`;
    if (options.writeStackFile ?? true)
      writeFileSync(
        stackFile,
        JSON.stringify(
          {
            apiUrl,
            mcpUrl,
            workspace: slug,
            token,
            dynamoDbEndpoint: endpoint,
            tableName,
            platformCredentials: platform.platformCredentials,
            otherCredentials: platform.otherCredentials,
          },
          null,
          2,
        ),
      );

    return {
      apiUrl,
      consoleOidcRedirectUri: consoleOidc ? `${apiUrl}/console/` : null,
      mcpUrl,
      workspace: slug,
      token,
      table,
      dynamoDbEndpoint: endpoint,
      dynamoDbPid: dynamo?.pid ?? null,
      platform,
      queues: { deliveries, slowDeliveries, deadLetters, jobs, outboxFailures },
      outboxTableName,
      outboxCaughtUp: (timeoutMs) => outboxStream.caughtUp(timeoutMs),
      restoredMessages: restored.reduce((a, b) => a + b, 0),
      async stop() {
        await stopSchedules();
        await outboxStream.stop();
        await deliveries.stop();
        await slowDeliveries.stop();
        await deadLetters.stop();
        await jobs.stop();
        await jobDeadLetters.stop();
        await outboxFailures.stop();
        await new Promise<void>((ok) => {
          server.closeAllConnections();
          server.close(() => ok());
        });
        table.doc.destroy();
        await dynamo?.stop();
      },
    };
  } catch (e) {
    await dynamo?.stop();
    throw e;
  }
}
