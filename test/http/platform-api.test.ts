/**
 * The platform API (docs/api.md#platform-api) on the local stack, signed by the AWS SDK's own
 * SigV4 signer with the credentials the stack writes to stack.json: the workspace lifecycle works
 * for the allowed principal, and every request that is unsigned, wrongly signed, replayed after
 * the clock skew, tampered with, unsigned in its body or signed by a principal not allowed is
 * refused with 403 and changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { platformFetch, signPlatformRequest, type PlatformRequest, type PlatformSigning } from '../../bin/platform-client';
import { startTestApi, type TestApi } from '../helpers/local-api';

let api: TestApi;
let allowed: PlatformSigning;
let other: PlatformSigning;

beforeAll(async () => {
  api = await startTestApi();
  const { platformCredentials, otherCredentials } = api.platform;
  allowed = { credentials: platformCredentials, region: platformCredentials.region };
  other = { credentials: otherCredentials, region: otherCredentials.region };
});
afterAll(async () => {
  await api?.close();
});

interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

async function answer(res: Response): Promise<Answer> {
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

/** A platform API call signed by `signing` (the allowed principal by default). */
async function platform(method: string, path: string, body?: unknown, signing: PlatformSigning = allowed): Promise<Answer> {
  return answer(await platformFetch({ method, url: `${api.apiUrl}${path}`, ...(body === undefined ? {} : { body }) }, signing));
}

/** Sends a request signed for `signed` but as `sent` says (a tampered or replayed request). */
async function sendSigned(
  request: PlatformRequest,
  change: (s: Awaited<ReturnType<typeof signPlatformRequest>>) => RequestInit,
): Promise<Answer> {
  const signed = await signPlatformRequest(request, allowed);
  return answer(await fetch(signed.url, change(signed)));
}

const without = (headers: Record<string, string>, name: string) => Object.fromEntries(Object.entries(headers).filter(([k]) => k !== name));

let counter = 0;
const newSlug = () => `plat-${Date.now().toString(36)}-${counter++}`;

/** The 403 problem API Gateway's IAM check answers. */
function expectRefused(res: Answer): void {
  expect(res.status).toBe(403);
  expect(res.headers.get('content-type')).toBe('application/problem+json');
  expect(res.body).toMatchObject({ status: 403, tag: 'Forbidden', type: 'urn:problem:webhooks:Forbidden' });
}

