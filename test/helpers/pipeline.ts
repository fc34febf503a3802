/** Builders for pipeline tests: a workspace, an endpoint with known (sealed) secrets, a capturing queue, the sealer. */
import { newId } from '../../lambdas/domain/ids';
import { createEventCatalogue } from '../../lambdas/domain/event-catalogue';
import type { DeliveryMessage, DeliveryQueue } from '../../lambdas/queue/delivery-queue';
import type { TableContext } from '../../lambdas/store/client';
import { putEndpoint, type EndpointRecord } from '../../lambdas/store/endpoints';
import type { StoredSecret } from '../../lambdas/domain/secrets';
import { localSecretSealer } from '../../lambdas/store/secret-sealing';
import { ensureWorkspace } from '../../lambdas/operations/admin';

/**
 * The tests' secret sealer: the local stack's (a fixed local master key), so it opens what any
 * local sealer sealed, the local stack's included.
 */
export const testSealer = localSecretSealer();

/** The signing secret of an endpoint seeded without `secrets`. */
export const SEEDED_SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

/** Stored secrets, newest first: each plaintext sealed by {@link testSealer}, expiring at its `expiresAt` (none: current). */
export async function sealedSecrets(
  secrets: readonly { secret: string; expiresAt?: string | null }[],
  now = new Date(),
): Promise<StoredSecret[]> {
  return Promise.all(
    secrets.map(async ({ secret, expiresAt }) => ({
      sealed: await testSealer.seal(secret),
      createdAt: now.toISOString(),
      expiresAt: expiresAt ?? null,
    })),
  );
}

/** A queue that keeps what is sent. */
export function capturingQueue(): DeliveryQueue & { sent: DeliveryMessage[] } {
  const sent: DeliveryMessage[] = [];
  return { sent, send: async (m) => void sent.push(...m) };
}

/** Creates a workspace (if absent) and an endpoint on it, signing with {@link SEEDED_SECRET} unless `secrets` says otherwise. */
export async function seedEndpoint(
  table: TableContext,
  input: {
    workspace?: string;
    url: string;
    eventTypes?: string[];
    enabled?: boolean;
    secrets?: StoredSecret[];
    consecutiveFailures?: number;
    options?: EndpointRecord['options'];
  },
  now = new Date(),
): Promise<EndpointRecord> {
  const workspace = input.workspace ?? 'acme';
  await ensureWorkspace(table, workspace, workspace);
  const record: EndpointRecord = {
    endpointId: newId('whe', now),
    workspace,
    url: input.url,
    eventTypes: input.eventTypes ?? ['webhook.test_event', 'order.shipped'],
    description: null,
    enabled: input.enabled ?? true,
    consecutiveFailures: input.consecutiveFailures ?? 0,
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
    secrets: input.secrets ?? (await sealedSecrets([{ secret: SEEDED_SECRET }], now)),
    secretVersion: 1,
    ...(input.options ? { options: input.options } : {}),
  };
  await putEndpoint(table, record, now, { action: 'webhook.created', actor: 'test', targetId: record.endpointId });
  return record;
}

/** The catalogue of the tests: built-ins plus order.shipped. */
export const testCatalogue = createEventCatalogue([
  {
    name: 'order.shipped',
    description: 'test',
    payloadSchema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
  },
]);
