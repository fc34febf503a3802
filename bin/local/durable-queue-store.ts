/**
 * Where the local queues keep their messages so that a kill of `npm start` loses none
 * (docs/architecture.md#the-local-stack): the in-process queue holds its working view in memory
 * and writes every change of a message (sent, received, visibility changed, deleted) here before
 * it takes effect. The local stack journals into DynamoDB Local, which keeps its data under
 * `.local/`; unit tests use the memory store.
 */
import { CreateTableCommand, DescribeTableCommand, ResourceInUseException } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** A queue message as it is kept: what SQS keeps of it across a consumer's crash. */
export interface StoredMessage {
  readonly messageId: string;
  readonly body: string;
  /** Epoch ms of the send. */
  readonly sentAt: number;
  readonly receiveCount: number;
  /** Epoch ms from which it may be received (delay, visibility timeout). */
  readonly visibleAt: number;
  readonly receiptHandle: string | null;
}

/** The durable side of an in-process queue. Writes resolve once the change is kept. */
export interface QueueStore {
  /** Every message kept for `queue`. */
  load(queue: string): Promise<StoredMessage[]>;
  /** Keeps (creates or replaces) a message. */
  put(queue: string, message: StoredMessage): Promise<void>;
  /** Forgets a message. */
  delete(queue: string, messageId: string): Promise<void>;
}

/**
 * A store in this process's memory: what a queue without another store uses. Shared by two
 * queues of the same name, it stands in for the durable store in tests of a restart.
 */
export function memoryQueueStore(): QueueStore {
  const queues = new Map<string, Map<string, StoredMessage>>();
  const of = (queue: string) => queues.get(queue) ?? queues.set(queue, new Map()).get(queue)!;
  return {
    load: async (queue) => [...of(queue).values()],
    put: async (queue, message) => void of(queue).set(message.messageId, { ...message }),
    delete: async (queue, messageId) => void of(queue).delete(messageId),
  };
}

/** The local-only table the queues are kept in (one per DynamoDB Local; keys carry the stack's table name). */
const LOCAL_QUEUE_TABLE = 'local-queues';

/** Items per BatchWriteItem request (DynamoDB's limit). */
const BATCH_ITEMS = 25;
/** BatchWriteItem requests in flight at once. */
const PARALLEL_REQUESTS = 8;

type Write =
  { readonly kind: 'put'; readonly item: Record<string, unknown> } | { readonly kind: 'delete'; readonly key: Record<string, string> };
interface PendingWrite {
  write: Write;
  readonly waiters: { resolve: () => void; reject: (e: unknown) => void }[];
}

/** Creates {@link LOCAL_QUEUE_TABLE} when absent. */
export async function ensureQueueTable(doc: DynamoDBDocumentClient): Promise<void> {
  try {
    await doc.send(new DescribeTableCommand({ TableName: LOCAL_QUEUE_TABLE }));
    return;
  } catch (e) {
    if ((e as { name?: string }).name !== 'ResourceNotFoundException') throw e;
  }
  try {
    await doc.send(
      new CreateTableCommand({
        TableName: LOCAL_QUEUE_TABLE,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: 'queue', AttributeType: 'S' },
          { AttributeName: 'messageId', AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: 'queue', KeyType: 'HASH' },
          { AttributeName: 'messageId', KeyType: 'RANGE' },
        ],
      }),
    );
  } catch (e) {
    if (!(e instanceof ResourceInUseException)) throw e;
  }
}

/**
 * The queues of one local stack kept in {@link LOCAL_QUEUE_TABLE}: one item per message, keyed by
 * `<namespace>/<queue>` and the message id. Writes made in the same turn of the event loop go out
 * together in BatchWriteItem requests of 25 (the hot path costs a few requests per batch of
 * messages, not one per message), several requests at once; a message's writes not yet sent
 * collapse into its latest, and one still in flight holds back its next, so they land in the order
 * they were made. The table must exist
 * ({@link ensureQueueTable}).
 */
