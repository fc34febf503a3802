/**
 * Every AWS call of every function, proven allowed by IAM (docs/architecture.md#the-iam-check): a
 * journey drives every function on the local stack, which records each call's action, resource ARN
 * and condition keys per invocation; each call is then evaluated against the function's synthesized
 * role policies and the resource's policy with a real IAM policy evaluator. A denied call fails with
 * the function, the action and the resource; a granted action no call used fails unless it is
 * justified in ./unused-grants.ts, and so does a justification of an action now used.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AwsCallRecorder } from '../../bin/local/aws-call-recorder';
import { loadHandler } from '../../bin/local/lambda-loader';
import { eventBridgeEvent } from '../../bin/local/stack';
import { EVENT_SOURCE } from '../../lambdas/contract/deployment';
import { IDEMPOTENCY_KEY_HEADER } from '../../lambdas/contract/idempotency';
import { OPERATIONS, routeKind, type OperationDef } from '../../lambdas/contract/operations';
import { platformFetch } from '../../bin/platform-client';
import { SCHEDULED_JOBS } from '../../lambdas/domain/scheduled-jobs';
import { putNotification } from '../../lambdas/store/notifications';
import { synthesizeStage } from '../../lib/synth-template';
import { startTestApi, type TestApi } from '../helpers/local-api';
import { startOidcIssuer, TEST_STAFF_ROLES, type OidcIssuer } from '../support/oidc-issuer';
import { scriptedReceiver } from '../helpers/scripted-receiver';
import { deployedStack, evaluate, grantedActions, type DeployedStack, type Verdict } from './deployed-policies';
import { JUSTIFIED_UNUSED_GRANTS } from './unused-grants';

let api: TestApi;
let stack: DeployedStack;
/** The outbox relay's puts of events carrying this text fail (the relay block drives its on-failure queue with it). */
let failRelayFor = '';
let recorder: AwsCallRecorder;
/** The identity provider staff sign in with (a real OpenID provider on loopback). */
let idp: OidcIssuer;
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  stack = deployedStack(synthesizeStage().template);
  // The resources resolve lazily: the local names are in the environment once the stack has started.
  let resources: ReturnType<DeployedStack['resources']> | undefined;
  const deployed = () => (resources ??= stack.resources(process.env));
  recorder = new AwsCallRecorder({
    table: (name, index) => deployed().table(name, index),
    queue: (url) => deployed().queue(url),
    bus: (name) => deployed().bus(name),
    key: () => deployed().key(),
    stream: (name) => deployed().stream(name),
    onFailureQueue: (fn) => deployed().onFailureQueue(fn),
  });
  idp = await startOidcIssuer();
  stops.push(() => idp.close());
  api = await startTestApi({
    timeScale: 1000,
    schedules: false,
    consoleOidc: { issuer: idp.issuer, clientId: idp.clientId, roles: TEST_STAFF_ROLES },
    onPipelineError: (w, e) => {
      if (!failRelayFor) console.error(w, e);
    },
    recordAwsCalls: recorder,
    instrument: {
      adapters: (own) => ({
        ...own,
        domainEvents: (name) => {
          const bus = own.domainEvents(name);
          return {
            put: async (events) => {
              if (failRelayFor && events.some((e) => e.payloadJson.includes(failRelayFor))) throw new Error('EventBridge unavailable');
              return bus.put(events);
            },
          };
        },
      }),
    },
  });
}, 300_000);

afterAll(async () => {
  await Promise.all(stops.map((s) => s()));
  await api?.close();
  recorder?.close();
});

/** The stream actions of the outbox relay's event source mapping. */
const STREAM_ACTIONS = new Set(['dynamodb:DescribeStream', 'dynamodb:GetShardIterator', 'dynamodb:GetRecords', 'dynamodb:ListStreams']);

/** The path of `def` with its parameters filled from `ids`. */
const pathOf = (def: OperationDef, ids: Record<string, string>) =>
  def.path.replace(/\{(\w+)\}/g, (_m, name: string) => ids[name] ?? 'none');

