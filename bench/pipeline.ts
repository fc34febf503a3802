/**
 * The pipeline under load: the real local stack (DynamoDB Local, in-process
 * queue with SQS semantics, the real publisher and dispatcher Lambda handlers)
 * delivering to the benchmark's receiver process.
 */
import { createHash } from 'node:crypto';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { EventBridgeEvent } from 'aws-lambda';
import { eventBridgeEvent, type LocalStack } from '../bin/local/stack';
import { loadHandler } from '../bin/local/lambda-loader';
import { fromItem, getDeliveryItems } from '#lambdas/store/deliveries';
import type { CapacityMeter, CapacityRow } from './capacity';
import type { UsageMeter, UsageSnapshot } from './usage';
import type { ReceiverProcess } from './receiver-process';
import { nowMs, quantile, sleep } from './stats';

export const EVENT_TYPE = 'order.shipped';

/** The payload size of the run's events, bytes of JSON (`--payload-bytes`; 1 KiB by default: real events are rarely 100 bytes). */
let payloadBytes = 1024;

/** Sets the payload size of every event the bench publishes from now on. */
export function setPayloadBytes(bytes: number): void {
  payloadBytes = bytes;
}

/**
 * `bytes` characters of base64url from a hash chain seeded by `seed`: padding that deflate barely
 * shrinks (about 6 bits a character), so a summary's stored size is not flattered by compression
 * (docs/architecture.md#delivery-items): real JSON compresses better than this.
 */
function incompressible(bytes: number, seed: number): string {
  let out = '';
  let block = createHash('sha256').update(String(seed)).digest();
  while (out.length < bytes) {
    out += block.toString('base64url');
    block = createHash('sha256').update(block).digest();
  }
  return out.slice(0, bytes);
}

/** The payload of event `i` (the catalogue requires `orderId`), padded by a `notes` field to the run's payload size. */
export function payloadOf(i: number): Record<string, string> {
  const base = {
    orderId: `ord_${String(i).padStart(8, '0')}`,
    carrier: 'DHL',
    trackingNumber: `JD0146000033${String(i).padStart(8, '0')}`,
  };
  const room = payloadBytes - Buffer.byteLength(JSON.stringify({ ...base, notes: '' }));
  return room > 0 ? { ...base, notes: incompressible(room, i) } : base;
}

/** The publisher's Lambda handler, as the bench calls it. */
export type Publisher = (
  e: EventBridgeEvent<string, { workspace?: unknown; payload?: unknown }>,
) => Promise<{ deliveryIds: string[]; queued?: boolean }>;

/** Event `i` of the bench for `workspace`, as EventBridge hands it to the publisher (a fresh event id). */
export function busEvent(workspace: string, i: number): EventBridgeEvent<string, { workspace: string; payload: unknown }> {
  return eventBridgeEvent('bench', EVENT_TYPE, { workspace, payload: payloadOf(i) });
}

/** Percentiles of a sample, ms. */
export interface Percentiles {
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  readonly samples: number;
}

function percentiles(values: readonly number[]): Percentiles {
  return {
    p50: quantile(values, 0.5),
    p90: quantile(values, 0.9),
    p99: quantile(values, 0.99),
    max: quantile(values, 1),
    samples: values.length,
  };
}

