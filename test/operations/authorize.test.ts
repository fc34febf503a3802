/**
 * `authorize()`, the checks REST and MCP both run before an operation (docs/behaviour.md#check-order):
 * the workspace (404), one hit in the operation's rate-limit bucket (429), the permission (403), in
 * that order, with the refusals callers see. Runs the real in-process limiter on a fixed clock.
 */
import { describe, expect, it } from 'vitest';
import { AppError } from '../../lambdas/contract/errors';
import type { OperationRoute } from '../../lambdas/contract/routes';
import { DEFAULT_QUOTAS, type RateLimitBucket } from '../../lambdas/contract/rate-limits';
import { OPERATION_ROUTES } from '../../lambdas/generated/contract';
import { authorize } from '../../lambdas/operations/access';
import type { Caller } from '../../lambdas/operations/context';
import { memoryRateLimiter, type RateLimiter } from '../../lambdas/operations/rate-limiter';

const route = (operationId: string): OperationRoute => {
  const def = (OPERATION_ROUTES as readonly OperationRoute[]).find((o) => o.operationId === operationId);
  if (!def) throw new Error(`no route ${operationId}`);
  return def;
};
const rotate = route('rotateWebhookSecret'); // webhook:rotate-secret, rest_write
const listWebhooks = route('listWebhooks'); // webhook:read, rest_read
const overview = route('getWorkspaceOverview'); // no permission

/** The real in-process limiter (`limit` per bucket, clock frozen) recording every hit it answers. */
function limiter(limit = 100): RateLimiter & { hits: { bucket: RateLimitBucket; key: string; allowed: boolean }[] } {
  const quotas = Object.fromEntries(Object.keys(DEFAULT_QUOTAS).map((b) => [b, { limit, windowSeconds: 60 }])) as Record<
    RateLimitBucket,
    { limit: number; windowSeconds: number }
  >;
  const inner = memoryRateLimiter(quotas, () => 1_000_000);
  const hits: { bucket: RateLimitBucket; key: string; allowed: boolean }[] = [];
  return {
    hits,
    async hit(bucket, key) {
      const decision = await inner.hit(bucket, key);
      hits.push({ bucket, key, allowed: decision.allowed });
      return decision;
    },
  };
}

const caller = (scopes: string[], workspace = 'acme', tokenId = 'tok_1'): Caller => ({ workspace, tokenId, scopes });

/** The AppError `authorize` throws, or null when it lets the call through. */
async function refusal(p: Promise<unknown>): Promise<AppError | null> {
  try {
    await p;
    return null;
  } catch (e) {
    if (e instanceof AppError) return e;
    throw e;
  }
}

describe('authorize', () => {
  it('lets a token through on its own workspace when its scopes grant the permission, charging one hit to its bucket', async () => {
    const rateLimiter = limiter();
    await expect(authorize({ rateLimiter }, rotate, caller(['write']), 'acme')).resolves.toMatchObject({ workspace: 'acme' });
    await expect(authorize({ rateLimiter }, rotate, caller(['webhook:rotate-secret']), 'acme')).resolves.toMatchObject({
      workspace: 'acme',
    });
    await expect(authorize({ rateLimiter }, listWebhooks, caller(['read']), 'acme')).resolves.toMatchObject({ workspace: 'acme' });
    // An operation without a permission needs none: any scope (even none) passes.
    await expect(authorize({ rateLimiter }, overview, caller([]), 'acme')).resolves.toMatchObject({ workspace: 'acme' });
    expect(rateLimiter.hits).toEqual([
      { bucket: 'rest_write', key: 'tok_1', allowed: true },
      { bucket: 'rest_write', key: 'tok_1', allowed: true },
      { bucket: 'rest_read', key: 'tok_1', allowed: true },
      { bucket: 'rest_read', key: 'tok_1', allowed: true },
    ]);
  });

  it('refuses a token whose scopes lack the permission: 403 Forbidden naming it', async () => {
    for (const scopes of [['read'], ['webhook:write'], ['bogus'], []]) {
      const error = await refusal(authorize({ rateLimiter: limiter() }, rotate, caller(scopes), 'acme'));
      expect(error?.tag).toBe('Forbidden');
      expect(error?.status).toBe(403);
      expect(error?.detail).toBe("This operation needs the permission webhook:rotate-secret, which the token's scopes do not grant");
      expect(error?.extensions).toEqual({ requiredPermission: 'webhook:rotate-secret' });
    }
  });

  it('refuses another workspace, an unknown one and a missing slug alike: 404 WorkspaceNotFound, nothing charged', async () => {
    const rateLimiter = limiter();
    for (const slug of ['other', 'ACME', undefined]) {
      const error = await refusal(authorize({ rateLimiter }, listWebhooks, caller(['admin']), slug));
      expect(error?.tag).toBe('WorkspaceNotFound');
      expect(error?.status).toBe(404);
      expect(error?.detail).toBe(`No workspace "${slug ?? ''}" for this token`);
      expect(error?.extensions).toEqual({});
    }
    expect(rateLimiter.hits).toEqual([]);
  });

  it('refuses a token over its bucket: 429 RateLimited with the seconds to wait, the other bucket untouched', async () => {
    const rateLimiter = limiter(1);
    await authorize({ rateLimiter }, rotate, caller(['admin']), 'acme');
    const error = await refusal(authorize({ rateLimiter }, rotate, caller(['admin']), 'acme'));
    expect(error?.tag).toBe('RateLimited');
    expect(error?.status).toBe(429);
    expect(error?.retryAfterSeconds).toBe(60);
    expect(error?.detail).toBe('Too many rest_write requests for this token; retry after 60 s');
    // Another token, and another bucket of the same token, still pass.
    await expect(authorize({ rateLimiter }, rotate, caller(['admin'], 'acme', 'tok_2'), 'acme')).resolves.toMatchObject({
      workspace: 'acme',
    });
    await expect(authorize({ rateLimiter }, listWebhooks, caller(['admin']), 'acme')).resolves.toMatchObject({ workspace: 'acme' });
  });

  describe('reports the first failure in the order workspace, rate limit, permission', () => {
    it('a foreign workspace wins over an exhausted bucket and a missing permission', async () => {
      const rateLimiter = limiter(1);
      await authorize({ rateLimiter }, rotate, caller(['admin']), 'acme'); // uses the one request
      const error = await refusal(authorize({ rateLimiter }, rotate, caller(['read']), 'other'));
      expect(error?.tag).toBe('WorkspaceNotFound');
      expect(rateLimiter.hits).toHaveLength(1);
    });

    it('an exhausted bucket wins over a missing permission', async () => {
      const rateLimiter = limiter(1);
      await authorize({ rateLimiter }, rotate, caller(['admin']), 'acme');
      const error = await refusal(authorize({ rateLimiter }, rotate, caller(['read']), 'acme'));
      expect(error?.tag).toBe('RateLimited');
    });

    it('a call refused for its permission has already been charged: the next one is rate limited', async () => {
      const rateLimiter = limiter(1);
      expect((await refusal(authorize({ rateLimiter }, rotate, caller(['read']), 'acme')))?.tag).toBe('Forbidden');
      expect(rateLimiter.hits).toEqual([{ bucket: 'rest_write', key: 'tok_1', allowed: true }]);
      expect((await refusal(authorize({ rateLimiter }, rotate, caller(['admin']), 'acme')))?.tag).toBe('RateLimited');
    });
  });
});
