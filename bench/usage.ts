/**
 * What the pipeline asks of AWS besides DynamoDB, counted while the benchmark runs (the cost model,
 * bench/cost.ts, prices it): Lambda invocations and their durations, SQS requests as SQS bills them
 * (64 KiB chunks), EventBridge events, CloudWatch Logs bytes (what the functions write, at the
 * deployed log level, and their metrics), and key-service (KMS) calls.
 *
 * The counting hooks sit where the local stack lets an instrument in (`startLocalStack`'s
 * `instrument`): the adapter factories the handlers get (queue sends, visibility changes, data
 * keys, the metrics writer) and each queue's consumer (one Lambda invocation per batch, as an SQS
 * event source mapping makes them). Which function is running is carried in an
 * AsyncLocalStorage, so a log line or a DynamoDB call is put on the function that made it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { BatchConsumer } from '../bin/local/in-process-queue';
import type { AdapterFactories } from '#lambdas/composition/runtime';
import { emfWriter } from '#lambdas/composition/metrics';
import { deliveryMessageBody, type DeliveryQueue, type MessageDelayer } from '#lambdas/queue/delivery-queue';
import { envelopeSealer, localDataKeys, type DataKeyService } from '#lambdas/store/secret-sealing';

/** SQS bills a request per 64 KiB chunk of its payload; EventBridge an event per 64 KiB chunk. */
const BILLING_CHUNK_BYTES = 64 * 1024;

/** SQS batch actions take at most 10 messages (SendMessageBatch, ReceiveMessage, DeleteMessageBatch). */
const SQS_BATCH = 10;

/** The invocation running now: its function, and its DynamoDB waits when it is being counted. */
interface Running {
  readonly name: string;
  readonly dynamo?: DynamoWaits;
}

/** The DynamoDB calls of one invocation: how long at least one was in flight, and the calls themselves. */
interface DynamoWaits {
  inFlight: number;
  busySince: number;
  busyMs: number;
  calls: number;
  callMs: number;
  reads: number;
  writes: number;
}

const running = new AsyncLocalStorage<Running>();

/** The function (Lambda) whose code is running now, if any: `publisher`, `dispatcher`, … */
export function currentFunction(): string | undefined {
  return running.getStore()?.name;
}

/** Runs `fn` as an invocation of the function `name` (for attribution only; nothing is counted). */
export function runAs<T>(name: string, fn: () => Promise<T>): Promise<T> {
  return running.run({ name }, fn);
}

/**
 * Marks the start of a DynamoDB call of the running invocation (bench/capacity.ts calls it for
 * every command); call the returned function when it ends. The cost model rescales the time the
 * invocation waited on DynamoDB Local to DynamoDB's own latency (bench/cost.ts).
 */
export function dynamoCallStarted(isRead: boolean): () => void {
  const waits = running.getStore()?.dynamo;
  if (!waits) return () => undefined;
  const started = performance.now();
  if (waits.inFlight++ === 0) waits.busySince = started;
  return () => {
    const ended = performance.now();
    waits.calls++;
    waits.callMs += ended - started;
    if (isRead) waits.reads++;
    else waits.writes++;
    if (--waits.inFlight === 0) waits.busyMs += ended - waits.busySince;
  };
}

/** Invocations of one function. */
export interface FunctionUsage {
  invocations: number;
  /** Sum of the invocations' wall times, ms (what Lambda bills, at 1 ms granularity: see `billedMs`). */
  totalMs: number;
  /** Sum of the invocations' durations rounded up to whole ms, as Lambda bills them. */
  billedMs: number;
  /** Queue records handed to it (0 for the publisher). */
  records: number;
  /** Time at least one DynamoDB call of the invocation was in flight, summed, ms. */
  dynamoBusyMs: number;
  /** Its DynamoDB calls: how many (reads, writes) and their summed round trips, ms. */
  dynamoReads: number;
  dynamoWrites: number;
  dynamoCallMs: number;
  /** SendMessageBatch calls it made (the in-process queue answers at once; SQS takes a round trip). */
  sqsSends: number;
}

