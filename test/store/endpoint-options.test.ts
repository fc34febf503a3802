/**
 * An endpoint's options in the table (docs/architecture.md#secrets): written with the endpoint,
 * changed and removed by an update one by one, read back whole, and no secret value in plain text
 * anywhere in the table.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHeaders, planHeaderChange, sealHeaderPlan, type EndpointOptions } from '../../lambdas/domain/endpoint-options';
import { ENDPOINT_CHANGED, getEndpointRecord, updateEndpoint } from '../../lambdas/store/endpoints';
import { seedEndpoint, testSealer } from '../helpers/pipeline';
import { freshTable } from '../helpers/table';

let table: Awaited<ReturnType<typeof freshTable>>;
beforeAll(async () => {
  table = await freshTable();
});
afterAll(async () => {
  await table?.drop();
});

const audit = (targetId: string) => ({ action: 'webhook.updated', actor: 'test', targetId });

async function everyItemText(): Promise<string> {
  const out = await table.doc.send(new ScanCommand({ TableName: table.tableName }));
  return JSON.stringify(out.Items ?? []);
}

describe('endpoint options in the table', () => {
  it('are stored with the endpoint, secrets sealed, and read back whole', async () => {
    const headers = await sealHeaderPlan(
      planHeaderChange(undefined, { 'X-Tenant': 'tenant-7', 'X-Api-Key': 'api-key-value-1' }, false),
      testSealer,
    );
    const options: EndpointOptions = {
      headers,
      auth: {
        type: 'oauth2_client_credentials',
        tokenUrl: 'https://auth.example.com/token',
        clientId: 'client-1',
        clientSecret: await testSealer.seal('client-secret-value-1'),
        audience: 'https://api.example.com',
      },
      rateLimitPerSecond: 5,
      filter: { 'order.region': 'eu' },
    };
    const seeded = await seedEndpoint(table, { workspace: 'opts', url: 'https://hooks.example.com/a', options });
    const read = await getEndpointRecord(table, 'opts', seeded.endpointId);
    expect(read!.options).toEqual(options);
    expect(await openHeaders(read!.options!.headers, testSealer)).toEqual({ 'X-Tenant': 'tenant-7', 'X-Api-Key': 'api-key-value-1' });
    expect(await testSealer.open(read!.options!.auth!.clientSecret)).toBe('client-secret-value-1');
    const text = await everyItemText();
    expect(text).toContain('tenant-7');
    expect(text).not.toContain('api-key-value-1');
    expect(text).not.toContain('client-secret-value-1');
  });

  it('are set and removed one by one by an update, leaving the others', async () => {
    const seeded = await seedEndpoint(table, { workspace: 'opts', url: 'https://hooks.example.com/b' });
    expect((await getEndpointRecord(table, 'opts', seeded.endpointId))!.options).toBeUndefined();
    const headers = await sealHeaderPlan(planHeaderChange(undefined, { 'X-Region': 'eu' }, false), testSealer);
    const updated = await updateEndpoint(
      table,
      'opts',
      seeded.endpointId,
      { headers, rateLimitPerSecond: 10, description: 'limited' },
      new Date(),
      audit(seeded.endpointId),
    );
    expect(updated).toMatchObject({ description: 'limited', options: { headers, rateLimitPerSecond: 10 } });
    const cleared = await updateEndpoint(
      table,
      'opts',
      seeded.endpointId,
      { rateLimitPerSecond: null },
      new Date(),
      audit(seeded.endpointId),
    );
    expect(cleared!.options).toEqual({ headers });
    const none = await updateEndpoint(
      table,
      'opts',
      seeded.endpointId,
      { headers: null, auth: null },
      new Date(),
      audit(seeded.endpointId),
    );
    expect(none!.options).toBeUndefined();
    expect(none!.description).toBe('limited');
  });

  it('an update planned from an endpoint as read is not written once another change moved it on', async () => {
    const seeded = await seedEndpoint(table, { workspace: 'opts', url: 'https://hooks.example.com/c' });
    const read = (await getEndpointRecord(table, 'opts', seeded.endpointId))!;
    const headers = await sealHeaderPlan(planHeaderChange(undefined, { 'X-First': '1' }, false), testSealer);
    const first = await updateEndpoint(
      table,
      'opts',
      seeded.endpointId,
      { headers },
      new Date(Date.now() + 1),
      audit(seeded.endpointId),
      read.updatedAt,
    );
    expect(first).toMatchObject({ options: { headers } });
    // Planned from the same read: refused, on the plain path and on the one that rewrites the subscriptions.
    const other = await sealHeaderPlan(planHeaderChange(undefined, { 'X-Second': '2' }, false), testSealer);
    expect(
      await updateEndpoint(table, 'opts', seeded.endpointId, { headers: other }, new Date(), audit(seeded.endpointId), read.updatedAt),
    ).toBe(ENDPOINT_CHANGED);
    expect(
      await updateEndpoint(
        table,
        'opts',
        seeded.endpointId,
        { headers: other, filter: { a: 1 } },
        new Date(),
        audit(seeded.endpointId),
        read.updatedAt,
      ),
    ).toBe(ENDPOINT_CHANGED);
    expect((await getEndpointRecord(table, 'opts', seeded.endpointId))!.options).toEqual({ headers });
    // From the current read, it is written; an endpoint that is gone is null, not a conflict.
    const now = (await getEndpointRecord(table, 'opts', seeded.endpointId))!.updatedAt;
    expect(
      await updateEndpoint(
        table,
        'opts',
        seeded.endpointId,
        { headers: other, filter: { a: 1 } },
        new Date(Date.now() + 2),
        audit(seeded.endpointId),
        now,
      ),
    ).toMatchObject({ options: { headers: other, filter: { a: 1 } } });
    expect(
      await updateEndpoint(table, 'opts', 'whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC', { headers: other }, new Date(), audit('x'), now),
    ).toBeNull();
  });
});
