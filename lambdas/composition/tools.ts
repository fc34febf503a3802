/**
 * The runtime's face for the programs that run it outside Lambda: the admin CLI (bin/admin.ts) and
 * the local stack (bin/local). They reach the runtime here, through the Lambda entries
 * (lambdas/functions/) or through the contract, never a module of a lower layer directly
 * (docs/architecture.md#layers). Loading this module loads no logger: the local stack sets the
 * Powertools environment before the composition root (./runtime.ts) loads.
 */
import type { DomainEvent, PublishResult } from '../pipeline/publisher';

export { createTableContext, type TableContext } from '../store/client';
export { getWorkspace } from '../store/workspaces';
export { ensureWorkspace, issueToken, seedMember } from '../operations/admin';
export { resolveCaller } from '../operations/access';
export { localSecretSealer } from '../store/secret-sealing';
export { busEventDetail, eventBridgeSink, type DomainEventBus } from '../queue/domain-events';
export { deliveryMessageBody, messageDelay, type DeliveryMessage, type DeliveryQueue, type MessageDelayer } from '../queue/delivery-queue';
export type { JobQueue } from '../queue/job-queue';
export { problemResponse } from '../http/responses';

/**
 * Publishes a domain event with the container's runtime, as the publisher function does for an
 * EventBridge event (the local stack's stand-in for PutEvents). The publisher and the runtime load
 * on the first call, after the local stack has set the environment.
 */
export async function publishWithRuntime(event: DomainEvent): Promise<PublishResult> {
  const [{ publishEvent }, { defaultRuntime }] = await Promise.all([import('../pipeline/publisher'), import('./runtime')]);
  return publishEvent(defaultRuntime().deps, event);
}
