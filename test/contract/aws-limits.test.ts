/**
 * The AWS limits and what derives from them (docs/behaviour.md#limits): an event payload of
 * MAX_PAYLOAD_BYTES fits the largest EventBridge entry a producer can put, and one byte more
 * does not.
 */
import { describe, expect, it } from 'vitest';
import { EVENTBRIDGE_ENTRY_BYTES, putEventsEntryBytes } from '../../lambdas/contract/aws-limits';
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
