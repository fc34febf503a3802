/**
 * The service's metrics in Embedded Metric Format (docs/operations.md): the real publisher,
 * dispatchers (fast and slow lane), dead-letter consumer and operations, on DynamoDB Local and a
 * loopback receiver, write EMF documents on stdout with the namespace, names, units and dimensions
 * of lambdas/contract/metrics.ts; one flush per invocation (one document per dimension
 * combination); never a workspace or an endpoint as a dimension.
 */
import type { Context, EventBridgeEvent, SQSEvent, SQSBatchResponse } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { lambdaContext } from '../../bin/local/lambda-loader';
import { emfWriter } from '../../lambdas/composition/metrics';
import { METRIC_DIMENSIONS, METRICS, METRICS_NAMESPACE } from '../../lambdas/contract/metrics';
import { DISABLE_THRESHOLD, MAX_REQUEUES } from '../../lambdas/domain/delivery-lifecycle';
import type { PublishResult } from '../../lambdas/pipeline/publisher';
import type { DeliveryMessage } from '../../lambdas/queue/delivery-queue';
import { getDelivery } from '../../lambdas/store/deliveries';
import type { EndpointRecord } from '../../lambdas/store/endpoints';
import { seedEndpoint, testSealer } from '../helpers/pipeline';
import { scriptedReceiver } from '../helpers/scripted-receiver';
import { freshTable } from '../helpers/table';

const STAGE = 'metrics-test';

/** One EMF document as CloudWatch reads it. */
interface EmfDocument {
  readonly _aws: {
    Timestamp: number;
    CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[];
  };
  readonly [key: string]: unknown;
}

type SqsHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

let table: Awaited<ReturnType<typeof freshTable>>;
let receiver: Awaited<ReturnType<typeof scriptedReceiver>>;
let restore: () => void;
let publish: (event: EventBridgeEvent<string, { workspace?: unknown; payload?: unknown }>) => Promise<PublishResult>;
let dispatcherHandler: (lane: 'fast' | 'slow' | 'only') => SqsHandler;
let deadLetter: SqsHandler;
/** Every workspace and endpoint id of the file: none may be a dimension or appear in a document. */
const ids: string[] = [];

beforeAll(async () => {
  table = await freshTable();
  // The path picks the answer: /ok 200, /gone 404 (permanent), anything else 500.
  receiver = await scriptedReceiver((req, res) => {
    res.statusCode = req.path.endsWith('/ok') ? 200 : req.path.endsWith('/gone') ? 404 : 500;
    res.end();
  });
  const env = { ...process.env };
  Object.assign(process.env, {
    TABLE_NAME: table.tableName,
    DYNAMODB_ENDPOINT: inject('dynamoDbEndpoint'),
    ALLOW_LOOPBACK_TARGETS: 'true',
    DELIVERY_QUEUE_URL: 'test:deliveries',
    SLOW_DELIVERY_QUEUE_URL: 'test:slow',
    DEAD_LETTER_QUEUE_URL: 'test:dlq',
    JOB_QUEUE_URL: 'test:jobs',
    STAGE,
    // One rest_write request per minute per token, one replay per minute per workspace: the second is refused.
    RATE_LIMITS: JSON.stringify({ rest_write: { limit: 1, windowSeconds: 60 } }),
    WORKSPACE_LIMITS: JSON.stringify({ replaysPerMinute: 1 }),
    POWERTOOLS_METRICS_DISABLED: 'false',
  });
  const runtime = await import('../../lambdas/composition/runtime');
  runtime.useAdapters({
    deliveryQueue: () => ({ send: async () => undefined }),
    messageDelayer: () => ({ delay: async () => undefined }),
    domainEvents: () => ({ put: async (events) => events.map(() => null) }),
    jobQueue: () => ({ send: async () => undefined }),
    secretSealer: () => testSealer,
    metrics: emfWriter,
  });
  restore = () => {
    runtime.useAdapters(runtime.awsAdapters);
    process.env = env;
  };
  ({ handler: publish } = await import('../../lambdas/functions/publisher'));
  ({ dispatcherHandler } = await import('../../lambdas/functions/dispatcher'));
  ({ handler: deadLetter } = await import('../../lambdas/functions/dead-letter'));
});