/** Everything counted over one phase. */
export interface UsageSnapshot {
  readonly functions: Record<string, FunctionUsage>;
  readonly sqs: {
    /** SendMessageBatch calls (the SQS adapter sends 10 per call) and their billed 64 KiB chunks. */
    sendRequests: number;
    sendChunks: number;
    messagesSent: number;
    /**
     * ReceiveMessage calls the event source mapping needs for the batches it handed out: at least
     * ceil(records / 10) per batch (SQS returns at most 10 per receive). A lower bound: real pollers
     * also make empty and partial receives (a fixed cost per queue, not per delivery).
     */
    receiveRequests: number;
    /** DeleteMessageBatch calls of the event source mapping: ceil(acknowledged / 10) per batch. */
    deleteRequests: number;
    /** ChangeMessageVisibility calls (the retry backoff): none on a first-try delivery. */
    visibilityRequests: number;
  };
  readonly eventBridge: { putEventsEntries: number; billedEvents: number };
  /** Bytes written to stdout/stderr by each function (its log lines and EMF metric documents), and the lines. */
  readonly logs: { bytes: Record<string, number>; lines: Record<string, number> };
  readonly kms: { decrypt: number; generate: number };
}

const emptyFunction = (): FunctionUsage => ({
  invocations: 0,
  totalMs: 0,
  billedMs: 0,
  records: 0,
  dynamoBusyMs: 0,
  dynamoReads: 0,
  dynamoWrites: 0,
  dynamoCallMs: 0,
  sqsSends: 0,
});

function emptySnapshot(): UsageSnapshot {
  return {
    functions: {},
    sqs: { sendRequests: 0, sendChunks: 0, messagesSent: 0, receiveRequests: 0, deleteRequests: 0, visibilityRequests: 0 },
    eventBridge: { putEventsEntries: 0, billedEvents: 0 },
    logs: { bytes: {}, lines: {} },
    kms: { decrypt: 0, generate: 0 },
  };
}

const chunks = (bytes: number) => Math.max(1, Math.ceil(bytes / BILLING_CHUNK_BYTES));

/** The counters and the hooks that fill them. */
export class UsageMeter {
  private current = emptySnapshot();
  private uninstall: (() => void) | undefined;

  /** Starts a new phase: every counter back to zero. */
  reset(): void {
    this.current = emptySnapshot();
  }

  /** A copy of the counters. */
  snapshot(): UsageSnapshot {
    return structuredClone(this.current);
  }

  private fn(name: string): FunctionUsage {
    return (this.current.functions[name] ??= emptyFunction());
  }

  /** Times `invoke` as one invocation of `name` with `records` queue records, running it as that function. */
  async invocation<T>(name: string, records: number, invoke: () => Promise<T>): Promise<T> {
    const dynamo: DynamoWaits = { inFlight: 0, busySince: 0, busyMs: 0, calls: 0, callMs: 0, reads: 0, writes: 0 };
    const started = performance.now();
    try {
      return await running.run({ name, dynamo }, invoke);
    } finally {
      const ms = performance.now() - started;
      const usage = this.fn(name);
      usage.invocations++;
      usage.totalMs += ms;
      usage.billedMs += Math.ceil(ms);
      usage.records += records;
      usage.dynamoBusyMs += dynamo.busyMs;
      usage.dynamoReads += dynamo.reads;
      usage.dynamoWrites += dynamo.writes;
      usage.dynamoCallMs += dynamo.callMs;
    }
  }

  /** One PutEvents entry (a domain event on the bus), billed per 64 KiB chunk of its JSON. */
  countBusEvent(event: unknown): void {
    this.current.eventBridge.putEventsEntries++;
    this.current.eventBridge.billedEvents += chunks(Buffer.byteLength(JSON.stringify(event)));
  }

