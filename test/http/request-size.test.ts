/**
 * Request bodies as API Gateway and Lambda take them (docs/behaviour.md#gateway-responses),
 * through the local front: over API Gateway's 10 MB a 413; under it but with a Lambda event over
 * Lambda's 6 MB (escaping counts) the 502 API Gateway answers, naming the limit, and the function
 * never runs; under both, the function answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_GATEWAY_PAYLOAD_BYTES, LAMBDA_SYNC_PAYLOAD_BYTES } from '../../lambdas/contract/aws-limits';
import { GATEWAY_DETAILS } from '../../lambdas/contract/errors';
import { startTestApi, type TestApi } from '../helpers/local-api';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ schedules: false });
}, 60_000);
afterAll(async () => {
  await api?.close();
});

/** A create-webhook body whose JSON is exactly `bytes` long, its description made of `char`. */
const bodyOf = (bytes: number, char = 'x') => {
  const empty = JSON.stringify({ url: 'https://hooks.example.com/x', eventTypes: ['order.shipped'], description: '' });
  const unit = JSON.stringify(char).length - 2;
  return JSON.stringify({
    url: 'https://hooks.example.com/x',
    eventTypes: ['order.shipped'],
    description: char.repeat(Math.floor((bytes - empty.length) / unit)),
  });
};

const post = (body: string) => api.call('POST', `/workspaces/${api.workspace}/webhooks`, { rawBody: body });

describe('request bodies', () => {
  it('under Lambda limit with its event, the function answers (here: the description is too long)', async () => {
    const res = await post(bodyOf(LAMBDA_SYNC_PAYLOAD_BYTES - 16 * 1024));
    expect(res.status).toBe(400);
    expect(res.body.tag).toBe('ValidationError');
  }, 60_000);

  it('between Lambda limit and API Gateway limit: 502 BadGateway naming the limit, as API Gateway answers', async () => {
    const res = await post(bodyOf(LAMBDA_SYNC_PAYLOAD_BYTES + 1));
    expect(res.status).toBe(502);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.body).toMatchObject({ tag: 'BadGateway', status: 502, detail: GATEWAY_DETAILS.noUsableAnswer });
    expect(res.body.detail).toContain(String(LAMBDA_SYNC_PAYLOAD_BYTES));
    const list = await api.call('GET', `/workspaces/${api.workspace}/webhooks`);
    expect(list.body.items).toHaveLength(0);
  }, 60_000);

  it('escaping counts: 3.5 MB of quotes is a Lambda event over 6 MB', async () => {
    const body = bodyOf(3_500_000, '"');
    expect(Buffer.byteLength(body)).toBeLessThan(LAMBDA_SYNC_PAYLOAD_BYTES);
    const res = await post(body);
    expect(res.status).toBe(502);
    expect(res.body.tag).toBe('BadGateway');
  }, 60_000);

  it('over API Gateway limit: 413 PayloadTooLarge', async () => {
    const res = await post(bodyOf(API_GATEWAY_PAYLOAD_BYTES + 1));
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ tag: 'PayloadTooLarge', status: 413, detail: GATEWAY_DETAILS.requestTooLarge });
  }, 60_000);
});