afterAll(async () => {
  restore?.();
  await receiver?.stop();
  await table?.drop();
});

/** What `run` returns and the EMF documents it writes on stdout (nothing else reaches stdout meanwhile). */
async function captured<T>(run: () => Promise<T>): Promise<{ result: T; docs: EmfDocument[] }> {
  const written: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
  let result: T;
  try {
    result = await run();
  } finally {
    spy.mockRestore();
  }
  const docs = written
    .join('')
    .split('\n')
    .filter((line) => line.startsWith('{"_aws"'))
    .map((line) => JSON.parse(line) as EmfDocument);
  return { result, docs };
}

/** The EMF documents `run` writes on stdout. */
async function emitted(run: () => Promise<unknown>): Promise<EmfDocument[]> {
  return (await captured(run)).docs;
}

/** Publishes a bus event without letting its metrics reach the test's output. */
async function published(event: EventBridgeEvent<string, { workspace: string; payload: unknown }>): Promise<PublishResult> {
  return (await captured(() => publish(event))).result;
}

/**
 * Checks every document against the contract (namespace, `stage` plus exactly the metric's declared
 * dimensions, units, no id anywhere) and returns the value of each metric by name and dimension values.
 */
function readDocuments(docs: EmfDocument[]): Map<string, unknown> {
  const byName = new Map(Object.values(METRICS).map((m) => [m.name as string, m]));
  const values = new Map<string, unknown>();
  for (const doc of docs) {
    expect(doc._aws.CloudWatchMetrics).toHaveLength(1);
    const [directive] = doc._aws.CloudWatchMetrics;
    expect(directive!.Namespace).toBe(METRICS_NAMESPACE);
    expect(directive!.Dimensions).toHaveLength(1);
    const dimensions = directive!.Dimensions[0]!;
    expect(dimensions[0]).toBe(METRIC_DIMENSIONS.stage);
    expect(doc[METRIC_DIMENSIONS.stage]).toBe(STAGE);
    const extra = dimensions.slice(1);
    for (const metric of directive!.Metrics) {
      const def = byName.get(metric.Name);
      expect(def, `${metric.Name} is a documented metric`).toBeDefined();
      expect(metric.Unit).toBe(def!.unit);
      expect(extra).toEqual([...def!.dimensions]);
      const key = [metric.Name, ...extra.map((d) => `${d}=${String(doc[d])}`)].join(' ');
      expect(values.has(key), `${key} is written once per invocation`).toBe(false);
      values.set(key, doc[metric.Name]);
    }
    // Only the EMF envelope, the dimensions and the metrics: no metadata that could carry an id.
    expect(Object.keys(doc).sort()).toEqual(['_aws', ...dimensions, ...directive!.Metrics.map((m) => m.Name)].sort());
    const text = JSON.stringify(doc);
    for (const id of ids) expect(text).not.toContain(id);
  }
  return values;
}

/** A bus event of `order.shipped` for `workspace`. */
function busEvent(workspace: string, n: number): EventBridgeEvent<string, { workspace: string; payload: unknown }> {
  return {
    id: `evt-${workspace}-${n}-${Date.now()}`,
    version: '0',
    account: '123456789012',
    time: new Date().toISOString(),
    region: 'eu-west-1',
    resources: [],
    source: 'orders',
    'detail-type': 'order.shipped',
    detail: { workspace, payload: { orderId: `o${n}` } },
  };
}

/** An SQS batch of deliveries, as the queue hands it to a dispatcher. */
async function batchOf(deliveryIds: readonly string[]): Promise<SQSEvent> {
  const messages: DeliveryMessage[] = await Promise.all(
    deliveryIds.map(async (deliveryId) => {
      const d = await getDelivery(table, deliveryId);
      return { deliveryId, endpointId: d!.endpointId, workspace: d!.workspace };
    }),
  );
  return {
    Records: messages.map((m, i) => ({
      messageId: `m-${i}-${m.deliveryId}`,
      receiptHandle: `r-${i}`,
      body: JSON.stringify(m),
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: String(Date.now()),
        SenderId: 'test',
        ApproximateFirstReceiveTimestamp: String(Date.now()),
      },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:local:000000000000:deliveries',
      awsRegion: 'local',
    })),
  };
}

