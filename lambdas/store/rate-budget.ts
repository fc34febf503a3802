/**
 * The delivery rate budget of an endpoint (docs/behaviour.md#delivery-rate-per-endpoint,
 * docs/architecture.md#rate-budget): one small item per endpoint and epoch second, counting the
 * sends claimed in that second by every dispatcher, both lanes. A batch claims what it needs for an
 * endpoint with one conditional UpdateItem, however many of its records go there; the item expires
 * by TTL.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { TableContext } from './client';
import { keys, TABLE } from './table-schema';

/** The rate-limit bucket of the delivery budgets (their items' keys: lambdas/store/table-schema.ts). */
const BUCKET = 'delivery';

/** How long a second's item is kept after it (TTL deletes it later, at no write cost). */
const KEEP_SECONDS = 120;

/**
 * Claims up to `wanted` sends to `endpointId` in epoch second `second`, of `limit` per second;
 * answers how many are granted (0 to `wanted`). One conditional write: it adds `wanted` to the
 * second's count unless the count already reached the limit (then nothing is written and none is
 * granted), and grants what was left below the limit before it. Concurrent claims are serialised by
 * DynamoDB, so their grants never sum past the limit; the count may pass it (by what the last claim
 * could not get), which only means that second is spent.
 */
export async function claimSendBudget(
  table: TableContext,
  endpointId: string,
  limit: number,
  wanted: number,
  second: number,
): Promise<number> {
  if (wanted <= 0) return 0;
  try {
    const out = await table.doc.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: keys.rateLimit(BUCKET, endpointId, second * 1000),
        UpdateExpression: 'ADD claimed :wanted SET #ttl = if_not_exists(#ttl, :ttl)',
        ConditionExpression: 'attribute_not_exists(claimed) OR claimed < :limit',
        ExpressionAttributeNames: { '#ttl': TABLE.ttlAttribute },
        ExpressionAttributeValues: { ':wanted': wanted, ':limit': limit, ':ttl': second + KEEP_SECONDS },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    const before = Number(out.Attributes?.claimed ?? wanted) - wanted;
    return Math.max(0, Math.min(wanted, limit - before));
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return 0;
    throw error;
  }
}
