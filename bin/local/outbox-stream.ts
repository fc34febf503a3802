/**
 * The local stand-in for the outbox relay's event source mapping (docs/architecture.md#outbox): polls
 * the outbox table's stream on DynamoDB Local (DescribeStream, GetShardIterator, GetRecords) and
 * hands each batch of inserts to the relay handler, as Lambda does: in stream order per shard, a
 * batch retried from the first record the relay reports as failed, up to the mapping's retries
 * (`OUTBOX.relay`), after which the batch's positions go to the on-failure queue and the poller
 * moves past them. Each shard is read from its oldest record: a restart relays again what the
 * stream still holds, which the publisher takes as the duplicates they are.
 */
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  ExpiredIteratorException,
  GetRecordsCommand,
  GetShardIteratorCommand,
  TrimmedDataAccessException,
  type _Record,
} from '@aws-sdk/client-dynamodb-streams';
import { OUTBOX } from '#lambdas/contract/deployment';

/** The relay's answer: the positions to retry from (ReportBatchItemFailures). */
interface RelayAnswer {
  readonly batchItemFailures: readonly { readonly itemIdentifier: string }[];
}

/** Options of {@link startOutboxStream}. */
export interface OutboxStreamOptions {
  /** DynamoDB Local's endpoint. */
  readonly endpoint: string;
  /** The outbox table's stream. */
  readonly streamArn: string;
  /** The relay, invoked with `{Records}` as Lambda invokes it. */
  readonly relay: (event: { Records: _Record[] }) => Promise<RelayAnswer>;
  /** The on-failure destination: one message per batch given up, Lambda's record of it. */
  readonly onFailure: (body: string) => Promise<void>;
  /** Divides the waits between polls and retries. @default 1 */
  readonly timeScale?: number;
  /** Called with a poll that failed (the poller carries on). */
  readonly onError: (error: unknown) => void;
}

/** A running poller. */
export interface OutboxStream {
  /**
   * Resolves once a whole poll that began after the call found no record to hand on: everything
   * written to the outbox before the call has reached the relay (tests settle on it). Resolves at
   * `timeoutMs` regardless.
   */
  caughtUp(timeoutMs?: number): Promise<void>;
  /** Stops polling after the batch in hand. */
  stop(): Promise<void>;
}

/** A shard as the poller follows it: its iterator, the last position handed on, and whether it is closed. */
interface ShardState {
  iterator: string | undefined;
  lastSequence: string | undefined;
  closed: boolean;
}

/** Lambda polls a stream's shard about four times a second; the local poller does so at any time scale, so an idle stack costs little. */
const POLL_MS = 250;
/** How often the shards are listed again (a shard closes and new ones open as the stream rolls over). */
const DESCRIBE_EVERY_MS = 2_000;
/** The wait before retrying a failed batch (Lambda backs off; one step is enough here). */
const RETRY_MS = 200;