/** An endpoint of `workspace` on the receiver's `path`, remembered as an id no document may carry. */
async function endpoint(
  workspace: string,
  path: string,
  more: { enabled?: boolean; consecutiveFailures?: number } = {},
): Promise<EndpointRecord> {
  const ep = await seedEndpoint(table, { workspace, url: `${receiver.url}/${path}`, eventTypes: ['order.shipped'], ...more });
  ids.push(ep.endpointId);
  if (!ids.includes(workspace)) ids.push(workspace);
  return ep;
}

/** Ids of the fast-lane test, reused by the dead-letter, replay and recovery tests. */
const fastDeliveries: { ok?: string; fail?: string; goneEndpoint?: string } = {};

describe('delivery metrics in EMF', () => {
  it('the publisher: DeliveriesPublished and DeliveriesHeld, one document, `stage` only', async () => {
    await endpoint('metrics-pub', 'ok');
    await endpoint('metrics-pub', 'ok', { enabled: false });
    const docs = await emitted(() => publish(busEvent('metrics-pub', 1)));
    expect(docs).toHaveLength(1);
    expect(docs[0]!._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['stage']]);
    const values = readDocuments(docs);
    expect(Object.fromEntries(values)).toEqual({ DeliveriesPublished: 1, DeliveriesHeld: 1 });
  });

  it('the fast-lane dispatcher: attempts by outcome, durations by lane, first-attempt latency, moves; one flush', async () => {
    const ok = await endpoint('metrics-fast', 'ok');
    const gone = await endpoint('metrics-fast', 'gone');
    const fail = await endpoint('metrics-fast', 'fail');
    // A failure streak: its delivery is moved to the slow lane before any attempt.
    const streak = await endpoint('metrics-fast', 'fail', { consecutiveFailures: 1 });
    const { deliveryIds } = await published(busEvent('metrics-fast', 1));
    expect(deliveryIds).toHaveLength(4);
    const byEndpoint = new Map(await Promise.all(deliveryIds.map(async (id) => [(await getDelivery(table, id))!.endpointId, id] as const)));
    fastDeliveries.ok = byEndpoint.get(ok.endpointId);
    fastDeliveries.fail = byEndpoint.get(fail.endpointId);
    fastDeliveries.goneEndpoint = gone.endpointId;
    expect(byEndpoint.get(gone.endpointId) && byEndpoint.get(streak.endpointId)).toBeTruthy();

    const event = await batchOf(deliveryIds);
    const docs = await emitted(() => dispatcherHandler('fast')(event, lambdaContext('dispatcher', 'req-fast')));
    const values = readDocuments(docs);
    // One document per dimension combination: stage only, three outcomes, one lane.
    expect(docs).toHaveLength(5);
    expect(values.get('Attempts outcome=delivered')).toBe(1);
    expect(values.get('Attempts outcome=failed_permanent')).toBe(1);
    expect(values.get('Attempts outcome=failed')).toBe(1);
    expect(values.get('LaneMoves')).toBe(2);
    const durations = values.get('AttemptDuration lane=fast') as number[];
    expect(durations).toHaveLength(3);
    for (const ms of durations) expect(ms).toBeGreaterThanOrEqual(0);
    const firstAttempt = values.get('PublishToFirstAttempt') as number[];
    expect(firstAttempt).toHaveLength(3);
    for (const ms of firstAttempt) expect(ms).toBeGreaterThanOrEqual(0);
    expect(values.has('AutoDisables')).toBe(false);
  });

  it('the slow-lane dispatcher: deferrals, an auto-disable, durations of the slow lane', async () => {
    await endpoint('metrics-slow', 'fail', { consecutiveFailures: DISABLE_THRESHOLD - 1 });
    const deliveryIds: string[] = [];
    for (const n of [1, 2, 3]) deliveryIds.push(...(await published(busEvent('metrics-slow', n))).deliveryIds);
    const event = await batchOf(deliveryIds);
    const docs = await emitted(() => dispatcherHandler('slow')(event, lambdaContext('slow-dispatcher', 'req-slow')));
    const values = readDocuments(docs);
    // Two attempted (the per-endpoint cap), one deferred; the first failure reached the threshold.
    expect(values.get('LaneDeferrals')).toBe(1);
    expect(values.get('AutoDisables')).toBe(1);
    const attempts = [...values].filter(([key]) => key.startsWith('Attempts ')).reduce((sum, [, v]) => sum + (v as number), 0);
    expect(attempts).toBe(2);
    expect(values.get('AttemptDuration lane=slow')).toBeDefined();
    expect(values.has('AttemptDuration lane=fast')).toBe(false);
  });

  it('the dead-letter consumer: Attempts with outcome dead_lettered (a requeue counts nothing)', async () => {
    // The failed delivery of the fast-lane test still has retries: its first dead letter is sent back, no attempt.
    const event = await batchOf([fastDeliveries.fail!]);
    expect(await emitted(() => deadLetter(event, lambdaContext('dead-letter', 'req-dlq-requeue')))).toEqual([]);
    // Given up by the queue as often as it may be: marked.
    const given = {
      Records: event.Records.map((r) => ({ ...r, body: JSON.stringify({ ...JSON.parse(r.body), requeues: MAX_REQUEUES }) })),
    };
    const docs = await emitted(() => deadLetter(given, lambdaContext('dead-letter', 'req-dlq')));
    expect(Object.fromEntries(readDocuments(docs))).toEqual({ 'Attempts outcome=dead_lettered': 1 });
  });

  it('writes nothing when an invocation recorded nothing', async () => {
    // The delivered one again: a terminal row is acked without an attempt.
    const event = await batchOf([fastDeliveries.ok!]);
    expect(await emitted(() => dispatcherHandler('fast')(event, lambdaContext('dispatcher', 'req-none')))).toEqual([]);
  });
});

