/**
 * Signing secrets at rest (docs/architecture.md#secrets), through the real local stack (its
 * local-only sealer: real envelope AES-GCM under a fixed in-process key): after create and two
 * rotations the endpoint's raw item and the grace index hold no `whsec_` secret, and the
 * dispatcher still signs the test event with both secrets of the grace window, verified with the
 * `standardwebhooks` library by a loopback receiver.
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it, vi } from 'vitest';
import { keys, TABLE } from '../../lambdas/store/table-schema';
import { usePipelineApi } from '../helpers/local-api';

const pipeline = usePipelineApi();

describe('sealed signing secrets', () => {
  it('leave no whsec_ in the endpoint item or any index, and still sign verifiably during the grace window', async () => {
    const { api } = pipeline;
    const r = await pipeline.receiver((_req, res) => res.writeHead(204).end());
    const created = await api.call('POST', `/workspaces/${api.workspace}/webhooks`, {
      body: { url: r.url, eventTypes: ['webhook.test_event'] },
    });
    expect(created.status).toBe(201);
    const endpointId = created.body.endpointId as string;
    const rotate = () => api.call('POST', `/workspaces/${api.workspace}/webhooks/${endpointId}/rotate-secret`);
    const first = (await rotate()).body.secret as string;
    const second = (await rotate()).body.secret as string;

    const item = (
      await api.table.doc.send(
        new GetCommand({ TableName: api.table.tableName, Key: keys.endpoint(api.workspace, endpointId), ConsistentRead: true }),
      )
    ).Item!;
    const raw = JSON.stringify(item);
    expect(item.secrets).toHaveLength(2);
    expect(raw).not.toContain('whsec_');
    for (const secret of [first, second]) expect(raw).not.toContain(secret.slice(6));
    expect(item).not.toHaveProperty(TABLE.gsi1.partitionKey);

    const index = await api.table.doc.send(
      new QueryCommand({
        TableName: api.table.tableName,
        IndexName: TABLE.gsi1.name,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': TABLE.gsi1.partitionKey },
        ExpressionAttributeValues: { ':pk': keys.secretGracePk },
      }),
    );
    const entries = (index.Items ?? []).filter((i) => i.endpointId === endpointId);
    expect(entries).toHaveLength(1);
    expect(entries[0]).not.toHaveProperty('secrets');
    expect(JSON.stringify(index.Items)).not.toContain('whsec_');

    const sent = await api.call('POST', `/workspaces/${api.workspace}/webhooks/${endpointId}/test-event`);
    expect(sent.status).toBeLessThan(300);
    const req = await vi.waitFor(() => r.seen[0] ?? Promise.reject(new Error('not delivered yet')), { timeout: 10_000, interval: 50 });
    const headers = {
      'webhook-id': String(req.headers['webhook-id']),
      'webhook-timestamp': String(req.headers['webhook-timestamp']),
      'webhook-signature': String(req.headers['webhook-signature']),
    };
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    for (const secret of [second, first]) expect(new Webhook(secret).verify(req.body, headers)).toEqual(JSON.parse(req.body));
  });
});