describe('IAM, call by call', () => {
  it('allows every AWS call every function makes, with the synthesized roles and resource policies', async () => {
    const ok = await scriptedReceiver((_req, res) => res.writeHead(200).end('ok'));
    const failing = await scriptedReceiver((_req, res) => res.writeHead(500).end('no'));
    stops.push(
      () => ok.stop(),
      () => failing.stop(),
    );
    const slug = api.workspace;
    const ids: Record<string, string> = { slug };
    const since = new Date(Date.now() - 60_000).toISOString();

    // REST: every route of the contract, each with the ids the earlier ones made.
    const created = await api.call('POST', `/workspaces/${slug}/webhooks`, { body: { url: ok.url, eventTypes: ['webhook.test_event'] } });
    expect(created.status, created.text).toBe(201);
    ids.endpointId = created.body.endpointId;
    const sent = await api.call('POST', `/workspaces/${slug}/webhooks/${ids.endpointId}/test-event`, { body: {} });
    expect(sent.status).toBe(202);
    ids.deliveryId = sent.body.deliveryId;
    await vi.waitFor(
      async () =>
        expect((await api.call('GET', `/workspaces/${slug}/webhooks/deliveries/${ids.deliveryId}`)).body.status).toBe('delivered'),
      {
        timeout: 10_000,
      },
    );
    const token = await api.call('POST', `/workspaces/${slug}/api-tokens`, { body: { name: 'iam', scopes: ['read'] } });
    ids.tokenId = token.body.tokenId;
    const job = await api.call('POST', `/workspaces/${slug}/webhooks/${ids.endpointId}/recover`, { body: { since } });
    ids.jobId = job.body.jobId;
    // A notification to acknowledge (the dead-letter consumer writes one later in the journey); written by the test, not a function.
    ids.notificationId = (
      await putNotification(api.table, slug, { kind: 'endpoint.disabled', message: 'iam journey' }, new Date())
    ).notificationId;
    // A portal session, whose link the exchange opens (and which is revoked last).
    const portal = await api.call('POST', `/workspaces/${slug}/portal-sessions`, { body: { readOnly: true } });
    expect(portal.status, portal.text).toBe(201);
    ids.sessionId = portal.body.sessionId;
    // Staff sign-in: an ID token of the provider with a nonce of the service, for the sign-in route
    // below; and a staff admin session, which calls the staff-only routes and reads every workspace
    // route (a staff session's call reads the workspace item first).
    const staffIdToken = async () => {
      const nonce = await api.call('POST', '/console-sessions/nonces', { token: null });
      expect(nonce.status, nonce.text).toBe(201);
      return idp.signIdToken({
        sub: 'ana',
        email: 'ana@staff.test',
        email_verified: true,
        groups: TEST_STAFF_ROLES.admin,
        nonce: nonce.body.nonce as string,
      });
    };
    const staff = await api.call('POST', '/console-sessions', { token: null, body: { idToken: await staffIdToken() } });
    expect(staff.status, staff.text).toBe(200);
    const staffIds = { ...ids, sessionId: staff.body.sessionId as string };
    for (const def of (OPERATIONS as readonly OperationDef[]).filter((d) => routeKind(d) === 'token' && d.readOnly)) {
      const read = await api.call(def.method, pathOf(def, staffIds), {
        token: staff.body.token as string,
        ...(def.method === 'POST'
          ? {
              body:
                def.operationId === 'testWebhookFilter' ? { filter: { orderId: { $prefix: 'iam-' } }, payload: { orderId: 'iam-1' } } : {},
            }
          : {}),
      });
      expect(read.status, `${def.operationId} in a staff session: ${read.text}`).toBeLessThan(500);
    }
    const bodies: Record<string, unknown> = {
      createConsoleSession: { idToken: await staffIdToken() },
      exchangePortalSession: { code: new URL(portal.body.url as string).hash.slice('#portal='.length) },
      setBranding: { displayName: 'IAM journey', accentColor: '#1f5fbf' },
      createWebhook: { url: ok.url, eventTypes: ['webhook.test_event'] },
      // Dropping an event type deletes its subscription; a secret header's value is sealed (kms:GenerateDataKey).
      updateWebhook: { description: 'iam journey', eventTypes: ['order.shipped'], headers: { 'X-Api-Key': 'iam-journey' } },
      sendWebhookTestEvent: {},
      replayWebhookDelivery: {},
      createApiToken: { name: 'iam-2', scopes: ['read'] },
      recoverWebhookDeliveries: { since, dryRun: true },
      testWebhookFilter: { filter: { orderId: { $prefix: 'iam-' } }, payload: { orderId: 'iam-1' } },
    };
    // The platform API, signed by the allowed principal, on a workspace of its own: created first, erased last.
    const platformIds: Record<string, string> = { slug: 'iam-platform' };
    const signing = { credentials: api.platform.platformCredentials, region: api.platform.platformCredentials.region };
    Object.assign(bodies, {
      platformCreateWorkspace: { slug: platformIds.slug, name: 'IAM platform', owner: { email: 'owner@iam.test' } },
      platformUpdateWorkspace: { name: 'IAM platform, renamed' },
      platformCreateApiToken: { name: 'iam-platform', scopes: ['read'] },
    });
    const rank: Record<string, number> = {
      platformCreateWorkspace: -1,
      deleteWebhook: 1,
      revokeApiToken: 1,
      revokePortalSession: 1,
      revokeConsoleSession: 1,
      platformDeleteWorkspace: 1,
      platformGetJob: 2,
    };
    const ordered = [...(OPERATIONS as readonly OperationDef[])].sort((a, b) => (rank[a.operationId] ?? 0) - (rank[b.operationId] ?? 0));
    const statuses: Record<string, number> = {};
    for (const def of ordered) {
      const body = bodies[def.operationId] ?? (def.method === 'POST' || def.method === 'PATCH' ? {} : undefined);
      if (routeKind(def) === 'iam') {
        const res = await platformFetch(
          { method: def.method, url: `${api.apiUrl}${pathOf(def, platformIds)}`, ...(body === undefined ? {} : { body }) },
          signing,
        );
        statuses[def.operationId] = res.status;
        const answer = (await res.json().catch(() => ({}))) as { jobId?: string };
        expect(res.status, `${def.operationId}: ${JSON.stringify(answer)}`).toBeLessThan(300);
        if (def.operationId === 'platformDeleteWorkspace') platformIds.jobId = answer.jobId!;
        continue;
      }
      // An idempotent operation claims its key, and stores the answer (Update) or, failing, drops the claim (Delete).
      const headers = def.idempotent ? { [IDEMPOTENCY_KEY_HEADER]: `iam-${def.operationId}` } : undefined;
      // The staff-only routes in the staff session (a workspace token is refused them before any work).
      const asStaff = def.staffOnly ? { token: staff.body.token as string } : {};
      statuses[def.operationId] = (
        await api.call(def.method, pathOf(def, def.staffOnly ? staffIds : ids), {
          ...(body === undefined ? {} : { body }),
          headers,
          ...asStaff,
        })
      ).status;
      if (def.staffOnly) expect(statuses[def.operationId], def.operationId).toBeLessThan(300);
      if (def.idempotent) {
        const failed = await api.call(
          def.method,
          pathOf(def, { ...ids, endpointId: 'whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC', deliveryId: 'whd_01JD2Y9P0R6S8T1V3W5X7Y9ZAB' }),
          {
            body: def.operationId === 'createWebhook' ? { url: 'https://10.0.0.1/x', eventTypes: ['webhook.test_event'] } : body,
            headers: { [IDEMPOTENCY_KEY_HEADER]: `iam-failing-${def.operationId}` },
          },
        );
        expect(failed.status, `${def.operationId} with an idempotency key, failing`).toBeGreaterThanOrEqual(400);
      }
    }
    // Each route reached its handler's work, not an error before it.
    expect(Object.entries(statuses).filter(([, status]) => status >= 500)).toEqual([]);
    // The delivery log filtered by endpoint reads that endpoint's shards, once the endpoint is found.
    const byEndpoint = await api.call('GET', `/workspaces/${slug}/deliveries?endpointId=${ids.endpointId}`);
    expect(byEndpoint.status, byEndpoint.text).toBe(200);

    // A failing endpoint: its retries run in the slow lane and end in the dead-letter queue.
    const doomed = await api.call('POST', `/workspaces/${slug}/webhooks`, {
      body: { url: failing.url, eventTypes: ['webhook.test_event'] },
    });
    const doomedSent = await api.call('POST', `/workspaces/${slug}/webhooks/${doomed.body.endpointId}/test-event`, { body: {} });
    await vi.waitFor(
      async () =>
        expect((await api.call('GET', `/workspaces/${slug}/webhooks/deliveries/${doomedSent.body.deliveryId}`)).body.status).toBe('failed'),
      { timeout: 30_000, interval: 200 },
    );
    // A failed delivery is the one a replay queues again.
    const replayed = await api.call('POST', `/workspaces/${slug}/webhooks/deliveries/${doomedSent.body.deliveryId}/replay`, { body: {} });
    expect(replayed.status, replayed.text).toBe(202);
    // The log filtered by event reads that event's partition of the event index (REST here, MCP below).
    const byEvent = await api.call(
      'GET',
      `/workspaces/${slug}/deliveries?eventId=${encodeURIComponent(doomedSent.body.eventId as string)}`,
    );
    expect(byEvent.status, byEvent.text).toBe(200);
    expect(byEvent.body.items).toHaveLength(2);
    // A recovery that finds failed deliveries: its worker replays them, each on its endpoint's condition.
    const recovery = await api.call('POST', `/workspaces/${slug}/webhooks/${doomed.body.endpointId}/recover`, { body: { since } });
    expect(recovery.status, recovery.text).toBe(202);
    await vi.waitFor(
      async () => expect((await api.call('GET', `/workspaces/${slug}/jobs/${recovery.body.jobId}`)).body.status).not.toBe('running'),
      { timeout: 15_000 },
    );

    // MCP: every tool, through the official client.
    const mcp = new Client({ name: 'iam-journey', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(api.mcpUrl), { requestInit: { headers: { authorization: `Bearer ${api.token}` } } }),
    );
    stops.push(() => mcp.close());
    const mcpCreated = (
      await mcp.callTool({ name: 'create_webhook', arguments: { slug, url: ok.url, eventTypes: ['webhook.test_event'] } })
    ).structuredContent as { endpointId: string };
    const mcpIds: Record<string, string> = { ...ids, endpointId: mcpCreated.endpointId };
    const mcpFailures: string[] = [];
    // Only token routes are tools (a public route has none).
    for (const def of ordered.filter((d) => d.mcpTool)) {
      const args = {
        ...(bodies[def.operationId] as object | undefined),
        ...Object.fromEntries(def.path.match(/\{\w+\}/g)?.map((p) => [p.slice(1, -1), mcpIds[p.slice(1, -1)]]) ?? []),
      };
      const result = await mcp.callTool({ name: def.mcpTool!, arguments: args });
      const tag = (result.structuredContent as { tag?: string } | undefined)?.tag;
      if (result.isError && (tag === undefined || tag === 'InternalError'))
        mcpFailures.push(`${def.mcpTool}: ${JSON.stringify(result.content)}`);
    }
    expect(mcpFailures).toEqual([]);
    const mcpByEvent = await mcp.callTool({ name: 'list_deliveries', arguments: { slug, eventId: doomedSent.body.eventId as string } });
    expect(mcpByEvent.isError ?? false, JSON.stringify(mcpByEvent.content)).toBe(false);

    // The publisher, as EventBridge's rule target, fanning an event out to a subscribed endpoint.
    const subscriber = await api.call('POST', `/workspaces/${slug}/webhooks`, { body: { url: ok.url, eventTypes: ['order.shipped'] } });
    const publish = await loadHandler<(e: unknown) => Promise<unknown>>('publisher');
    await publish(eventBridgeEvent(EVENT_SOURCE, 'order.shipped', { workspace: slug, payload: { orderId: 'iam-1' } }));
    await vi.waitFor(
      async () =>
        expect((await api.call('GET', `/workspaces/${slug}/webhooks/${subscriber.body.endpointId}/deliveries`)).body.items).toMatchObject([
          { status: 'delivered' },
        ]),
      { timeout: 10_000 },
    );

    // ---- The outbox relay (docs/architecture.md#outbox): the operations above wrote their events to
    // the outbox in their transactions; the relay, on the outbox table's stream, put them on the bus
    // (the publisher fanned them out). A relay that keeps failing sends the stream positions it gives
    // up to its on-failure queue.
    const relayed = await api.call('POST', `/workspaces/${slug}/webhooks`, { body: { url: ok.url, eventTypes: ['webhook.updated'] } });
    expect(relayed.status).toBe(201);
    await api.call('PATCH', `/workspaces/${slug}/webhooks/${relayed.body.endpointId}`, { body: { description: 'relayed' } });
    await vi.waitFor(
      async () =>
        expect((await api.call('GET', `/workspaces/${slug}/webhooks/${relayed.body.endpointId}/deliveries`)).body.items).toMatchObject([
          { eventType: 'webhook.updated', status: 'delivered' },
        ]),
      { timeout: 15_000, interval: 100 },
    );
    const depth = api.queues.outboxFailures.depth;
    failRelayFor = relayed.body.endpointId as string;
    try {
      await api.call('PATCH', `/workspaces/${slug}/webhooks/${relayed.body.endpointId}`, { body: { description: 'given up' } });
      await vi.waitFor(() => expect(api.queues.outboxFailures.depth).toBeGreaterThan(depth), { timeout: 15_000, interval: 50 });
    } finally {
      failRelayFor = '';
    }
    expect(recorder.invoked.has('outbox-relay')).toBe(true);

    // The schedules, as their rules invoke them.
    for (const job of SCHEDULED_JOBS) await (await loadHandler<() => Promise<unknown>>(job.entry))();

    // The console and the docs.
    expect((await api.call('GET', '/console', { token: null })).status).toBe(200);
    expect((await api.call('GET', '/openapi.json', { token: null })).status).toBe(200);

    // The recovery job the journey started has run its slices.
    await vi.waitFor(async () => expect((await api.call('GET', `/workspaces/${slug}/jobs/${ids.jobId}`)).body.status).not.toBe('running'), {
      timeout: 15_000,
    });

    // The erasure the platform API started has run its slices (the jobs worker's erase kind).
    await vi.waitFor(
      async () => {
        const res = await platformFetch({ method: 'GET', url: `${api.apiUrl}/platform/jobs/${platformIds.jobId}` }, signing);
        expect(((await res.json()) as { status: string }).status).toBe('completed');
      },
      { timeout: 15_000 },
    );

    // Every call, evaluated.
    const calls = [...recorder.calls];
    const verdicts: Verdict[] = [];
    const seen = new Map<string, Verdict>();
    for (const call of calls) {
      const key = JSON.stringify([call.function, call.action, call.resource, call.context]);
      let verdict = seen.get(key);
      if (!verdict) {
        verdict = await evaluate(stack, call);
        seen.set(key, verdict);
      }
      verdicts.push(verdict);
    }
    const denied = [...seen.values()].filter((v) => v.result !== 'Allowed');
    const invoked = recorder.invoked;
    const all = [...stack.functions.keys()].sort();
    // Per granted action, the functions whose calls never used it.
    const unused = new Map<string, string[]>();
    for (const fn of stack.functions.values()) {
      const used = new Set(calls.filter((c) => c.function === fn.entry).map((c) => c.action));
      for (const action of grantedActions(fn)) if (!used.has(action)) unused.set(action, [...(unused.get(action) ?? []), fn.entry]);
    }
    const unusedPairs = [...unused.entries()].flatMap(([action, fns]) => fns.map((fn) => `${fn} ${action}`)).sort();
    console.log(
      [
        `IAM check: ${calls.length} calls recorded (${seen.size} distinct), ${new Set(calls.map((c) => c.action)).size} distinct actions: ${[...new Set(calls.map((c) => c.action))].sort().join(', ')}`,
        `functions covered: ${all.filter((f) => invoked.has(f)).length} of ${all.length} in the template; not invoked: ${all.filter((f) => !invoked.has(f)).join(', ') || 'none'}; invoked, making no AWS call: ${all.filter((f) => invoked.has(f) && !calls.some((c) => c.function === f)).join(', ') || 'none'}`,
        `calls outside any invocation: ${recorder.unattributed}`,
        `denied: ${denied.length}`,
        ...denied.map(
          (v) =>
            `  DENIED ${v.call.function} ${v.call.action} ${v.call.resource} ${JSON.stringify(v.call.context)} → ${v.result}${v.errors ? ` ${v.errors}` : ''}`,
        ),
        `granted actions no call used (${unusedPairs.length} function-action pairs), each justified in test/iam/unused-grants.ts:`,
        ...unusedPairs.map((pair) => `  ${pair}${JUSTIFIED_UNUSED_GRANTS[pair] ? '' : '  (NOT JUSTIFIED)'}`),
      ].join('\n'),
    );
    expect(all.filter((f) => !invoked.has(f))).toEqual([]);
    // DynamoDB gives every item request its leading keys; a call recorded without them would pass
    // a `ForAllValues` condition on them unchecked.
    expect([
      ...new Set(
        calls
          // The stream reads of the relay's event source mapping name a stream, not items.
          .filter((c) => c.action.startsWith('dynamodb:') && !STREAM_ACTIONS.has(c.action) && !c.context['dynamodb:LeadingKeys'])
          .map((c) => `${c.function} ${c.action}`),
      ),
    ]).toEqual([]);
    expect(recorder.unattributed).toBe(0);
    expect(
      denied.map((v) => `${v.call.function} ${v.call.action} ${v.call.resource} → ${v.result}${v.errors ? ` ${v.errors}` : ''}`),
    ).toEqual([]);
    // Every grant is used or justified, and every justification is of a grant still unused: remove a
    // new unused grant (lib/constructs/function-access.ts) or justify it; drop a justification once used.
    expect(unusedPairs, 'the unused grants are exactly those justified in test/iam/unused-grants.ts').toEqual(
      Object.keys(JUSTIFIED_UNUSED_GRANTS).sort(),
    );
  }, 300_000);

  it('denies what the roles do not grant: the check can fail', async () => {
    const deployed = stack.resources(process.env);
    const table = deployed.table(process.env.TABLE_NAME!);
    const context = { 'aws:SecureTransport': 'true', 'kms:EncryptionContext:purpose': 'webhooks-endpoint-signing-secret' };
    const verdict = async (fn: string, action: string, resource: string, ctx: Record<string, string | string[]>) =>
      (await evaluate(stack, { function: fn, action, resource, context: ctx })).result;
    // Granted as recorded in the journey…
    expect(await verdict('dispatcher', 'kms:Decrypt', deployed.key(), context)).toBe('Allowed');
    // …but not another action, not another encryption context, not another function.
    expect(await verdict('dispatcher', 'kms:GenerateDataKey', deployed.key(), context)).toBe('ImplicitlyDenied');
    expect(await verdict('dispatcher', 'kms:Decrypt', deployed.key(), { ...context, 'kms:EncryptionContext:purpose': 'other' })).toBe(
      'ImplicitlyDenied',
    );
    expect(await verdict('list-webhooks', 'kms:Decrypt', deployed.key(), context)).toBe('ImplicitlyDenied');
    // A read operation updates only its rate-limit counters, by their leading key.
    expect(await verdict('get-job', 'dynamodb:UpdateItem', table.arn, { 'dynamodb:LeadingKeys': ['RL#rest_read#demo'] })).toBe('Allowed');
    expect(await verdict('get-job', 'dynamodb:UpdateItem', table.arn, { 'dynamodb:LeadingKeys': ['WS#demo'] })).toBe('ImplicitlyDenied');
    // The queue policies refuse plain HTTP even to a granted sender.
    const queue = deployed.queue(process.env.DELIVERY_QUEUE_URL!);
    expect(await verdict('send-webhook-test-event', 'sqs:SendMessage', queue, { 'aws:SecureTransport': 'true' })).toBe('Allowed');
    expect(await verdict('send-webhook-test-event', 'sqs:SendMessage', queue, { 'aws:SecureTransport': 'false' })).toBe('ExplicitlyDenied');
  });
});
