/**
 * An in-process queue with the SQS semantics the pipeline relies on
 * (docs/architecture.md#the-local-stack): visibility timeout, per-message delay (DelaySeconds), per-message receive count, ChangeMessageVisibility,
 * redrive to a dead-letter queue after `maxReceiveCount` receives, batches of
 * `batchSize` gathered within a batching window, at most `maxConcurrency`
 * batches in flight, partial batch responses. `timeScale` divides every delay.
 * It stands in for SQS + the event source mapping on one machine. Every change of a message is
 * written to its {@link QueueStore} before it takes effect (a send resolves once the message is
 * kept, a batch is handed over once its receive is kept), so a queue restored from a durable store
 * after a kill delivers everything queued or in flight at least once, in-flight messages after
 * their visibility timeout, with their receive counts.
 */
import { randomUUID } from 'node:crypto';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { DISPATCHER_CONSUMER, MAX_RECEIVES } from '#lambdas/contract/deployment';
import { SQS_BATCH_ENTRIES, SQS_MESSAGE_BYTES, sqsMessageBytes } from '#lambdas/contract/aws-limits';
import {
  deliveryMessageBody,
  messageDelay,
  type DeliveryMessage,
  type DeliveryQueue,
  type MessageDelayer,
} from '#lambdas/composition/tools';
import { memoryQueueStore, type QueueStore, type StoredMessage } from './durable-queue-store';

/**
 * SQS's refusal of a message or a batch over {@link SQS_MESSAGE_BYTES}, named as the SDK names it
 * (`InvalidParameterValue` for SendMessage, `BatchRequestTooLong` for SendMessageBatch), so the
 * sender fails locally exactly where it fails on AWS.
 */
export class SqsRefusal extends Error {
  constructor(
    override readonly name: 'InvalidParameterValue' | 'BatchRequestTooLong',
    message: string,
  ) {
    super(message);
  }
}

/** Consumes a batch, as a Lambda on an SQS event source does. */
export type BatchConsumer = (event: SQSEvent) => Promise<SQSBatchResponse>;

/** Options of an {@link InProcessQueue}. */
export interface InProcessQueueOptions {
  readonly name: string;
  /** @default DISPATCHER_CONSUMER.visibilityTimeoutSeconds */
  readonly visibilityTimeoutSeconds?: number;
  /** Receives before redrive to `deadLetterQueue`. @default MAX_RECEIVES */
  readonly maxReceiveCount?: number;
  readonly deadLetterQueue?: InProcessQueue;
  /** @default DISPATCHER_CONSUMER.batchSize */
  readonly batchSize?: number;
  /** @default DISPATCHER_CONSUMER.maxBatchingWindowSeconds */
  readonly maxBatchingWindowSeconds?: number;
  /** @default DISPATCHER_CONSUMER.maxConcurrency */
  readonly maxConcurrency?: number;
  /** Divides every delay (visibility, backoff, batching window). @default 1 */
  readonly timeScale?: number;
  /** Called when a consumer throws (the batch then stays, as on Lambda errors). */
  readonly onError?: (error: unknown) => void;
  /**
   * Where the messages are kept; the queue's `name` is their key there. The local stack gives
   * the DynamoDB Local one, so messages survive a kill. @default a store in memory
   */
  readonly store?: QueueStore;
}

interface Message {
  readonly messageId: string;
  readonly body: string;
  readonly sentAt: number;
  receiveCount: number;
  visibleAt: number;
  receiptHandle: string | null;
}

/** The queue. Start consuming with {@link InProcessQueue.consume}. */
export class InProcessQueue implements DeliveryQueue, MessageDelayer {
  private readonly messages = new Map<string, Message>();
  private readonly byReceipt = new Map<string, Message>();
  private consumer: BatchConsumer | undefined;
  private timer: NodeJS.Timeout | undefined;
  private inFlight = new Set<Promise<void>>();
  /** Redrives and deletes being written (they hold no consumer slot). */
  private readonly writes = new Set<Promise<void>>();
  private readonly scale: number;
  private readonly store: QueueStore;

  private options: InProcessQueueOptions;

  constructor(options: InProcessQueueOptions) {
    this.options = options;
    this.scale = options.timeScale ?? 1;
    this.store = options.store ?? memoryQueueStore();
  }

