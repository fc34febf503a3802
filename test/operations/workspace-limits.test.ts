/**
 * Per-workspace limits (docs/behaviour.md#rate-limits) on DynamoDB Local, through the operations
 * with an injected clock: the test-send and replay quotas are shared by every token of a workspace
 * and refused as 429 `RateLimited` without writing anything; recovery jobs are not charged; the
 * endpoint and token limits are counted in the create's own transaction (never passed, even by
 * concurrent creates), freed by delete and revoke, refused as 409 `Conflict` without writing
 * anything; and a workspace written before counting began is counted on first use.
 */
import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../lambdas/contract/errors';
import { DEFAULT_WORKSPACE_LIMITS, type WorkspaceLimits } from '../../lambdas/contract/limits';
import type { DeliveryStatus } from '../../lambdas/contract/schemas';
import { newHeldDelivery } from '../../lambdas/domain/delivery-lifecycle';
import { newId } from '../../lambdas/domain/ids';
import { issueToken } from '../../lambdas/operations/admin';
import { createApiToken, revokeApiToken } from '../../lambdas/operations/api-tokens';
import type { Caller, OperationDeps } from '../../lambdas/operations/context';
import { replayWebhookDelivery, sendWebhookTestEvent } from '../../lambdas/operations/deliveries';
import { recoverWebhookDeliveries } from '../../lambdas/operations/recovery';
import { workspaceLimitsOf } from '../../lambdas/operations/rate-limiter';
import { createWebhook, deleteWebhook } from '../../lambdas/operations/webhooks';
import { runRecoverySlice } from '../../lambdas/pipeline/recovery-worker';
import type { JobMessage, JobQueue } from '../../lambdas/queue/job-queue';
import { summaryItem } from '../../lambdas/store/deliveries';
import { batchWriteAll } from '../../lambdas/store/table-io';
import { keys, SK_PREFIX } from '../../lambdas/store/table-schema';
import { countsKey, currentCount } from '../../lambdas/store/workspace-counts';
import { capturingQueue, seedEndpoint, testCatalogue, testSealer } from '../helpers/pipeline';
import { freshTable } from '../helpers/table';

let table: Awaited<ReturnType<typeof freshTable>>;
beforeAll(async () => {
  table = await freshTable();
});
afterAll(async () => {
  await table?.drop();
});

// Five seconds into the current minute: rate-limit windows carry a TTL that DynamoDB Local enforces, so the clock is today's.
let clock = new Date(Math.floor(Date.now() / 60_000) * 60_000 + 5_000);
let n = 0;
const freshWorkspace = () => `wl-${++n}`;
const caller = (workspace: string, tokenId = 'tok_a'): Caller => ({ workspace, tokenId, scopes: ['admin'] });

function deps(
  limits: Partial<WorkspaceLimits>,
  extra: Partial<OperationDeps> = {},
): OperationDeps & { queue: ReturnType<typeof capturingQueue> } {
  return {
    table,
    now: () => clock,
    eventTypes: testCatalogue,
    urlPolicy: {},
    queue: capturingQueue(),
    secretSealer: testSealer,
    workspaceLimits: { ...DEFAULT_WORKSPACE_LIMITS, ...limits },
    ...extra,
  } as OperationDeps & { queue: ReturnType<typeof capturingQueue> };
}

