/**
 * Idempotency records (docs/architecture.md#idempotency-records): one item per (API token, key),
 * claimed by a conditional put while its first request runs, then holding that request's
 * successful response for a day (the table's TTL attribute removes it).
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { TableContext } from './client';
import { ifAbsentOr, num, oneOf, optMap, optNum, str, type Item } from './table-io';
import { TABLE, keys } from './table-schema';

/** A stored first response: its status and its body, as sent. */
export interface StoredResponse {
  readonly statusCode: number;
  readonly body: string;
}

/** What claiming a key found. */
export type ClaimResult =
  /** The key is the caller's now: run the request, then {@link completeIdempotencyRecord} or {@link releaseIdempotencyRecord}. */
  | { readonly kind: 'claimed' }
  /** The key's first request finished with this response. */
  | { readonly kind: 'completed'; readonly fingerprint: string; readonly response: StoredResponse }
  /** The key's first request is still running. */
  | { readonly kind: 'in_progress'; readonly fingerprint: string };

/** A claim on a key. */
export interface IdempotencyClaim {
  readonly tokenId: string;
  readonly key: string;
  /** What identifies the request (operation, path, body): another request under the same key is refused. */
  readonly fingerprint: string;
  readonly now: Date;
  /** How long the record is kept, in seconds. */
  readonly ttlSeconds: number;
  /** How long the claim holds while its request runs, in seconds: after that a retry may take it over (a crashed first attempt). */
  readonly lockSeconds: number;
}

/** A stored record: its claim, and (completed) its response. */
interface IdempotencyRecord {
  readonly status: 'in_progress' | 'completed';
  readonly fingerprint: string;
  readonly lockExpiresAtEpoch: number | null;
  readonly response: StoredResponse | null;
}

/** The statuses of a record. */
const RECORD_STATUSES = ['in_progress', 'completed'] as const;

/** An idempotency item as its record, each attribute checked (the lock and the response may be absent). */
function recordFromItem(item: Item): IdempotencyRecord {
  const response = optMap(item, 'response');
  return {
    status: oneOf(item, 'status', RECORD_STATUSES),
    fingerprint: str(item, 'fingerprint'),
    lockExpiresAtEpoch: optNum(item, 'lockExpiresAtEpoch'),
    response: response && { statusCode: num(response, 'statusCode'), body: str(response, 'body') },
  };
}

const epoch = (d: Date) => Math.floor(d.getTime() / 1000);

/**
 * Claims a key with one conditional put: it succeeds when no live record holds the key (none,
 * past its TTL but not yet swept, or an in-progress claim whose lock ran out). Otherwise the
 * record is read (strongly consistent) and reported. Bounded: a record released between the
 * failed put and the read is retried twice at most.
 */
export async function claimIdempotencyKey(table: TableContext, claim: IdempotencyClaim): Promise<ClaimResult> {
  const key = keys.idempotency(claim.tokenId, claim.key);
  const now = epoch(claim.now);
  for (let tries = 0; tries < 3; tries++) {
    try {
      await table.doc.send(
        new PutCommand({
          TableName: table.tableName,
          Item: {
            ...key,
            type: 'idempotency',
            status: 'in_progress',
            fingerprint: claim.fingerprint,
            createdAt: claim.now.toISOString(),
            lockExpiresAtEpoch: now + claim.lockSeconds,
            [TABLE.ttlAttribute]: now + claim.ttlSeconds,
          },
          ConditionExpression: ifAbsentOr('#ttl < :now OR (#status = :inProgress AND lockExpiresAtEpoch < :now)'),
          ExpressionAttributeNames: { '#ttl': TABLE.ttlAttribute, '#status': 'status' },
          ExpressionAttributeValues: { ':now': now, ':inProgress': 'in_progress' },
        }),
      );
      return { kind: 'claimed' };
    } catch (e) {
      if (!(e instanceof ConditionalCheckFailedException)) throw e;
    }
    const out = await table.doc.send(new GetCommand({ TableName: table.tableName, Key: key, ConsistentRead: true }));
    if (!out.Item) continue;
    const item = recordFromItem(out.Item);
    if (item.status === 'completed' && item.response) return { kind: 'completed', fingerprint: item.fingerprint, response: item.response };
    if (item.status === 'in_progress' && (item.lockExpiresAtEpoch ?? 0) >= now)
      return { kind: 'in_progress', fingerprint: item.fingerprint };
  }
  throw new Error(`Idempotency key of token ${claim.tokenId} could not be claimed after 3 tries`);
}

/** Stores the successful response of a claimed key; it is what a repeat answers until the record expires. */
export async function completeIdempotencyRecord(
  table: TableContext,
  claim: Pick<IdempotencyClaim, 'tokenId' | 'key' | 'fingerprint'>,
  response: StoredResponse,
): Promise<void> {
  await table.doc.send(
    new UpdateCommand({
      TableName: table.tableName,
      Key: keys.idempotency(claim.tokenId, claim.key),
      UpdateExpression: 'SET #status = :completed, #response = :response REMOVE lockExpiresAtEpoch',
      // Only our own claim: a claim taken over after our lock ran out is the other request's.
      ConditionExpression: '#status = :inProgress AND fingerprint = :fingerprint',
      ExpressionAttributeNames: { '#status': 'status', '#response': 'response' },
      ExpressionAttributeValues: {
        ':completed': 'completed',
        ':inProgress': 'in_progress',
        ':response': response,
        ':fingerprint': claim.fingerprint,
      },
    }),
  );
}

/** Drops the claim of a request that failed, so the same key may be retried at once. */
export async function releaseIdempotencyRecord(
  table: TableContext,
  claim: Pick<IdempotencyClaim, 'tokenId' | 'key' | 'fingerprint'>,
): Promise<void> {
  try {
    await table.doc.send(
      new DeleteCommand({
        TableName: table.tableName,
        Key: keys.idempotency(claim.tokenId, claim.key),
        ConditionExpression: '#status = :inProgress AND fingerprint = :fingerprint',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':inProgress': 'in_progress', ':fingerprint': claim.fingerprint },
      }),
    );
  } catch (e) {
    if (!(e instanceof ConditionalCheckFailedException)) throw e;
  }
}