  /**
   * Takes up the messages its store keeps (after a restart: those queued, delayed or in flight
   * when the process died), each with its visibility and receive count, as SQS still holds them
   * after a consumer crashed. Call before {@link InProcessQueue.consume}; returns how many.
   */
  async restore(): Promise<number> {
    const kept = await this.store.load(this.options.name);
    for (const stored of kept) {
      const m: Message = { ...stored };
      this.messages.set(m.messageId, m);
      if (m.receiptHandle) this.byReceipt.set(m.receiptHandle, m);
    }
    return kept.length;
  }

  /**
   * Changes how batches are formed from now on, as updating the event source mapping does (the
   * benchmark compares dispatcher settings on one stack).
   */
  reconfigure(consumer: Pick<InProcessQueueOptions, 'batchSize' | 'maxBatchingWindowSeconds' | 'maxConcurrency'>): void {
    this.options = { ...this.options, ...consumer };
  }

  /** Messages not yet deleted (visible or in flight). */
  get depth(): number {
    return this.messages.size;
  }

  /**
   * Enqueues delivery messages as the SQS adapter sends them (lambdas/queue/sqs-delivery-queue.ts):
   * SendMessageBatch calls of {@link SQS_BATCH_ENTRIES}, one after the other. A batch whose
   * messages total over {@link SQS_MESSAGE_BYTES} is refused whole (`BatchRequestTooLong`, the
   * batches before it kept), as SQS refuses it.
   */
  async send(messages: readonly DeliveryMessage[]): Promise<void> {
    for (let i = 0; i < messages.length; i += SQS_BATCH_ENTRIES) {
      const batch = messages.slice(i, i + SQS_BATCH_ENTRIES).map((m) => ({ body: deliveryMessageBody(m), delay: messageDelay(m) }));
      const bytes = batch.reduce((n, m) => n + sqsMessageBytes(m.body), 0);
      if (bytes > SQS_MESSAGE_BYTES)
        throw new SqsRefusal('BatchRequestTooLong', `Batch requests cannot be longer than ${SQS_MESSAGE_BYTES} bytes (this one: ${bytes})`);
      await Promise.all(batch.map((m) => this.keep(m.body, m.delay)));
    }
  }

  /**
   * SendMessage: enqueues a raw body, visible after `delaySeconds` (SQS DelaySeconds; divided by
   * the time scale like every delay). Resolves once the store keeps it, as SendMessage answers once
   * SQS does; a body over {@link SQS_MESSAGE_BYTES} is refused (`InvalidParameterValue`).
   */
  async sendBody(body: string, delaySeconds = 0): Promise<void> {
    const bytes = sqsMessageBytes(body);
    if (bytes > SQS_MESSAGE_BYTES)
      throw new SqsRefusal(
        'InvalidParameterValue',
        `One or more parameters are invalid. Reason: Message must be shorter than ${SQS_MESSAGE_BYTES} bytes (this one: ${bytes})`,
      );
    await this.keep(body, delaySeconds);
  }

  /** Keeps a message SQS accepted (a redrive moves one as it was, without a new size check). */
  private async keep(body: string, delaySeconds: number): Promise<void> {
    const messageId = randomUUID();
    const visibleAt = Date.now() + (Math.max(0, delaySeconds) * 1000) / this.scale;
    const message: Message = { messageId, body, sentAt: Date.now(), receiveCount: 0, visibleAt, receiptHandle: null };
    await this.store.put(this.options.name, message);
    this.messages.set(messageId, message);
    if (visibleAt > Date.now()) setTimeout(() => this.kick(), visibleAt - Date.now()).unref();
    else this.kick();
  }

  /** ChangeMessageVisibility of a received message. */
  async delay(receiptHandle: string, seconds: number): Promise<void> {
    const message = this.byReceipt.get(receiptHandle);
    if (!message) return;
    message.visibleAt = Date.now() + (seconds * 1000) / this.scale;
    await this.store.put(this.options.name, this.stored(message));
  }

  /** Starts delivering batches to `consumer`. */
  consume(consumer: BatchConsumer): void {
    this.consumer = consumer;
    this.timer = setInterval(() => this.poll(), Math.max(5, Math.min(100, 1000 / this.scale)));
    this.timer.unref();
  }

