/**
 * Wire shapes of endpoint health (docs/behaviour.md#endpoint-health) as zod schemas: the window
 * query and the health document. The windows and bounds are zod-free, in `health.ts`.
 */
import { z } from 'zod';
import { HEALTH_WINDOW_NAMES, LATENCY_BUCKET_BOUNDS_MS } from './health';
import { INVALID_STATUS, PROTOCOL_UPGRADE } from './delivery-statuses';
import { EndpointIdSchema } from './schemas';

const timestamp = z.string().meta({ format: 'date-time' });

const HealthWindowSchema = z.enum(HEALTH_WINDOW_NAMES);

/** Query of the health operation. */
export const HealthQuerySchema = z.object({
  window: HealthWindowSchema.default('24h').meta({
    description:
      '`24h` (default): the current UTC hour and the 23 before it, in hourly buckets. `7d`: the current UTC day and the 6 before it, in daily buckets.',
    example: '24h',
  }),
});

const count = z.number().int().min(0);

/** An endpoint's health over a window. */
export const EndpointHealthSchema = z
  .object({
    endpointId: EndpointIdSchema,
    window: HealthWindowSchema,
    from: timestamp.meta({ description: 'Start of the first bucket.' }),
    to: timestamp.meta({ description: 'When the counters were read (the window ends here).' }),
    attempts: count.meta({
      description:
        'HTTP attempts recorded (a URL refused at dispatch counts as a failed attempt); bookkeeping entries are not attempts. Equals `delivered` + `failed`.',
    }),
    delivered: count.meta({ description: 'Attempts answered 2xx.' }),
    failed: count.meta({ description: 'Failed attempts, retryable and permanent alike.' }),
    failedPermanent: count.meta({
      description:
        'Of `failed`, those that failed permanently (3xx, 4xx other than 408 and 429, a protocol upgrade, a status outside 100–599, a URL refused at dispatch).',
    }),
    deadLettered: count.meta({ description: 'Deliveries marked `dead_lettered` (retries exhausted).' }),
    successRate: z
      .number()
      .min(0)
      .max(1)
      .nullable()
      .meta({ description: '`delivered` / `attempts`, rounded to 4 decimals; null with no attempt.' }),
    latencyMs: z.object({ p50: count.nullable(), p95: count.nullable() }).meta({
      description: `Attempt duration percentiles from a fixed-bucket histogram: the upper bound (ms) of the bucket holding the rank (the last bound for anything slower); null with no attempt. Bounds: ${LATENCY_BUCKET_BOUNDS_MS.join(', ')}.`,
    }),
    byResponseStatus: z.record(z.string(), count).meta({
      description: `Attempts by HTTP status code (as a string), plus \`${PROTOCOL_UPGRADE}\` (a 101 or any upgrade), \`${INVALID_STATUS}\` (a status outside 100–599), \`timeout\` and \`network_error\` (every other failure without a response, a refused URL included). Sums to \`attempts\`.`,
    }),
    series: z.array(z.object({ start: timestamp, delivered: count, failed: count })).meta({
      description: 'One bucket per hour (`24h`) or per UTC day (`7d`), oldest first, every bucket present: delivered and failed attempts.',
    }),
  })
  .meta({
    id: 'WebhookEndpointHealth',
    example: {
      endpointId: 'whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC',
      window: '7d',
      from: '2026-11-19T00:00:00.000Z',
      to: '2026-11-25T12:05:00.000Z',
      attempts: 1258,
      delivered: 1240,
      failed: 18,
      failedPermanent: 2,
      deadLettered: 1,
      successRate: 0.9857,
      latencyMs: { p50: 100, p95: 500 },
      byResponseStatus: { '200': 1240, '503': 14, '410': 2, timeout: 1, network_error: 1 },
      series: [
        { start: '2026-11-19T00:00:00.000Z', delivered: 170, failed: 0 },
        { start: '2026-11-20T00:00:00.000Z', delivered: 181, failed: 2 },
        { start: '2026-11-21T00:00:00.000Z', delivered: 176, failed: 0 },
        { start: '2026-11-22T00:00:00.000Z', delivered: 169, failed: 14 },
        { start: '2026-11-23T00:00:00.000Z', delivered: 190, failed: 1 },
        { start: '2026-11-24T00:00:00.000Z', delivered: 201, failed: 1 },
        { start: '2026-11-25T00:00:00.000Z', delivered: 153, failed: 0 },
      ],
    },
  });
export type EndpointHealth = z.infer<typeof EndpointHealthSchema>;