/** The error a call throws (fails the test when it does not throw). */
async function refusal(call: Promise<unknown>): Promise<AppError> {
  try {
    await call;
  } catch (e) {
    if (e instanceof AppError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

/** Every item of the workspace partition, as JSON by sort key: what a refused call must leave alone. */
async function partition(workspace: string): Promise<Record<string, string>> {
  const out = await table.doc.send(
    new QueryCommand({
      TableName: table.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.workspacePk(workspace) },
      ConsistentRead: true,
    }),
  );
  return Object.fromEntries((out.Items ?? []).map((i) => [String(i.sk), JSON.stringify(i, Object.keys(i).sort())]));
}

const createBody = (i = 0) => ({ url: `https://hooks.example.com/${i}`, eventTypes: ['order.shipped'] });

async function sources(endpoint: { workspace: string; endpointId: string }, statuses: DeliveryStatus[]) {
  const records = statuses.map((status, i) => ({
    ...newHeldDelivery(
      { workspace: endpoint.workspace, endpointId: endpoint.endpointId, eventType: 'order.shipped', payload: { orderId: `o${i}` } },
      new Date(clock.getTime() - 60_000),
    ),
    status,
  }));
  await batchWriteAll(
    table,
    records.map((r) => ({ PutRequest: { Item: summaryItem(r) } })),
  );
  return records;
}

describe('test-send and replay quotas per workspace', () => {
  it('shares the test-send quota between the tokens of a workspace, refuses the next with 429 and changes nothing, and opens again with the next minute', async () => {
    const workspace = freshWorkspace();
    const endpoint = await seedEndpoint(table, { workspace, url: 'https://hooks.example.com/t' }, clock);
    const d = deps({ testSendsPerMinute: 3 });
    await sendWebhookTestEvent(d, caller(workspace, 'tok_a'), { params: { slug: workspace, endpointId: endpoint.endpointId } } as never);
    await sendWebhookTestEvent(d, caller(workspace, 'tok_b'), { params: { slug: workspace, endpointId: endpoint.endpointId } } as never);
    await sendWebhookTestEvent(d, caller(workspace, 'tok_c'), { params: { slug: workspace, endpointId: endpoint.endpointId } } as never);
    const before = await partition(workspace);

    const error = await refusal(
      sendWebhookTestEvent(d, caller(workspace, 'tok_d'), { params: { slug: workspace, endpointId: endpoint.endpointId } } as never),
    );
    expect(error.tag).toBe('RateLimited');
    expect(error.status).toBe(429);
    expect(error.detail).toBe("This workspace's quota of 3 test sends per minute, shared by all its tokens, is used up; retry after 55 s");
    expect(error.retryAfterSeconds).toBe(55);
    expect(d.queue.sent, 'nothing queued for the refused send').toHaveLength(3);
    expect(await partition(workspace)).toEqual(before);

    // Another workspace has its own quota.
    const other = freshWorkspace();
    const elsewhere = await seedEndpoint(table, { workspace: other, url: 'https://hooks.example.com/o' }, clock);
    await sendWebhookTestEvent(d, caller(other), { params: { slug: other, endpointId: elsewhere.endpointId } } as never);

    clock = new Date(clock.getTime() + 60_000);
    await sendWebhookTestEvent(d, caller(workspace), { params: { slug: workspace, endpointId: endpoint.endpointId } } as never);
    expect(d.queue.sent).toHaveLength(5);
  });

  it('charges only sends that pass every other check: a 404 or 409 costs no quota', async () => {
    const workspace = freshWorkspace();
    const disabled = await seedEndpoint(table, { workspace, url: 'https://hooks.example.com/d', enabled: false }, clock);
    const live = await seedEndpoint(table, { workspace, url: 'https://hooks.example.com/l' }, clock);
    const d = deps({ testSendsPerMinute: 1 });
    expect(
      (await refusal(sendWebhookTestEvent(d, caller(workspace), { params: { slug: workspace, endpointId: disabled.endpointId } } as never)))
        .tag,
    ).toBe('EndpointDisabled');
    expect(
      (await refusal(sendWebhookTestEvent(d, caller(workspace), { params: { slug: workspace, endpointId: newId('whe', clock) } } as never)))
        .tag,
    ).toBe('EndpointNotFound');
    await sendWebhookTestEvent(d, caller(workspace), { params: { slug: workspace, endpointId: live.endpointId } } as never);
    expect(
      (await refusal(sendWebhookTestEvent(d, caller(workspace), { params: { slug: workspace, endpointId: live.endpointId } } as never)))
        .tag,
    ).toBe('RateLimited');
  });

  it('limits interactive replays per workspace, but recovery jobs replay at their own pace, uncharged', async () => {
    const workspace = freshWorkspace();
    const endpoint = await seedEndpoint(table, { workspace, url: 'https://hooks.example.com/r' }, clock);
    const failed = await sources(endpoint, ['failed', 'failed', 'failed', 'failed', 'failed']);
    const sent: { message: JobMessage }[] = [];
    const jobQueue: JobQueue = { send: async (message) => void sent.push({ message }) };
    const d = deps({ replaysPerMinute: 2 }, { jobQueue });

    await replayWebhookDelivery(d, caller(workspace, 'tok_a'), { params: { slug: workspace, deliveryId: failed[0]!.deliveryId } } as never);
    await replayWebhookDelivery(d, caller(workspace, 'tok_b'), { params: { slug: workspace, deliveryId: failed[1]!.deliveryId } } as never);
    const before = await partition(workspace);
    const error = await refusal(
      replayWebhookDelivery(d, caller(workspace, 'tok_c'), { params: { slug: workspace, deliveryId: failed[2]!.deliveryId } } as never),
    );
    expect(error.tag).toBe('RateLimited');
    expect(error.detail).toMatch(
      /^This workspace's quota of 2 replays per minute, shared by all its tokens, is used up; retry after \d+ s$/,
    );
    expect(await partition(workspace), 'no audit event, nothing written').toEqual(before);
    expect(d.queue.sent).toHaveLength(2);

    // A recovery job over the same window replays all five (the two replayed ones too, asked to), though the interactive quota is used up.
    const job = (await recoverWebhookDeliveries(d, caller(workspace), {
      params: { slug: workspace, endpointId: endpoint.endpointId },
      body: { since: new Date(clock.getTime() - 3_600_000).toISOString(), statuses: ['failed'], includeReplayed: true },
    } as never)) as { jobId: string };
    const worker = { table, queue: capturingQueue(), jobQueue, now: () => clock, sleep: async () => undefined, ratePerSecond: 20 };
    for (let i = 0; i < 10 && sent.length > 0; i++) await runRecoverySlice(worker, sent.shift()!.message.jobId);
    expect(worker.queue.sent, `job ${job.jobId} replayed every source`).toHaveLength(5);
  });
});

describe('endpoint and token limits per workspace', () => {
  it('refuses the endpoint past the limit with 409, writing nothing; a delete frees a slot', async () => {
    const workspace = freshWorkspace();
    const d = deps({ endpoints: 2 });
    const first = await createWebhook(d, caller(workspace), { body: createBody(1) } as never);
    await createWebhook(d, caller(workspace), { body: createBody(2) } as never);
    const before = await partition(workspace);

    const error = await refusal(createWebhook(d, caller(workspace), { body: createBody(3) } as never));
    expect(error.tag).toBe('Conflict');
    expect(error.status).toBe(409);
    expect(error.detail).toBe('This workspace has 2 webhook endpoints, the most it may have; delete one first');
    expect(await partition(workspace)).toEqual(before);

    await deleteWebhook(d, caller(workspace), { params: { slug: workspace, endpointId: first.endpointId } } as never);
    await createWebhook(d, caller(workspace), { body: createBody(4) } as never);
    expect(await currentCount(table, workspace, 'endpoints')).toBe(2);
  });

  it('never passes the limit under concurrent creates, and a delete of a missing endpoint changes no count', async () => {
    const workspace = freshWorkspace();
    const d = deps({ endpoints: 4 });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => createWebhook(d, caller(workspace), { body: createBody(i) } as never)),
    );
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(4);
    for (const o of outcomes) if (o.status === 'rejected') expect((o.reason as AppError).tag).toBe('Conflict');
    const stored = await table.doc.send(
      new QueryCommand({
        TableName: table.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
        ExpressionAttributeValues: { ':pk': keys.workspacePk(workspace), ':p': SK_PREFIX.endpoint },
        ConsistentRead: true,
      }),
    );
    expect(stored.Items).toHaveLength(4);
    expect(await currentCount(table, workspace, 'endpoints')).toBe(4);

    expect(
      (await refusal(deleteWebhook(d, caller(workspace), { params: { slug: workspace, endpointId: newId('whe', clock) } } as never))).tag,
    ).toBe('EndpointNotFound');
    expect(await currentCount(table, workspace, 'endpoints')).toBe(4);
  });

  it('counts a workspace written before counting began on first use, and keeps its limit', async () => {
    const workspace = freshWorkspace();
    // Three endpoints as an earlier release stored them: no counter item.
    const legacy = [];
    for (let i = 0; i < 3; i++) {
      const endpointId = newId('whe', clock);
      legacy.push(endpointId);
      await table.doc.send(
        new PutCommand({
          TableName: table.tableName,
          Item: {
            ...keys.endpoint(workspace, endpointId),
            type: 'endpoint',
            endpointId,
            workspace,
            url: `https://hooks.example.com/l${i}`,
            eventTypes: ['order.shipped'],
            enabled: true,
            createdAt: clock.toISOString(),
            updatedAt: clock.toISOString(),
          },
        }),
      );
    }
    const d = deps({ endpoints: 3 });
    const before = await partition(workspace);
    expect((await refusal(createWebhook(d, caller(workspace), { body: createBody() } as never))).tag).toBe('Conflict');
    expect(await partition(workspace), 'counting a refused create stores nothing').toEqual(before);

    await deleteWebhook(d, caller(workspace), { params: { slug: workspace, endpointId: legacy[0]! } } as never);
    const counter = await table.doc.send(
      new QueryCommand({
        TableName: table.tableName,
        KeyConditionExpression: 'pk = :pk AND sk = :sk',
        ExpressionAttributeValues: { ':pk': countsKey(workspace).pk, ':sk': countsKey(workspace).sk },
        ConsistentRead: true,
      }),
    );
    expect(counter.Items?.[0]).toMatchObject({ endpoints: 2, type: 'workspace-counts' });
    await createWebhook(d, caller(workspace), { body: createBody() } as never);
    expect((await refusal(createWebhook(d, caller(workspace), { body: createBody() } as never))).tag).toBe('Conflict');
  });

  it('counts tokens issued by the system, refuses the token past the limit with 409, and a revocation frees a slot', async () => {
    const workspace = freshWorkspace();
    const seeded = await issueToken(table, workspace, { name: 'seed', scopes: ['admin'] }, clock);
    const d = deps({ apiTokens: 2 });
    const made = await createApiToken(d, caller(workspace, seeded.tokenId), { body: { name: 'ci', scopes: ['read'] } } as never);
    const before = await partition(workspace);

    const error = await refusal(
      createApiToken(d, caller(workspace, seeded.tokenId), { body: { name: 'one more', scopes: ['read'] } } as never),
    );
    expect(error.tag).toBe('Conflict');
    expect(error.detail).toBe('This workspace has 2 API tokens, the most it may have; revoke one first');
    expect(await partition(workspace)).toEqual(before);

    await revokeApiToken(d, caller(workspace, seeded.tokenId), { params: { slug: workspace, tokenId: made.tokenId } } as never);
    await createApiToken(d, caller(workspace, seeded.tokenId), { body: { name: 'again', scopes: ['read'] } } as never);
    expect(await currentCount(table, workspace, 'apiTokens')).toBe(2);
  });

  it('applies the defaults when the operations are given no limits', () => {
    expect(workspaceLimitsOf({})).toEqual({ testSendsPerMinute: 60, replaysPerMinute: 600, endpoints: 1000, apiTokens: 100 });
  });
});