describe('the platform API, signed by an allowed principal', () => {
  it('creates a workspace with its owner, gets, lists and renames it, audited as the Platform API', async () => {
    const slug = newSlug();
    const created = await platform('POST', '/platform/workspaces', { slug, name: 'Acme', owner: { email: 'owner@acme.test' } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ slug, name: 'Acme', createdAt: expect.any(String), status: 'active' });

    expect((await platform('GET', `/platform/workspaces/${slug}`)).body).toEqual(created.body);
    const renamed = await platform('PATCH', `/platform/workspaces/${slug}`, { name: 'Acme Corporation' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({ ...created.body, name: 'Acme Corporation' });
    expect((await platform('GET', `/platform/workspaces/${slug}`)).body.name).toBe('Acme Corporation');

    // Every workspace, page by page, in slug order: the new one among them.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Answer = await platform('GET', `/platform/workspaces?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(1);
      seen.push(...page.body.items.map((w: { slug: string }) => w.slug));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toContain(slug);
    expect(seen).toContain(api.workspace);
    expect([...seen].sort()).toEqual(seen);

    // The owner is the workspace's member; the changes are in its own log, by the Platform API.
    const token = await platform('POST', `/platform/workspaces/${slug}/api-tokens`, { name: 'setup', scopes: ['admin'] });
    expect(token.status).toBe(201);
    const members = await api.call('GET', `/workspaces/${slug}/members`, { token: token.body.token });
    expect(members.body.items).toEqual([expect.objectContaining({ email: 'owner@acme.test', role: 'owner' })]);
    const audit = await api.call('GET', `/workspaces/${slug}/audit-events`, { token: token.body.token });
    const actor = { kind: 'system', id: 'platform-api', name: 'Platform API' };
    expect(audit.body.items.map((e: { action: string; actor: unknown }) => [e.action, e.actor])).toEqual([
      ['api_token.created', actor],
      ['workspace.renamed', actor],
      ['workspace.created', actor],
    ]);
    expect(JSON.stringify(audit.body)).not.toContain('local-platform-backend');
  });

  it('mints an API token, shown once, that works on the workspace routes', async () => {
    const slug = newSlug();
    expect((await platform('POST', '/platform/workspaces', { slug, name: 'Tokens', owner: { email: 'o@t.test' } })).status).toBe(201);
    const minted = await platform('POST', `/platform/workspaces/${slug}/api-tokens`, { name: 'Platform backend', scopes: ['write'] });
    expect(minted.status).toBe(201);
    expect(minted.body).toEqual({
      tokenId: expect.stringMatching(/^tok_/),
      name: 'Platform backend',
      scopes: ['write'],
      createdAt: expect.any(String),
      createdBy: { kind: 'system', id: 'platform-api', name: 'Platform API' },
      token: expect.stringMatching(/^whk_/),
    });
    const endpoint = await api.call('POST', `/workspaces/${slug}/webhooks`, {
      token: minted.body.token,
      body: { url: 'https://hooks.example.com/platform', eventTypes: ['webhook.test_event'] },
    });
    expect(endpoint.status).toBe(201);
    expect((await api.call('GET', `/workspaces/${slug}/webhooks`, { token: minted.body.token })).body.items).toHaveLength(1);
    // A write token cannot list tokens; the minted one is in the list, never its value.
    const listed = await api.call('GET', `/workspaces/${slug}/api-tokens`, {
      token: (await platform('POST', `/platform/workspaces/${slug}/api-tokens`, { name: 'admin', scopes: ['admin'] })).body.token,
    });
    expect(listed.body.items.map((t: { name: string }) => t.name).sort()).toEqual(['Platform backend', 'admin']);
    expect(listed.text).not.toContain(minted.body.token);
  });

  it('mints a portal link for a workspace, opened once, audited as the Platform API', async () => {
    const slug = newSlug();
    expect((await platform('POST', '/platform/workspaces', { slug, name: 'Portal', owner: { email: 'o@p.test' } })).status).toBe(201);
    const minted = await platform('POST', `/platform/workspaces/${slug}/portal-sessions`, { readOnly: true, expiresIn: 900 });
    expect(minted.status).toBe(201);
    expect(minted.body).toEqual({
      sessionId: expect.stringMatching(/^wps_/),
      url: expect.stringContaining('#portal='),
      expiresAt: expect.any(String),
    });
    const code = new URL(minted.body.url).hash.slice('#portal='.length);
    const opened = await api.call('POST', '/portal-sessions/exchange', { token: null, body: { code } });
    expect(opened.status).toBe(200);
    expect(opened.body).toMatchObject({ sessionId: minted.body.sessionId, workspace: slug, readOnly: true });
    // The session reads its workspace and nothing else; the link works once.
    expect((await api.call('GET', `/workspaces/${slug}/webhooks`, { token: opened.body.token })).status).toBe(200);
    expect((await api.call('POST', '/portal-sessions/exchange', { token: null, body: { code } })).status).toBe(410);
    const admin = (await platform('POST', `/platform/workspaces/${slug}/api-tokens`, { name: 'admin', scopes: ['admin'] })).body.token;
    const audit = await api.call('GET', `/workspaces/${slug}/audit-events`, { token: admin });
    expect(audit.body.items).toContainEqual(
      expect.objectContaining({
        action: 'portal_session.created',
        targetId: minted.body.sessionId,
        actor: { kind: 'system', id: 'platform-api', name: 'Platform API' },
      }),
    );
    // No workspace: 404.
    expect((await platform('POST', '/platform/workspaces/no-such-workspace/portal-sessions', {})).body.tag).toBe('WorkspaceNotFound');
  });

  it('erases a workspace through a paced job: access ends at once, the job completes, the slug is free again', async () => {
    const slug = newSlug();
    expect((await platform('POST', '/platform/workspaces', { slug, name: 'Leaving', owner: { email: 'o@l.test' } })).status).toBe(201);
    const token = (await platform('POST', `/platform/workspaces/${slug}/api-tokens`, { name: 'ci', scopes: ['admin'] })).body.token;
    expect(
      (
        await api.call('POST', `/workspaces/${slug}/webhooks`, {
          token,
          body: { url: 'https://hooks.example.com/x', eventTypes: ['webhook.test_event'] },
        })
      ).status,
    ).toBe(201);

    const started = await platform('DELETE', `/platform/workspaces/${slug}`);
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ jobId: expect.stringMatching(/^whj_/), kind: 'erase', workspace: slug });
    expect((await api.call('GET', `/workspaces/${slug}/webhooks`, { token })).status).toBe(401);
    // A repeated DELETE answers the same job.
    expect((await platform('DELETE', `/platform/workspaces/${slug}`)).body.jobId).toBe(started.body.jobId);

    let job = started.body;
    for (let i = 0; i < 60 && job.status === 'running'; i++) {
      await new Promise((r) => setTimeout(r, 500));
      job = (await platform('GET', `/platform/jobs/${started.body.jobId}`)).body;
    }
    expect(job).toMatchObject({ status: 'completed', finishedAt: expect.any(String) });
    expect(job.erased.endpoints).toBe(1);
    expect((await platform('GET', `/platform/workspaces/${slug}`)).status).toBe(404);
    expect((await platform('POST', '/platform/workspaces', { slug, name: 'Back', owner: { email: 'o@l.test' } })).status).toBe(201);
  });

  it('answers 409 for a slug that exists, 404 for one that does not, 400 for bad input; none of them writes', async () => {
    const slug = newSlug();
    expect((await platform('POST', '/platform/workspaces', { slug, name: 'First', owner: { email: 'a@b.test' } })).status).toBe(201);
    const again = await platform('POST', '/platform/workspaces', { slug, name: 'Second', owner: { email: 'c@d.test' } });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ tag: 'Conflict', detail: expect.stringContaining(slug) });
    expect((await platform('GET', `/platform/workspaces/${slug}`)).body.name).toBe('First');
    const admin = await platform('POST', `/platform/workspaces/${slug}/api-tokens`, { name: 'check', scopes: ['admin'] });
    expect((await api.call('GET', `/workspaces/${slug}/members`, { token: admin.body.token })).body.items).toHaveLength(1);

    expect((await platform('GET', '/platform/workspaces/no-such-workspace')).body.tag).toBe('WorkspaceNotFound');
    expect((await platform('PATCH', '/platform/workspaces/no-such-workspace', { name: 'x' })).status).toBe(404);
    expect((await platform('POST', '/platform/workspaces/no-such-workspace/api-tokens', { name: 'x', scopes: ['read'] })).status).toBe(404);

    for (const body of [
      { slug: 'Bad_Slug', name: 'x', owner: { email: 'a@b.test' } },
      { slug: newSlug(), name: 'x', owner: { email: 'not an email' } },
      { slug: newSlug(), name: '   ', owner: { email: 'a@b.test' } },
      { slug: newSlug(), name: 'x' },
      { slug: newSlug(), name: 'x', owner: { email: 'a@b.test' }, extra: true },
    ]) {
      const res = await platform('POST', '/platform/workspaces', body);
      expect([JSON.stringify(body), res.status, res.body.tag]).toEqual([JSON.stringify(body), 400, 'ValidationError']);
      if (typeof body.slug === 'string' && body.slug !== 'Bad_Slug')
        expect((await platform('GET', `/platform/workspaces/${body.slug}`)).status).toBe(404);
    }
    expect((await platform('POST', `/platform/workspaces/${slug}/api-tokens`, { name: 'x', scopes: ['root'] })).status).toBe(400);
  });
});

