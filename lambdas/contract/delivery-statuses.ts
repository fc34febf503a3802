/** Delivery statuses (docs/behaviour.md#delivery-statuses) and the failure reasons the run-time rules name, zod-free: the contract and the rules read them. */
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'failed_permanent', 'dead_lettered'] as const;

/**
 * The failure reason of a receiver that answered `101 Switching Protocols` or any other upgrade
 * (docs/behaviour.md#outcome-classification): `failed_permanent`, the connection is closed.
 */
export const PROTOCOL_UPGRADE = 'protocol_upgrade';

/** The failure reason of a response status outside 100–599 (docs/behaviour.md#outcome-classification): `failed_permanent`. */
export const INVALID_STATUS = 'invalid_status';

/**
 * The failure reason of an attempt whose OAuth 2.0 token could not be obtained from the endpoint's
 * token endpoint (docs/behaviour.md#oauth-20-client-credentials): nothing was sent to the receiver;
 * `failed`, retried like any other failure, and it counts in the endpoint's streak.
 */
export const AUTH_FAILED = 'auth_failed';