  /** Stops consuming and waits for the batches in flight. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.consumer = undefined;
    await Promise.allSettled([...this.inFlight]);
    await Promise.allSettled([...this.writes]);
  }

  private kick(): void {
    if (this.consumer) setImmediate(() => this.poll());
  }

  private poll(): void {
    const consumer = this.consumer;
    if (!consumer) return;
    const batchSize = this.options.batchSize ?? DISPATCHER_CONSUMER.batchSize;
    const windowMs = ((this.options.maxBatchingWindowSeconds ?? DISPATCHER_CONSUMER.maxBatchingWindowSeconds) * 1000) / this.scale;
    while (this.inFlight.size < (this.options.maxConcurrency ?? DISPATCHER_CONSUMER.maxConcurrency)) {
      const now = Date.now();
      const visible = [...this.messages.values()].filter((m) => m.visibleAt <= now).sort((a, b) => a.visibleAt - b.visibleAt);
      if (visible.length === 0) return;
      // Like the event source mapping: a full batch, or the oldest has waited out the window.
      if (visible.length < batchSize && now - visible[0]!.visibleAt < windowMs) return;
      const records: SQSRecord[] = [];
      for (const m of visible.slice(0, batchSize)) {
        m.receiveCount++;
        if (this.options.deadLetterQueue && m.receiveCount > (this.options.maxReceiveCount ?? MAX_RECEIVES)) {
          this.redrive(m, this.options.deadLetterQueue);
          continue;
        }
        if (m.receiptHandle) this.byReceipt.delete(m.receiptHandle);
        m.receiptHandle = randomUUID();
        this.byReceipt.set(m.receiptHandle, m);
        // The visibility timeout only guards against a consumer that died: it is not part of the
        // retry ladder, so it is not shortened below 10 s, or a slow batch would be received twice.
        m.visibleAt =
          now +
          Math.max(10_000, ((this.options.visibilityTimeoutSeconds ?? DISPATCHER_CONSUMER.visibilityTimeoutSeconds) * 1000) / this.scale);
        records.push(this.record(m));
      }
      if (records.length === 0) continue;
      const received = records.map((r) => this.stored(this.messages.get(r.messageId)!));
      const run = this.deliver(consumer, records, received).finally(() => {
        this.inFlight.delete(run);
        this.kick();
      });
      this.inFlight.add(run);
    }
  }

  private async deliver(consumer: BatchConsumer, records: SQSRecord[], received: StoredMessage[]): Promise<void> {
    try {
      // The receive is kept before the consumer sees the batch: a kill during the batch brings the
      // messages back after their visibility timeout, one receive nearer the dead-letter queue.
      await Promise.all(received.map((m) => this.store.put(this.options.name, m)));
      const response = await consumer({ Records: records });
      const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
      for (const r of records) {
        const m = this.messages.get(r.messageId);
        if (m && !failed.has(r.messageId)) this.remove(m);
      }
    } catch (error) {
      // A failed invocation leaves the whole batch to reappear after its visibility timeout.
      this.options.onError?.(error);
    }
  }

  /** Moves a message over its receive limit to the dead-letter queue: kept there before it is forgotten here. */
  private redrive(m: Message, deadLetterQueue: InProcessQueue): void {
    this.messages.delete(m.messageId);
    if (m.receiptHandle) this.byReceipt.delete(m.receiptHandle);
    const run = deadLetterQueue
      .keep(m.body, 0)
      .then(() => this.store.delete(this.options.name, m.messageId))
      .catch((error: unknown) => {
        // Not moved: it stays here, to be redriven on its next receive.
        this.messages.set(m.messageId, m);
        this.options.onError?.(error);
      })
      .finally(() => this.writes.delete(run));
    this.writes.add(run);
  }

  /**
   * DeleteMessage. The consumer's slot is free at once: a delete lost to a kill only means the
   * message comes back once more, which at-least-once delivery allows.
   */
  private remove(m: Message): void {
    this.messages.delete(m.messageId);
    if (m.receiptHandle) this.byReceipt.delete(m.receiptHandle);
    const run = this.store
      .delete(this.options.name, m.messageId)
      .catch((error: unknown) => this.options.onError?.(error))
      .finally(() => this.writes.delete(run));
    this.writes.add(run);
  }

  private stored(m: Message): StoredMessage {
    return {
      messageId: m.messageId,
      body: m.body,
      sentAt: m.sentAt,
      receiveCount: m.receiveCount,
      visibleAt: m.visibleAt,
      receiptHandle: m.receiptHandle,
    };
  }

  private record(m: Message): SQSRecord {
    return {
      messageId: m.messageId,
      receiptHandle: m.receiptHandle!,
      body: m.body,
      attributes: {
        ApproximateReceiveCount: String(m.receiveCount),
        SentTimestamp: String(m.sentAt),
        SenderId: 'local',
        ApproximateFirstReceiveTimestamp: String(m.sentAt),
      },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: `arn:aws:sqs:local:000000000000:${this.options.name}`,
      awsRegion: 'local',
    };
  }
}
