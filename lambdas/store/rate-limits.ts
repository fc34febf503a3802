/** Fixed-window rate-limit counters in the table, expiring by TTL (docs/behaviour.md#rate-limits). */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Quota } from '../contract/rate-limits';
import type { TableContext } from './client';
import { keys, TABLE } from './table-schema';

/** Outcome of a rate-limit check. */
export interface RateDecision {
  readonly allowed: boolean;
  /** Seconds until the window ends (when refused). */
  readonly retryAfterSeconds: number;
}

/** Counts one request of `clientKey` in `bucket`'s current window. */
export async function hitWindow(table: TableContext, bucket: string, clientKey: string, quota: Quota, now: Date): Promise<RateDecision> {
  const windowMs = quota.windowSeconds * 1000;
  const windowStart = Math.floor(now.getTime() / windowMs) * windowMs;
  const out = await table.doc.send(
    new UpdateCommand({
      TableName: table.tableName,
      Key: keys.rateLimit(bucket, clientKey, windowStart),
      UpdateExpression: 'ADD hits :one SET #ttl = if_not_exists(#ttl, :ttl)',
      ExpressionAttributeNames: { '#ttl': TABLE.ttlAttribute },
      ExpressionAttributeValues: { ':one': 1, ':ttl': Math.ceil((windowStart + 2 * windowMs) / 1000) },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  const hits = Number(out.Attributes?.hits ?? 0);
  return { allowed: hits <= quota.limit, retryAfterSeconds: Math.max(1, Math.ceil((windowStart + windowMs - now.getTime()) / 1000)) };
}