/** What one measured phase observed. */
export interface PhaseResult {
  readonly events: number;
  /** Deliveries the publisher created (one endpoint: one per event). */
  readonly deliveries: number;
  readonly publishErrors: number;
  /** Rows `delivered` with exactly one attempt when the phase ended. */
  readonly firstTryDelivered: number;
  /** Rows in any other state (pending, failed, …) when the phase ended. */
  readonly notFirstTry: number;
  readonly receiverRequests: number;
  readonly receiverDuplicates: number;
  readonly receiverBadBodies: number;
  readonly pipelineErrors: number;
  /** First publish call → last record done (queue empty), s. */
  readonly seconds: number;
  /** First publish call → last publish returned, s. */
  readonly publishSeconds: number;
  /** First-try delivered rows / seconds. */
  readonly deliveredPerSecond: number;
  /** Published events / publishSeconds. */
  readonly publishedPerSecond: number;
  /** Publisher call start → the receiver has the whole request. */
  readonly latencyMs: Percentiles;
  /** Publisher call start → it returned (rows written, messages queued). */
  readonly publishCallMs: Percentiles;
  /** Publisher returned → the receiver has the whole request (queue wait, batching window, dispatcher reads, signing, POST). */
  readonly queueToReceiptMs: Percentiles;
  readonly capacity: { rows: CapacityRow[]; totals: { calls: number; rcu: number; wcu: number; missing: number } };
  /** Lambda, SQS, EventBridge, logs and KMS counted over the phase (bench/usage.ts). */
  readonly usage: UsageSnapshot;
  /** The payload size of the phase's events, bytes of JSON. */
  readonly payloadBytes: number;
  readonly timedOut: boolean;
}

/** Drives load through a running stack. */
export class PipelineDriver {
  private publisher: Publisher | undefined;

  constructor(
    private readonly stack: LocalStack,
    private readonly receiver: ReceiverProcess,
    private readonly meter: CapacityMeter,
    /** Filled by the stack's `onPipelineError`; cleared when a phase starts. */
    private readonly pipelineErrors: string[],
    /** Counts the rest of what the phase asks of AWS; the stack was started with its `instrument()`. */
    private readonly usage: UsageMeter,
  ) {}

  /** Creates an endpoint of the receiver through the REST API (as a user would), with `options` (endpoint options, a description). */
  async createEndpoint(options: Record<string, unknown> = {}): Promise<string> {
    const created = await this.call('POST', '', {
      url: `${this.receiver.url}/hook`,
      eventTypes: [EVENT_TYPE],
      description: 'benchmark receiver',
      ...options,
    });
    return (created as { endpointId: string }).endpointId;
  }

  /** Changes an endpoint through the REST API. */
  async updateEndpoint(endpointId: string, changes: Record<string, unknown>): Promise<void> {
    await this.call('PATCH', `/${endpointId}`, changes);
  }

  /** Deletes an endpoint through the REST API. */
  async deleteEndpoint(endpointId: string): Promise<void> {
    await this.call('DELETE', `/${endpointId}`);
  }