  /** The local stack's `instrument`: counting adapters and consumers. */
  instrument(): {
    adapters: (own: AdapterFactories) => AdapterFactories;
    consumer: (name: string, consume: BatchConsumer) => BatchConsumer;
  } {
    return {
      adapters: (own) => ({
        ...own,
        deliveryQueue: (url) => this.countingQueue(own.deliveryQueue(url)),
        messageDelayer: (url) => this.countingDelayer(own.messageDelayer(url)),
        // The local key service, counted: each call would be one KMS request (GenerateDataKey / Decrypt).
        secretSealer: () => envelopeSealer(this.countingDataKeys(localDataKeys())),
        // The deployed metrics writer (EMF on stdout, which CloudWatch Logs ingests), so its bytes are counted.
        metrics: (stage) => emfWriter(stage),
      }),
      consumer: (name, consume) => async (event) => {
        const response = await this.invocation(name, event.Records.length, () => consume(event));
        const acknowledged = event.Records.length - response.batchItemFailures.length;
        this.current.sqs.receiveRequests += Math.ceil(event.Records.length / SQS_BATCH);
        this.current.sqs.deleteRequests += Math.ceil(acknowledged / SQS_BATCH);
        return response;
      },
    };
  }

  /** A delivery queue counted as the SQS adapter sends: SendMessageBatch of 10, billed per 64 KiB chunk. */
  private countingQueue(inner: DeliveryQueue): DeliveryQueue {
    return {
      send: async (messages) => {
        for (let i = 0; i < messages.length; i += SQS_BATCH) {
          const batch = messages.slice(i, i + SQS_BATCH);
          this.current.sqs.sendRequests++;
          const name = currentFunction();
          if (name !== undefined) this.fn(name).sqsSends++;
          this.current.sqs.sendChunks += chunks(batch.reduce((n, m) => n + Buffer.byteLength(deliveryMessageBody(m)), 0));
          this.current.sqs.messagesSent += batch.length;
        }
        await inner.send(messages);
      },
    };
  }

  private countingDelayer(inner: MessageDelayer): MessageDelayer {
    return {
      delay: async (receiptHandle, seconds) => {
        this.current.sqs.visibilityRequests++;
        await inner.delay(receiptHandle, seconds);
      },
    };
  }

  private countingDataKeys(inner: DataKeyService): DataKeyService {
    return {
      generate: async () => {
        this.current.kms.generate++;
        return inner.generate();
      },
      decrypt: async (encrypted) => {
        this.current.kms.decrypt++;
        return inner.decrypt(encrypted);
      },
    };
  }

  /**
   * Counts what functions write to stdout and stderr (Lambda sends both to CloudWatch Logs) and
   * keeps their stdout off the terminal (INFO lines and EMF documents; warnings and errors still
   * show). Writes made outside a function pass through.
   */
  captureLogs(): void {
    if (this.uninstall) return;
    const streams = [process.stdout, process.stderr] as const;
    const originals = streams.map((s) => s.write.bind(s));
    streams.forEach((stream, i) => {
      const original = originals[i]!;
      stream.write = (chunk: string | Uint8Array, ...rest: unknown[]) => {
        const pass = () => (original as (...a: unknown[]) => boolean)(chunk, ...rest);
        const swallow = () => {
          rest.find((r): r is () => void => typeof r === 'function')?.();
          return true;
        };
        const name = currentFunction();
        const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
        if (name === undefined) {
          // The REST functions the benchmark calls (endpoint creation) log at INFO too: not measured, kept off the results.
          return stream === process.stdout && /^\{"(level|_aws)":/.test(text) ? swallow() : pass();
        }
        this.current.logs.bytes[name] = (this.current.logs.bytes[name] ?? 0) + Buffer.byteLength(text);
        this.current.logs.lines[name] =
          (this.current.logs.lines[name] ?? 0) + Math.max(1, text.split('\n').filter((l) => l.length > 0).length);
        return stream === process.stderr ? pass() : swallow();
      };
    });
    this.uninstall = () => streams.forEach((stream, i) => (stream.write = originals[i] as typeof stream.write));
  }

  /** Gives stdout and stderr back. */
  releaseLogs(): void {
    this.uninstall?.();
    this.uninstall = undefined;
  }
}
