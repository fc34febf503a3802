/**
 * The built-in event types' payload schemas in zod (docs/behaviour.md#event-catalogue): the
 * synthetic test event and the service's own domain events. The catalogue's zod-free names and
 * shapes are in `events.ts`; functions get these schemas as generated code (lambdas/generated/).
 */
import { z } from 'zod';
import type { EventTypeInfo } from './events';

/** Example values of the payload examples below (documentation only). */
const EXAMPLE_ENDPOINT = { endpointId: 'whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC', url: 'https://hooks.example.com/…' } as const;
const EXAMPLE_TOKEN_ID = 'tok_01JD2YA1B2C3D4E5F6G7H8J9KM';
const EXAMPLE_MEMBER_ID = 'mem_01JD2YB3C4D5E6F7G8H9J0K1MN';

const endpointRef = {
  endpointId: z.string().meta({ example: 'whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC' }),
  url: z.string().meta({ description: 'The endpoint URL redacted to scheme and host, then `/…` (a receiver URL may hold a secret).' }),
};

/** Built-in event types and their payload schemas. */
export const BUILT_IN_EVENT_TYPES = {
  'webhook.test_event': {
    description: 'Synthetic event sent by a test send, to check an endpoint end to end.',
    payload: z.object({ message: z.string(), sentAt: z.string(), endpointId: z.string() }).meta({
      examples: [
        {
          message: 'This is a test event from the webhook delivery service.',
          sentAt: '2026-11-25T12:05:00.000Z',
          endpointId: EXAMPLE_ENDPOINT.endpointId,
        },
      ],
    }),
  },
  'webhook.created': {
    description: 'A webhook endpoint was created.',
    payload: z
      .object({ ...endpointRef, eventTypes: z.array(z.string()) })
      .meta({ examples: [{ ...EXAMPLE_ENDPOINT, eventTypes: ['webhook.test_event', 'webhook.disabled'] }] }),
  },
  'webhook.updated': {
    description: 'A webhook endpoint was updated (only the changed field names are listed).',
    payload: z
      .object({ ...endpointRef, changed: z.array(z.string()) })
      .meta({ examples: [{ ...EXAMPLE_ENDPOINT, changed: ['url', 'enabled'] }] }),
  },
  'webhook.deleted': {
    description: 'A webhook endpoint and its delivery history were deleted.',
    payload: z.object(endpointRef).meta({ examples: [{ ...EXAMPLE_ENDPOINT }] }),
  },
  'webhook.disabled': {
    description: 'A webhook endpoint was disabled after consecutive delivery failures.',
    payload: z
      .object({ ...endpointRef, consecutiveFailures: z.number().int() })
      .meta({ examples: [{ ...EXAMPLE_ENDPOINT, consecutiveFailures: 20 }] }),
  },
  'webhook.secret_rotated': {
    description: 'A webhook endpoint signing secret was rotated (the secret itself is never in the event).',
    payload: z
      .object({ endpointId: z.string(), previousSecretExpiresAt: z.string().nullable() })
      .meta({ examples: [{ endpointId: EXAMPLE_ENDPOINT.endpointId, previousSecretExpiresAt: '2026-11-26T12:05:00.000Z' }] }),
  },
  'api_token.created': {
    description: 'An API token was created.',
    payload: z
      .object({ tokenId: z.string(), name: z.string(), scopes: z.array(z.string()) })
      .meta({ examples: [{ tokenId: EXAMPLE_TOKEN_ID, name: 'CI deploy bot', scopes: ['read', 'webhook:write'] }] }),
  },
  'api_token.revoked': {
    description: 'An API token was revoked.',
    payload: z.object({ tokenId: z.string() }).meta({ examples: [{ tokenId: EXAMPLE_TOKEN_ID }] }),
  },
  'member.added': {
    description: 'A member joined the workspace.',
    payload: z
      .object({ memberId: z.string(), email: z.string(), role: z.string() })
      .meta({ examples: [{ memberId: EXAMPLE_MEMBER_ID, email: 'dev@acme.test', role: 'member' }] }),
  },
  'member.removed': {
    description: 'A member left the workspace.',
    payload: z.object({ memberId: z.string() }).meta({ examples: [{ memberId: EXAMPLE_MEMBER_ID }] }),
  },
} as const satisfies Record<string, { description: string; payload: z.ZodType }>;

/** A built-in event type name. */
export type BuiltInEventType = keyof typeof BUILT_IN_EVENT_TYPES;

/** The catalogue of built-in types, with JSON Schemas of their payloads. */
export function builtInCatalogue(): EventTypeInfo[] {
  return Object.entries(BUILT_IN_EVENT_TYPES).map(([name, t]) => ({
    name,
    description: t.description,
    payloadSchema: z.toJSONSchema(t.payload),
    builtIn: true,
  }));
}