/** Starts polling the outbox stream. */
export function startOutboxStream(options: OutboxStreamOptions): OutboxStream {
  const scale = options.timeScale ?? 1;
  const client = new DynamoDBStreamsClient({
    endpoint: options.endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const shards = new Map<string, ShardState>();
  let stopped = false;
  let wake: (() => void) | undefined;
  /** Waits `ms` as it is (a poll), or scaled (`sleep`, a retry's backoff); `stop` ends either at once. */
  const pause = (ms: number) =>
    new Promise<void>((done) => {
      const timer = setTimeout(done, Math.max(1, ms));
      wake = () => {
        clearTimeout(timer);
        done();
      };
    });

  const sleep = (ms: number) => pause(ms / scale);

  /** Hands `records` to the relay until it takes them all or the retries are spent. */
  async function deliver(shardId: string, records: _Record[]): Promise<void> {
    let remaining = records;
    for (let attempt = 0; remaining.length > 0; attempt++) {
      let failedAt: number;
      try {
        const answer = await options.relay({ Records: remaining });
        const failed = answer.batchItemFailures[0]?.itemIdentifier;
        failedAt =
          failed === undefined
            ? -1
            : Math.max(
                0,
                remaining.findIndex((r) => r.dynamodb?.SequenceNumber === failed),
              );
      } catch (error) {
        options.onError(error);
        failedAt = 0;
      }
      if (failedAt < 0) return;
      remaining = remaining.slice(failedAt);
      if (attempt >= OUTBOX.relay.retryAttempts) {
        // What Lambda sends the on-failure destination of a stream: where the given-up records are.
        await options.onFailure(
          JSON.stringify({
            requestContext: { condition: 'RetryAttemptsExhausted', approximateInvokeCount: attempt + 1 },
            DDBStreamBatchInfo: {
              shardId,
              startSequenceNumber: remaining[0]?.dynamodb?.SequenceNumber,
              endSequenceNumber: remaining[remaining.length - 1]?.dynamodb?.SequenceNumber,
              streamArn: options.streamArn,
              batchSize: remaining.length,
            },
          }),
        );
        return;
      }
      if (stopped) return;
      await sleep(RETRY_MS);
    }
  }

  /** Reads one batch of a shard and hands its records on; false when it had none. */
  async function pollShard(shardId: string, shard: ShardState): Promise<boolean> {
    if (!shard.iterator) {
      const out = await client.send(
        new GetShardIteratorCommand({
          StreamArn: options.streamArn,
          ShardId: shardId,
          ...(shard.lastSequence
            ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: shard.lastSequence }
            : { ShardIteratorType: 'TRIM_HORIZON' }),
        }),
      );
      shard.iterator = out.ShardIterator;
      if (!shard.iterator) {
        shard.closed = true;
        return false;
      }
    }
    let out;
    try {
      out = await client.send(new GetRecordsCommand({ ShardIterator: shard.iterator, Limit: OUTBOX.relay.batchSize }));
    } catch (error) {
      if (!(error instanceof ExpiredIteratorException || error instanceof TrimmedDataAccessException)) throw error;
      // A stale iterator: the next poll takes a new one from the last record handed on.
      shard.iterator = undefined;
      return false;
    }
    const records = out.Records ?? [];
    if (records.length > 0) {
      await deliver(shardId, records);
      shard.lastSequence = records[records.length - 1]!.dynamodb?.SequenceNumber ?? shard.lastSequence;
    }
    if (!out.NextShardIterator) shard.closed = true;
    // After an empty read DynamoDB Local's next iterator can point past records written later
    // (TrimmedDataAccessException): the next poll takes a new one from the last record handed on.
    shard.iterator = records.length > 0 ? out.NextShardIterator : undefined;
    return records.length > 0;
  }

  let describedAt = Number.NEGATIVE_INFINITY;
  /** Lists the shards when due, or when every known one is closed; parents first. */
  async function listShards(): Promise<void> {
    const open = [...shards.values()].some((s) => !s.closed);
    if (open && Date.now() - describedAt < DESCRIBE_EVERY_MS) return;
    const described = await client.send(new DescribeStreamCommand({ StreamArn: options.streamArn }));
    describedAt = Date.now();
    // Parents before children: a shard's records come before those of the shards split from it.
    const found = [...(described.StreamDescription?.Shards ?? [])].sort((a, b) =>
      (a.SequenceNumberRange?.StartingSequenceNumber ?? '').localeCompare(b.SequenceNumberRange?.StartingSequenceNumber ?? '', 'en', {
        numeric: true,
      }),
    );
    for (const s of found)
      if (s.ShardId && !shards.has(s.ShardId)) shards.set(s.ShardId, { iterator: undefined, lastSequence: undefined, closed: false });
  }

  /** When the last poll that handed nothing on began. */
  let idlePollStartedAt = Number.NEGATIVE_INFINITY;
  const loop = (async () => {
    while (!stopped) {
      let busy = false;
      const startedAt = Date.now();
      try {
        await listShards();
        for (const [shardId, shard] of shards) {
          while (!stopped && !shard.closed && (await pollShard(shardId, shard))) busy = true;
        }
      } catch (error) {
        if (!stopped) options.onError(error);
      }
      if (!busy) idlePollStartedAt = startedAt;
      if (!stopped && !busy) await pause(POLL_MS);
    }
  })();

  return {
    async caughtUp(timeoutMs = 10_000) {
      const since = Date.now();
      while (idlePollStartedAt <= since && !stopped && Date.now() - since < timeoutMs) await new Promise((r) => setTimeout(r, 20));
    },
    async stop() {
      stopped = true;
      wake?.();
      await loop;
      client.destroy();
    },
  };
}
