/** Delivery statuses (docs/behaviour.md#delivery-statuses), zod-free: the contract's enum and the run-time rules read this list. */
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'failed_permanent', 'dead_lettered'] as const;
