/**
 * The workspace delivery log's query as a zod schema (docs/behaviour.md#workspace-delivery-log):
 * the page query and the filters. The log's zod-free numbers and rules are in `delivery-log.ts`.
 */
import { z } from 'zod';
import { EVENT_ID_FILTER, EVENT_ID_MAX_LENGTH } from './delivery-links';
import { EVENT_TYPE_FILTER } from './delivery-log';
import { DELIVERY_STATUSES } from './delivery-statuses';
import { ISO_INSTANT_OR_DATE, isDeliveryStatusList, sinceNotAfterUntil } from './input-rules';
import { PageQuerySchema } from './page-schemas';
import { EndpointIdSchema } from './schemas';

/** An ISO 8601 instant with `Z` or an offset, or a date (midnight UTC). */
const instant = (description: string, example: string) =>
  z
    .string()
    .max(64)
    // A pattern, not a refinement: the document then shows exactly what the server accepts.
    .regex(ISO_INSTANT_OR_DATE, 'must be an ISO 8601 date-time with Z or an offset (e.g. 2026-11-25T12:00:00Z) or a date (2026-11-25)')
    .optional()
    .meta({ description, example });

/** Query of the delivery log: the page query and the filters. */
export const DeliveryLogQuerySchema = PageQuerySchema.extend({
  status: z
    .string()
    .max(200)
    .refine(isDeliveryStatusList, {
      message: `must be one or more of ${DELIVERY_STATUSES.join(', ')}, comma-separated`,
    })
    .optional()
    .meta({
      description: `Only these statuses: one or more of ${DELIVERY_STATUSES.map((s) => `\`${s}\``).join(', ')}, comma-separated.`,
      example: 'failed,dead_lettered',
      // The document declares the list it is (OpenAPI's `form` style without explode is the
      // comma-separated wire form), so generated clients take an array of the statuses.
      param: {
        schema: { type: 'array', items: { type: 'string', enum: [...DELIVERY_STATUSES] }, minItems: 1 },
        style: 'form',
        explode: false,
        example: ['failed', 'dead_lettered'],
      },
    }),
  eventType: z
    .string()
    .max(200)
    .regex(EVENT_TYPE_FILTER, 'must be an event type (order.shipped) or a prefix ending in .* (order.*)')
    .optional()
    .meta({ description: 'Only this event type (`order.shipped`), or every type under a prefix (`order.*`).', example: 'order.*' }),
  endpointId: EndpointIdSchema.optional().meta({ description: 'Only deliveries to this endpoint.' }),
  eventId: z
    .string()
    .max(EVENT_ID_MAX_LENGTH)
    .regex(EVENT_ID_FILTER, 'must be an event id: printable ASCII characters without spaces')
    .optional()
    .meta({
      description:
        "Only the deliveries of this event (a delivery's `eventId`): every endpoint's, and their replays. Read by the event's own index key, never by walking the log.",
      example: '6a7e3b2c-5d41-4f0e-9b8a-1c2d3e4f5a6b',
    }),
  since: instant(
    'Only deliveries created at or after this instant: ISO 8601 with `Z` or an offset, or a date (midnight UTC); millisecond precision.',
    '2026-11-25T00:00:00Z',
  ),
  until: instant(
    'Only deliveries created at or before this instant: ISO 8601 with `Z` or an offset, or a date (midnight UTC); millisecond precision.',
    '2026-11-25T23:59:59.999Z',
  ),
}).refine(sinceNotAfterUntil, { message: 'must not be after until', path: ['since'] });

/** Parsed query of the delivery log. */
export type DeliveryLogQuery = z.infer<typeof DeliveryLogQuerySchema>;
