/**
 * Wire shapes of portal sessions and workspace branding (docs/behaviour.md#portal-sessions,
 * docs/behaviour.md#branding). Timestamps are ISO 8601 UTC.
 */
import { z } from 'zod';
import { EVENT_TYPE_MAX_CHARS } from './events';
import { distinctItems } from './input-rules';
import { PORTAL_SESSION_LIFETIME } from './portal';
import { AuditEventSchema, idSchema } from './schemas';

const timestamp = z.string().meta({ example: '2026-11-25T13:00:00.000Z', format: 'date-time' });

const EXAMPLE = {
  sessionId: 'wps_01JD2YE6F7G8H9J0K1M2N3P4QR',
  created: '2026-11-25T12:00:00.000Z',
  expires: '2026-11-25T13:00:00.000Z',
  url: 'https://api.example.com/prod/console/#portal=3q2-7wEx9Hk1c0d7Q5xJ8S2rW1p0zN6yL4bV3aT2uM0',
  returnUrl: 'https://app.example.com/settings/webhooks',
} as const;

/** A portal session id. */
export const PortalSessionIdSchema = idSchema('wps', '01JD2YE6F7G8H9J0K1M2N3P4QR').meta({ description: 'Portal session id' });

const eventTypesInput = z
  .array(z.string().min(1).max(EVENT_TYPE_MAX_CHARS))
  .min(1)
  .max(100)
  .refine(distinctItems, 'event types must not repeat');

/** Body of create portal session. */
export const CreatePortalSessionBodySchema = z
  .strictObject({
    expiresIn: z
      .number()
      .int()
      .min(PORTAL_SESSION_LIFETIME.minSeconds)
      .max(PORTAL_SESSION_LIFETIME.maxSeconds)
      .optional()
      .meta({
        description: `Seconds the session lasts, counted from its creation (default ${PORTAL_SESSION_LIFETIME.defaultSeconds}).`,
      }),
    readOnly: z
      .boolean()
      .optional()
      .meta({ description: 'A session that can only read (default false: it may also change endpoints, as a `write` token).' }),
    eventTypes: eventTypesInput.optional().meta({
      description:
        'When given, the only catalogue types the session sees and may subscribe endpoints to; endpoints subscribed to any other type are read-only to it. Each must be in the catalogue.',
    }),
    returnUrl: z.string().min(1).max(2048).optional().meta({
      description:
        "Where the console offers to go back to when the session has expired: an https URL (http on loopback, locally) whose origin is one of the stage's `consoleFrameAncestors`.",
    }),
  })
  .meta({
    id: 'CreatePortalSession',
    example: { expiresIn: 3600, readOnly: false, eventTypes: ['order.shipped'], returnUrl: EXAMPLE.returnUrl },
  });

/** Answer of create portal session: the link, to open once within ten minutes. */
export const CreatedPortalSessionSchema = z
  .object({
    sessionId: PortalSessionIdSchema,
    url: z.string().meta({
      description:
        "The console's address with a single-use code in its fragment (`#portal=<code>`): open it within ten minutes, once. The code is never sent to a server by a browser, so it appears in no access log or Referer.",
    }),
    expiresAt: timestamp.meta({ description: 'When the session ends.' }),
  })
  .meta({ id: 'CreatedPortalSession', example: { sessionId: EXAMPLE.sessionId, url: EXAMPLE.url, expiresAt: EXAMPLE.expires } });

/** A portal session as listed (never its code or token). */
export const PortalSessionSchema = z
  .object({
    sessionId: PortalSessionIdSchema,
    createdAt: timestamp,
    expiresAt: timestamp,
    readOnly: z.boolean(),
    eventTypes: z.array(z.string()).nullable().meta({ description: 'The event types the session is limited to; null when unrestricted.' }),
    returnUrl: z.string().nullable(),
    createdBy: AuditEventSchema.shape.actor,
    openedAt: timestamp.nullable().meta({ description: 'When its link was opened (the code exchanged for a token); null until then.' }),
  })
  .meta({
    id: 'PortalSession',
    example: {
      sessionId: EXAMPLE.sessionId,
      createdAt: EXAMPLE.created,
      expiresAt: EXAMPLE.expires,
      readOnly: false,
      eventTypes: ['order.shipped'],
      returnUrl: EXAMPLE.returnUrl,
      createdBy: { kind: 'token', id: 'tok_01JD2YA1B2C3D4E5F6G7H8J9KM', name: 'platform backend' },
      openedAt: '2026-11-25T12:00:09.000Z',
    },
  });
export type PortalSession = z.infer<typeof PortalSessionSchema>;

/** A workspace's branding in the console. */
export const BrandingSchema = z
  .object({
    displayName: z.string().optional().meta({ description: 'The name the console shows for the workspace.' }),
    accentColor: z.string().optional().meta({ description: "The console's accent colour, `#rrggbb`." }),
  })
  .meta({ id: 'Branding', example: { displayName: 'Acme Webhooks', accentColor: '#1f5fbf' } });
export type Branding = z.infer<typeof BrandingSchema>;

/** Body of set branding: the whole branding (a field left out is cleared). */
export const SetBrandingBodySchema = z
  .strictObject({
    displayName: z.string().max(200).optional().meta({
      description: 'At most 64 characters, not blank, no control characters or bidirectional overrides.',
      example: 'Acme Webhooks',
    }),
    accentColor: z.string().max(16).optional().meta({
      description:
        "`#rrggbb` whose contrast against the console's background and with the white text of its buttons is at least 4.5:1 (WCAG AA).",
      example: '#1f5fbf',
    }),
  })
  .meta({ id: 'SetBranding', example: { displayName: 'Acme Webhooks', accentColor: '#1f5fbf' } });

/** Body of the exchange: the code from a portal link's fragment. */
export const PortalExchangeBodySchema = z
  .strictObject({ code: z.string().min(1).max(256).meta({ description: 'The code after `#portal=` in the link.' }) })
  .meta({ id: 'PortalExchange', example: { code: '3q2-7wEx9Hk1c0d7Q5xJ8S2rW1p0zN6yL4bV3aT2uM0' } });

/** Answer of the exchange: the session's token and what the console needs to show it. */
export const PortalExchangeResultSchema = z
  .object({
    token: z.string().meta({ description: 'The session token (`whs_…`): send it as `Authorization: Bearer <token>` until `expiresAt`.' }),
    sessionId: PortalSessionIdSchema,
    workspace: z.string().meta({ description: 'The workspace slug.' }),
    expiresAt: timestamp,
    readOnly: z.boolean(),
    eventTypes: z.array(z.string()).nullable(),
    returnUrl: z.string().nullable(),
    branding: BrandingSchema,
  })
  .meta({
    id: 'PortalExchangeResult',
    example: {
      token: 'whs_XRhrMszERlPTxhFuFHn013gIiG_fokwq9Db8t1JbI3c',
      sessionId: EXAMPLE.sessionId,
      workspace: 'acme',
      expiresAt: EXAMPLE.expires,
      readOnly: false,
      eventTypes: ['order.shipped'],
      returnUrl: EXAMPLE.returnUrl,
      branding: { displayName: 'Acme Webhooks', accentColor: '#1f5fbf' },
    },
  });
export type PortalExchangeResult = z.infer<typeof PortalExchangeResultSchema>;
