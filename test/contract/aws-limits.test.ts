/**
 * The AWS limits and what derives from them (docs/behaviour.md#limits): an event payload of
 * MAX_PAYLOAD_BYTES fits the largest EventBridge entry a producer can put, and one byte more
 * does not.
 */
import { describe, expect, it } from 'vitest';
import { DYNAMODB_ITEM_BYTES, EVENTBRIDGE_ENTRY_BYTES, putEventsEntryBytes, SQS_MESSAGE_BYTES } from '../../lambdas/contract/aws-limits';
import { newPendingDelivery } from '../../lambdas/domain/delivery-lifecycle';
import { deliveryMessageBody } from '../../lambdas/queue/delivery-queue';
import { summaryItem } from '../../lambdas/store/deliveries';
import { MAX_PAYLOAD_BYTES, WORKSPACE_SLUG_MAX_CHARS } from '../../lambdas/contract/limits';
import { SlugSchema } from '../../lambdas/contract/schemas';

/** A payload whose JSON is exactly `bytes` long. */
const payloadOf = (bytes: number) => ({ blob: 'x'.repeat(bytes - JSON.stringify({ blob: '' }).length) });

/** The largest entry a producer can put: Time set, the longest source, detail type and slug. */
const largestEntry = (payload: unknown) =>
  putEventsEntryBytes({
    time: true,
    source: 's'.repeat(256),
    detailType: `${'t'.repeat(126)}.x`,
    detail: JSON.stringify({ workspace: 'w'.repeat(WORKSPACE_SLUG_MAX_CHARS), payload }),
  });

describe('EventBridge entry size', () => {
  it('counts Time as 14 bytes and the rest in UTF-8 bytes, as EventBridge does', () => {
    expect(putEventsEntryBytes({ source: 'a.b', detailType: 'x.y', detail: '{"é":1}' })).toBe(3 + 3 + 8);
    expect(putEventsEntryBytes({ source: 'a', detailType: 'b', time: true, resources: ['arn:x', 'ü'] })).toBe(14 + 1 + 1 + 5 + 2);
  });

  it('a payload of MAX_PAYLOAD_BYTES fills the largest entry exactly; one byte more is over', () => {
    expect(MAX_PAYLOAD_BYTES).toBe(261_656);
    expect(largestEntry(payloadOf(MAX_PAYLOAD_BYTES))).toBe(EVENTBRIDGE_ENTRY_BYTES);
    expect(largestEntry(payloadOf(MAX_PAYLOAD_BYTES + 1))).toBe(EVENTBRIDGE_ENTRY_BYTES + 1);
  });

  it('the envelope counts the longest slug the contract accepts', () => {
    expect(SlugSchema.safeParse('a'.repeat(WORKSPACE_SLUG_MAX_CHARS)).success).toBe(true);
    expect(SlugSchema.safeParse('a'.repeat(WORKSPACE_SLUG_MAX_CHARS + 1)).success).toBe(false);
  });
});

describe('what the stores and queues hold', () => {
  it('a delivery summary with the largest payload fits a DynamoDB item', () => {
    const record = newPendingDelivery(
      {
        workspace: 'w'.repeat(WORKSPACE_SLUG_MAX_CHARS),
        endpointId: 'whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC',
        eventType: `${'t'.repeat(126)}.x`,
        payload: { blob: 'x'.repeat(MAX_PAYLOAD_BYTES - JSON.stringify({ blob: '' }).length) },
        replayedFrom: 'whd_01JD2Y9P0R6S8T1V3W5X7Y9ZAB',
      },
      new Date(),
    );
    // DynamoDB counts attribute names and values; the item's JSON is a close upper bound.
    expect(Buffer.byteLength(JSON.stringify(summaryItem(record)))).toBeLessThan(DYNAMODB_ITEM_BYTES);
  });

  it('a delivery message is far under the SQS message limit (it carries ids, never the payload)', () => {
    const body = deliveryMessageBody({
      deliveryId: 'whd_01JD2Y9P0R6S8T1V3W5X7Y9ZAB',
      endpointId: 'whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC',
      workspace: 'w'.repeat(63),
    });
    expect(Buffer.byteLength(body)).toBeLessThan(SQS_MESSAGE_BYTES / 100);
  });
});
