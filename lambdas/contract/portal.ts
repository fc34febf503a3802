/**
 * The numbers of portal sessions (docs/behaviour.md#portal-sessions), zod-free so every function may
 * import them: a session's lifetime bounds and default, and how long a link's code opens.
 */

/** A portal session's lifetime bounds and default, in seconds, counted from its creation. */
export const PORTAL_SESSION_LIFETIME = { minSeconds: 300, maxSeconds: 604_800, defaultSeconds: 3600 } as const;

/** How long a portal link's code can be opened, in seconds (once). */
export const PORTAL_CODE_TTL_SECONDS = 600;