describe('refused requests change nothing', () => {
  it('refuses unsigned, wrongly signed, replayed, tampered, unsigned-payload and not-allowed requests with 403', async () => {
    const slug = newSlug();
    const body = { slug, name: 'Refused', owner: { email: 'r@r.test' } };
    const url = `${api.apiUrl}/platform/workspaces`;
    const request: PlatformRequest = { method: 'POST', url, body };

    // Unsigned, and a workspace token instead of a signature.
    expectRefused(
      await answer(await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })),
    );
    expectRefused(
      await answer(
        await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${api.token}` },
          body: JSON.stringify(body),
        }),
      ),
    );
    // Signed with the right key id and a wrong secret.
    expectRefused(
      await platform('POST', '/platform/workspaces', body, {
        credentials: { ...api.platform.platformCredentials, secretAccessKey: 'not-the-secret' },
        region: allowed.region,
      }),
    );
    // A request signed 16 minutes ago, replayed now.
    expectRefused(
      await sendSigned({ ...request, signingDate: new Date(Date.now() - 16 * 60_000) }, (s) => ({
        method: s.method,
        headers: without(s.headers, 'host'),
        body: s.body!,
      })),
    );
    // The body changed after signing, with or without its hash header.
    const tampered = JSON.stringify({ ...body, name: 'Tampered' });
    expectRefused(await sendSigned(request, (s) => ({ method: s.method, headers: without(s.headers, 'host'), body: tampered })));
    expectRefused(
      await sendSigned(request, (s) => ({
        method: s.method,
        headers: without(without(s.headers, 'host'), 'x-amz-content-sha256'),
        body: tampered,
      })),
    );
    // The body declared unsigned.
    expectRefused(
      await sendSigned(request, (s) => ({
        method: s.method,
        headers: { ...without(s.headers, 'host'), 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' },
        body: s.body!,
      })),
    );
    // A valid signature of a principal the stage does not allow.
    const notAllowed = await platform('POST', '/platform/workspaces', body, other);
    expectRefused(notAllowed);
    expect(notAllowed.body.detail).toContain('explicit deny');

    // Nothing was created, by any of them.
    expect((await platform('GET', `/platform/workspaces/${slug}`)).status).toBe(404);
    // The not-allowed principal reads nothing either.
    expectRefused(await platform('GET', '/platform/workspaces', undefined, other));
    expectRefused(await platform('GET', `/platform/workspaces/${api.workspace}`, undefined, other));
  });

  it('refuses a workspace token on every platform route, and the not-allowed principal on the erasure routes', async () => {
    for (const [method, path] of [
      ['GET', '/platform/workspaces'],
      ['GET', `/platform/workspaces/${api.workspace}`],
      ['PATCH', `/platform/workspaces/${api.workspace}`],
      ['DELETE', `/platform/workspaces/${api.workspace}`],
      ['POST', `/platform/workspaces/${api.workspace}/api-tokens`],
      ['GET', '/platform/jobs/whj_01JD2YC5D6E7F8G9H0J1K2M3NP'],
    ] as const) {
      const res = await api.call(method, path, method === 'PATCH' || method === 'POST' ? { body: { name: 'x', scopes: ['admin'] } } : {});
      expect([method, path, res.status, res.body.tag]).toEqual([method, path, 403, 'Forbidden']);
    }
    expectRefused(await platform('DELETE', `/platform/workspaces/${api.workspace}`, undefined, other));
    expectRefused(await platform('GET', '/platform/jobs/whj_01JD2YC5D6E7F8G9H0J1K2M3NP', undefined, other));
    // The seeded workspace is untouched.
    expect((await platform('GET', `/platform/workspaces/${api.workspace}`)).body).toMatchObject({ slug: api.workspace, status: 'active' });
    expect((await api.call('GET', `/workspaces/${api.workspace}/webhooks`)).status).toBe(200);
  });

  it('validates the erasure routes before they run', async () => {
    expect((await platform('DELETE', '/platform/workspaces/Bad_Slug')).body.tag).toBe('ValidationError');
    expect((await platform('GET', '/platform/jobs/not-a-job')).body.tag).toBe('ValidationError');
  });
});