describe('operation metrics in EMF', () => {
  const caller = { workspace: 'metrics-fast', tokenId: 'tok_metrics', scopes: ['admin'] };

  it('a replay counts in Replays; a replay over the workspace quota in RateLimitRefusals by bucket', async () => {
    const { defaultRuntime } = await import('../../lambdas/composition/runtime');
    const { replayWebhookDelivery } = await import('../../lambdas/operations/deliveries');
    // The dead-lettered delivery of the fast-lane test (its endpoint is enabled).
    const input = { params: { slug: caller.workspace, deliveryId: fastDeliveries.fail! }, query: undefined, body: undefined };
    const first = await emitted(() => replayWebhookDelivery(defaultRuntime().deps, caller, input));
    expect(Object.fromEntries(readDocuments(first))).toEqual({ Replays: 1 });
    const refused = await emitted(() =>
      expect(replayWebhookDelivery(defaultRuntime().deps, caller, input)).rejects.toMatchObject({ tag: 'RateLimited' }),
    );
    expect(Object.fromEntries(readDocuments(refused))).toEqual({ 'RateLimitRefusals bucket=workspace_replay': 1 });
  });

  it('a recovery job started counts in RecoveryJobs; a dry run does not', async () => {
    const { defaultRuntime } = await import('../../lambdas/composition/runtime');
    const { recoverWebhookDeliveries } = await import('../../lambdas/operations/recovery');
    const input = (dryRun: boolean) => ({
      params: { slug: caller.workspace, endpointId: fastDeliveries.goneEndpoint! },
      query: undefined,
      body: { since: new Date(Date.now() - 3_600_000).toISOString(), dryRun },
    });
    expect(await emitted(() => recoverWebhookDeliveries(defaultRuntime().deps, caller, input(true)))).toEqual([]);
    const docs = await emitted(() => recoverWebhookDeliveries(defaultRuntime().deps, caller, input(false)));
    expect(Object.fromEntries(readDocuments(docs))).toEqual({ RecoveryJobs: 1 });
  });

  it('a per-token refusal of the runtime limiter (REST and MCP alike) counts by bucket', async () => {
    const { defaultRuntime } = await import('../../lambdas/composition/runtime');
    const limiter = defaultRuntime().rateLimiter;
    expect(await emitted(() => limiter.hit('rest_write', caller.tokenId))).toEqual([]);
    const docs = await emitted(() => limiter.hit('rest_write', caller.tokenId));
    expect(Object.fromEntries(readDocuments(docs))).toEqual({ 'RateLimitRefusals bucket=rest_write': 1 });
  });
});