export function dynamoDbQueueStore(doc: DynamoDBDocumentClient, namespace: string): QueueStore {
  const pk = (queue: string) => `${namespace}/${queue}`;
  const pending = new Map<string, PendingWrite>();
  // Keys with a write in flight: their next write waits for it, so a message's writes land in order.
  const writing = new Set<string>();
  let requests = 0;
  let scheduled = false;

  const enqueue = (id: string, write: Write): Promise<void> =>
    new Promise((resolve, reject) => {
      const known = pending.get(id);
      if (known) {
        known.write = write;
        known.waiters.push({ resolve, reject });
      } else pending.set(id, { write, waiters: [{ resolve, reject }] });
      if (!scheduled) {
        scheduled = true;
        // The writes of this turn go out together.
        setImmediate(() => {
          scheduled = false;
          pump();
        });
      }
    });

  const pump = (): void => {
    while (requests < PARALLEL_REQUESTS) {
      const chunk: [string, PendingWrite][] = [];
      for (const entry of pending) {
        if (writing.has(entry[0])) continue;
        chunk.push(entry);
        if (chunk.length === BATCH_ITEMS) break;
      }
      if (chunk.length === 0) return;
      for (const [id] of chunk) {
        pending.delete(id);
        writing.add(id);
      }
      requests++;
      void writeChunk(chunk.map(([, p]) => p)).finally(() => {
        for (const [id] of chunk) writing.delete(id);
        requests--;
        pump();
      });
    }
  };

  const writeChunk = async (chunk: PendingWrite[]): Promise<void> => {
    try {
      let requests = chunk.map(({ write }) =>
        write.kind === 'put' ? { PutRequest: { Item: write.item } } : { DeleteRequest: { Key: write.key } },
      );
      for (let tries = 0; requests.length > 0; tries++) {
        if (tries > 0) await new Promise((r) => setTimeout(r, Math.min(1_000, 20 * 2 ** tries)));
        if (tries > 8) throw new Error(`${LOCAL_QUEUE_TABLE}: BatchWriteItem left ${requests.length} writes unprocessed`);
        const out = await doc.send(new BatchWriteCommand({ RequestItems: { [LOCAL_QUEUE_TABLE]: requests } }));
        requests = (out.UnprocessedItems?.[LOCAL_QUEUE_TABLE] ?? []) as typeof requests;
      }
      for (const p of chunk) for (const w of p.waiters) w.resolve();
    } catch (e) {
      for (const p of chunk) for (const w of p.waiters) w.reject(e);
    }
  };

  return {
    async load(queue) {
      const messages: StoredMessage[] = [];
      let start: Record<string, unknown> | undefined;
      do {
        const out = await doc.send(
          new QueryCommand({
            TableName: LOCAL_QUEUE_TABLE,
            KeyConditionExpression: '#q = :q',
            ExpressionAttributeNames: { '#q': 'queue' },
            ExpressionAttributeValues: { ':q': pk(queue) },
            ConsistentRead: true,
            ...(start ? { ExclusiveStartKey: start } : {}),
          }),
        );
        for (const item of out.Items ?? [])
          messages.push({
            messageId: item.messageId as string,
            body: item.body as string,
            sentAt: item.sentAt as number,
            receiveCount: item.receiveCount as number,
            visibleAt: item.visibleAt as number,
            receiptHandle: (item.receiptHandle as string | undefined) ?? null,
          });
        start = out.LastEvaluatedKey;
      } while (start);
      return messages;
    },
    put: (queue, message) =>
      enqueue(`${pk(queue)}\n${message.messageId}`, {
        kind: 'put',
        item: { queue: pk(queue), ...message, receiptHandle: message.receiptHandle ?? undefined },
      }),
    delete: (queue, messageId) => enqueue(`${pk(queue)}\n${messageId}`, { kind: 'delete', key: { queue: pk(queue), messageId } }),
  };
}