  /** A call of the workspace's webhooks routes; throws on anything but a 2xx. */
  private async call(method: string, path: string, body?: unknown): Promise<unknown> {
    const res = await fetch(`${this.stack.apiUrl}/workspaces/${this.stack.workspace}/webhooks${path}`, {
      method,
      headers: { authorization: `Bearer ${this.stack.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} webhooks${path} answered ${res.status}: ${text}`);
    return text ? (JSON.parse(text) as unknown) : undefined;
  }

  private async publishOne(i: number): Promise<{ at: number; returned: number; ids: string[] }> {
    this.publisher ??= await loadHandler<Publisher>('publisher');
    const event = busEvent(this.stack.workspace, i);
    // What a producer's PutEvents puts on the bus; EventBridge then invokes the publisher (asynchronously: one Lambda request).
    this.usage.countBusEvent(event);
    const publisher = this.publisher;
    const at = nowMs();
    const result = await this.usage.invocation('publisher', 0, () => publisher(event));
    const returned = nowMs();
    // Rows written but never enqueued wait for the stuck-pending repair (off here): count it as a failed publish.
    if (result.queued === false) throw new Error(`${result.deliveryIds.length} rows written, enqueue failed`);
    return { at, returned, ids: result.deliveryIds };
  }

  /** Waits until the delivery queue is empty (every message dispatched, recorded and deleted). */
  private async drain(deadline: number): Promise<boolean> {
    while (
      this.stack.queues.deliveries.depth > 0 ||
      this.stack.queues.slowDeliveries.depth > 0 ||
      this.stack.queues.deadLetters.depth > 0
    ) {
      if (nowMs() > deadline) return false;
      await sleep(2);
    }
    return true;
  }

  /**
   * Counts the deliveries `delivered` with exactly one attempt, read as the API reads them (the
   * store's own reader, whatever the item layout), with the stack's own (unmetered) client.
   */
  private async countFirstTry(ids: readonly string[]): Promise<number> {
    const items = await getDeliveryItems(this.stack.table, ids);
    let firstTry = 0;
    for (const item of items.values()) {
      const record = fromItem(item);
      if (record.status === 'delivered' && record.attempts === 1) firstTry++;
    }
    return firstTry;
  }

  /**
   * Publishes `events` events, either closed-loop with `concurrency` publishers
   * (throughput) or open-loop at `ratePerSecond` (latency), then waits until
   * every delivery is recorded. Capacity is counted over exactly this window.
   */
  async phase(options: {
    events: number;
    concurrency?: number;
    ratePerSecond?: number;
    timeoutMs: number;
    firstIndex: number;
  }): Promise<PhaseResult> {
    await this.receiver.reset();
    this.pipelineErrors.length = 0;
    const publishedAt = new Map<string, { at: number; returned: number }>();
    let publishErrors = 0;
    const record = (r: { at: number; returned: number; ids: string[] }) => {
      for (const id of r.ids) publishedAt.set(id, r);
    };
    const fail = (e: unknown) => {
      publishErrors++;
      if (publishErrors <= 3) this.pipelineErrors.push(`publish: ${(e as Error).message}`);
    };

    this.meter.reset();
    this.usage.reset();
    const started = nowMs();
    const deadline = started + options.timeoutMs;
    if (options.ratePerSecond) {
      const gap = 1000 / options.ratePerSecond;
      const inFlight: Promise<void>[] = [];
      for (let i = 0; i < options.events; i++) {
        const wait = started + i * gap - nowMs();
        if (wait > 1) await sleep(wait);
        inFlight.push(this.publishOne(options.firstIndex + i).then(record, fail));
      }
      await Promise.all(inFlight);
    } else {
      let next = 0;
      const worker = async () => {
        for (;;) {
          const i = next++;
          if (i >= options.events) return;
          await this.publishOne(options.firstIndex + i).then(record, fail);
        }
      };
      await Promise.all(Array.from({ length: options.concurrency ?? 8 }, worker));
    }
    const published = nowMs();
    const drained = await this.drain(deadline);
    const done = nowMs();
    const capacity = { rows: this.meter.rows(), totals: this.meter.totals() };
    const usage = this.usage.snapshot();

    const dump = await this.receiver.dump();
    const latencies: number[] = [];
    const publishCalls: number[] = [];
    const afterPublish: number[] = [];
    for (const [id, p] of publishedAt) {
      publishCalls.push(p.returned - p.at);
      const got = dump.firstReceipt[id];
      if (got === undefined) continue;
      latencies.push(got - p.at);
      afterPublish.push(got - p.returned);
    }
    const ids = [...publishedAt.keys()];
    const firstTry = await this.countFirstTry(ids);
    const seconds = (done - started) / 1000;
    const publishSeconds = (published - started) / 1000;
    return {
      events: options.events,
      deliveries: ids.length,
      publishErrors,
      firstTryDelivered: firstTry,
      notFirstTry: ids.length - firstTry,
      receiverRequests: dump.requests,
      receiverDuplicates: dump.duplicates,
      receiverBadBodies: dump.badBodies + dump.missingId,
      pipelineErrors: this.pipelineErrors.length,
      seconds,
      publishSeconds,
      deliveredPerSecond: firstTry / seconds,
      publishedPerSecond: (options.events - publishErrors) / publishSeconds,
      latencyMs: percentiles(latencies),
      publishCallMs: percentiles(publishCalls),
      queueToReceiptMs: percentiles(afterPublish),
      capacity,
      usage,
      payloadBytes,
      timedOut: !drained,
    };
  }
}

/** Result of {@link dynamoDbCallMixRate}. */
export interface CallMixResult {
  readonly events: number;
  readonly concurrency: number;
  readonly seconds: number;
  readonly eventsPerSecond: number;
  readonly callsPerSecond: number;
  /** DynamoDB calls per event of the mix. */
  readonly callsPerEvent: number;
}

/** The calls {@link dynamoDbCallMixRate} makes per event, as the bench prints them. */
export const CALL_MIX =
  'Query subscriptions, PutItem summary, strong Query of the delivery, UpdateItem state (with the first attempt), GetItem endpoint once per 25';

/**
 * A second ceiling: the DynamoDB calls a first-try delivery makes (see {@link CALL_MIX}: the
 * publisher's subscriptions Query and summary put, the dispatcher's read of the delivery's
 * partition, the state update holding the first attempt, and the endpoint read once per batch of 25), with items of
 * similar size and the same index keys, against the same DynamoDB Local, and nothing else: no
 * queue, no HTTP, no signing. Uses its own key space (`BENCH#…`) and the stack's own client (not
 * metered). Refresh it when the write path changes.
 */
export async function dynamoDbCallMixRate(stack: LocalStack, events: number, concurrency: number): Promise<CallMixResult> {
  const { doc, tableName } = stack.table;
  const filler = 'x'.repeat(1024);
  await doc.send(
    new PutCommand({
      TableName: tableName,
      Item: { pk: 'BENCH#ws', sk: 'WEBHOOK#1', enabled: true, eventTypes: [EVENT_TYPE], filler: filler.slice(0, 600) },
    }),
  );
  await doc.send(new PutCommand({ TableName: tableName, Item: { pk: 'BENCH#ws', sk: `SUB#${EVENT_TYPE}#1` } }));
  let next = 0;
  let calls = 0;
  const call = async (send: () => Promise<unknown>) => {
    calls++;
    await send();
  };
  const started = nowMs();
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= events) return;
      const pk = `BENCH#d${i}`;
      // Publisher: the subscriptions of the type, then the summary (with the payload) put if absent, with its gsi2 and log keys.
      await call(() =>
        doc.send(
          new QueryCommand({
            TableName: tableName,
            KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
            ExpressionAttributeValues: { ':pk': 'BENCH#ws', ':p': `SUB#${EVENT_TYPE}#` },
          }),
        ),
      );
      await call(() =>
        doc.send(
          new PutCommand({
            TableName: tableName,
            Item: {
              pk,
              sk: 'META',
              status: 'pending',
              payload: filler,
              gsi2pk: `BENCH#ep#${i % 8}`,
              gsi2sk: pk,
              logpk: `BENCH#log#${i % 16}`,
              logsk: pk,
              eventType: EVENT_TYPE,
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        ),
      );
      // Dispatcher: the delivery's partition, the endpoint once per batch, the state with the first attempt in it.
      await call(() =>
        doc.send(
          new QueryCommand({
            TableName: tableName,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': pk },
            ScanIndexForward: false,
            Limit: 3,
            ConsistentRead: true,
          }),
        ),
      );
      if (i % 25 === 0)
        await call(() =>
          doc.send(new GetCommand({ TableName: tableName, Key: { pk: 'BENCH#ws', sk: 'WEBHOOK#1' }, ConsistentRead: true })),
        );
      await call(() =>
        doc.send(
          new UpdateCommand({
            TableName: tableName,
            Key: { pk, sk: 'STATE' },
            UpdateExpression: 'SET #status = :status, attempts = :one, evidenceCount = :one, firstAttempt = :attempt',
            ConditionExpression: 'attribute_not_exists(pk) OR (evidenceCount = :zero AND #status = :pending)',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: {
              ':status': 'delivered',
              ':one': 1,
              ':zero': 0,
              ':pending': 'pending',
              ':attempt': { ordinal: 1, outcome: 'delivered', responseStatus: 200 },
            },
          }),
        ),
      );
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (nowMs() - started) / 1000;
  return {
    events,
    concurrency,
    seconds,
    eventsPerSecond: events / seconds,
    callsPerSecond: calls / seconds,
    callsPerEvent: calls / events,
  };
}
