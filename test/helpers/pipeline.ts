/** Builders for pipeline tests: a workspace, an endpoint with known secrets, a capturing queue. */
import { newId } from '../../lambdas/domain/ids';
import { createEventCatalogue } from '../../lambdas/domain/event-catalogue';
import type { DeliveryMessage, DeliveryQueue } from '../../lambdas/queue/delivery-queue';
import type { TableContext } from '../../lambdas/store/client';
import { putEndpoint, type EndpointRecord } from '../../lambdas/store/endpoints';
import type { StoredSecret } from '../../lambdas/domain/secrets';
import { ensureWorkspace } from '../../lambdas/operations/admin';

/** A queue that keeps what is sent. */
export function capturingQueue(): DeliveryQueue & { sent: DeliveryMessage[] } {
  const sent: DeliveryMessage[] = [];
  return { sent, send: async (m) => void sent.push(...m) };
}

/** Creates a workspace (if absent) and an endpoint on it. */
export async function seedEndpoint(
  table: TableContext,
  input: {
    workspace?: string;
    url: string;
    eventTypes?: string[];
    enabled?: boolean;
    secrets?: StoredSecret[];
    consecutiveFailures?: number;
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
    secrets: input.secrets ?? [
      { secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`, createdAt: now.toISOString(), expiresAt: null },
    ],
    secretVersion: 1,
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
