/**
 * Endpoint health's zod-free numbers (docs/behaviour.md#endpoint-health): the windows and the
 * latency histogram's bounds. The wire shapes (the window query and the health document) are
 * zod schemas in `health-schemas.ts`; the at-a-glance summary and the overview's 24 h counts are
 * in `schemas.ts`, on the resources that carry them.
 */
export type { EndpointHealth } from './health-schemas';

/** The windows a health read covers: 24 hourly buckets, or 7 daily ones (UTC). */
export const HEALTH_WINDOW_NAMES = ['24h', '7d'] as const;
export type HealthWindow = (typeof HEALTH_WINDOW_NAMES)[number];

/**
 * Upper bounds (ms) of the attempt-duration histogram behind p50 and p95; one more bucket holds
 * anything slower. Fixed, so hourly counters add up across any window.
 */
export const LATENCY_BUCKET_BOUNDS_MS = [5, 10, 25, 50, 100, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 5000, 7500, 10000, 15000] as const;
