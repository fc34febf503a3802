/**
 * Event size through the local stand-in for PutEvents (docs/behaviour.md#event-publishing): a
 * payload of exactly MAX_PAYLOAD_BYTES is accepted and delivered; one byte more is refused with a
 * problem; an event whose EventBridge entry would be over the entry limit is refused as PutEvents
 * would refuse it, before the publisher sees it.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { EVENTBRIDGE_ENTRY_BYTES, putEventsEntryBytes } from '../../lambdas/contract/aws-limits';
import { EVENT_SOURCE } from '../../lambdas/contract/deployment';
import { MAX_PAYLOAD_BYTES } from '../../lambdas/contract/limits';
import { usePipelineApi, type TestApi } from '../helpers/local-api';

let api: TestApi;
const pipeline = usePipelineApi();
beforeAll(() => {
  api = pipeline.api;
});

/** An `order.shipped` payload whose JSON is exactly `bytes` long. */
const payloadOf = (bytes: number) => {
  const empty = JSON.stringify({ orderId: 'o-1', blob: '' }).length;
  return { orderId: 'o-1', blob: 'x'.repeat(bytes - empty) };
};

const publish = (payload: unknown) =>
  fetch(`${api.apiUrl}/local/events`, {
    method: 'POST',
    body: JSON.stringify({ workspace: api.workspace, type: 'order.shipped', payload }),
  });

describe('event size', () => {
  it('a payload of exactly MAX_PAYLOAD_BYTES is accepted and delivered', async () => {
    const receiver = await pipeline.receiver((_req, res) => res.writeHead(204).end());
    const created = await api.call('POST', `/workspaces/${api.workspace}/webhooks`, {
      body: { url: receiver.url, eventTypes: ['order.shipped'] },
    });
    expect(created.status).toBe(201);
    const payload = payloadOf(MAX_PAYLOAD_BYTES);
    expect(Buffer.byteLength(JSON.stringify(payload))).toBe(MAX_PAYLOAD_BYTES);
    const res = await publish(payload);
    expect(res.status).toBe(202);
    await expect.poll(() => receiver.seen.length, { timeout: 10_000 }).toBe(1);
    expect((JSON.parse(receiver.seen[0]!.body) as { payload: unknown }).payload).toEqual(payload);
    await api.call('DELETE', `/workspaces/${api.workspace}/webhooks/${created.body.endpointId}`);
  });

  it('one byte over MAX_PAYLOAD_BYTES is refused with a PayloadTooLarge problem', async () => {
    const res = await publish(payloadOf(MAX_PAYLOAD_BYTES + 1));
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    const problem = (await res.json()) as { tag: string; status: number; detail: string };
    expect(problem).toMatchObject({ tag: 'PayloadTooLarge', status: 413 });
    expect(problem.detail).toContain(String(MAX_PAYLOAD_BYTES));
  });

  it('an entry of exactly the EventBridge limit passes the bus (the publisher then refuses the payload); one byte more is refused by the bus', async () => {
    const entryOf = (payload: unknown) =>
      putEventsEntryBytes({
        source: EVENT_SOURCE,
        detailType: 'order.shipped',
        detail: JSON.stringify({ workspace: api.workspace, payload }),
      });
    const atLimit = MAX_PAYLOAD_BYTES + (EVENTBRIDGE_ENTRY_BYTES - entryOf(payloadOf(MAX_PAYLOAD_BYTES)));
    expect(entryOf(payloadOf(atLimit))).toBe(EVENTBRIDGE_ENTRY_BYTES);
    const at = await publish(payloadOf(atLimit));
    expect(at.status).toBe(413);
    expect(((await at.json()) as { detail: string }).detail).not.toMatch(/EventBridge entry/);
    const over = await publish(payloadOf(atLimit + 1));
    expect(over.status).toBe(413);
    expect(((await over.json()) as { detail: string }).detail).toContain(`EventBridge entry would be ${EVENTBRIDGE_ENTRY_BYTES + 1} bytes`);
  });

  it('an event whose EventBridge entry would be over the entry limit is refused as PutEvents would', async () => {
    const res = await publish(payloadOf(EVENTBRIDGE_ENTRY_BYTES));
    expect(res.status).toBe(413);
    const problem = (await res.json()) as { tag: string; detail: string };
    expect(problem.tag).toBe('PayloadTooLarge');
    expect(problem.detail).toMatch(
      new RegExp(`EventBridge entry would be \\d+ bytes; PutEvents refuses an entry over ${EVENTBRIDGE_ENTRY_BYTES}`),
    );
  });
});
