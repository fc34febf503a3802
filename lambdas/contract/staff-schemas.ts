/**
 * Wire shapes of staff sign-in (docs/behaviour.md#staff-sign-in) and of the workspaces a caller may
 * open. Timestamps are ISO 8601 UTC.
 */
import { z } from 'zod';
import { STAFF_ROLES } from './console-oidc';
import { idSchema, SlugSchema } from './schemas';

const timestamp = z.string().meta({ example: '2026-11-25T13:00:00.000Z', format: 'date-time' });

const EXAMPLE = {
  sessionId: 'wcs_01JD2YF7G8H9J0K1M2N3P4Q5RS',
  email: 'ana@platform.example',
  created: '2026-11-25T12:00:00.000Z',
  expires: '2026-11-25T13:00:00.000Z',
} as const;

/** A staff session id. */
export const ConsoleSessionIdSchema = idSchema('wcs', '01JD2YF7G8H9J0K1M2N3P4Q5RS').meta({ description: 'Staff session id' });

/** A staff role. */
const StaffRoleSchema = z.enum(STAFF_ROLES).meta({
  id: 'StaffRole',
  description: 'The scope bundle the session holds on every workspace: `read`, `write` or `admin`.',
});

/** Answer of `POST /console-sessions/nonces`: a nonce to put in the authorization request. */
export const ConsoleNonceSchema = z
  .object({
    nonce: z.string().meta({ description: 'Send it as the `nonce` of the authorization request; usable once, until `expiresAt`.' }),
    expiresAt: timestamp,
  })
  .meta({ id: 'ConsoleNonce', example: { nonce: 'Zk1vY2tOb25jZVZhbHVlMTIzNDU2Nzg5MDEyMzQ1Njc4', expiresAt: '2026-11-25T12:10:00.000Z' } });

/** Body of `POST /console-sessions`. */
export const CreateConsoleSessionBodySchema = z
  .strictObject({
    idToken: z
      .string()
      .min(1)
      .max(16_384)
      .meta({ description: "The ID token the identity provider issued to the console (a compact JWS), with the service's nonce." }),
  })
  .meta({
    id: 'CreateConsoleSession',
    example: { idToken: 'eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJpc3MiOiJodHRwczovL2lkcC5leGFtcGxlIn0.c2ln' },
  });

/** Answer of `POST /console-sessions`: the staff session. */
export const ConsoleSessionResultSchema = z
  .object({
    token: z.string().meta({ description: 'The session token (`wss_…`): send it as `Authorization: Bearer <token>` until `expiresAt`.' }),
    sessionId: ConsoleSessionIdSchema,
    email: z.string().meta({ description: 'The person, as the identity provider verified them.' }),
    role: StaffRoleSchema,
    expiresAt: timestamp,
  })
  .meta({
    id: 'ConsoleSessionResult',
    example: {
      token: 'wss_XRhrMszERlPTxhFuFHn013gIiG_fokwq9Db8t1JbI3c',
      sessionId: EXAMPLE.sessionId,
      email: EXAMPLE.email,
      role: 'write',
      expiresAt: EXAMPLE.expires,
    },
  });
export type ConsoleSessionResult = z.infer<typeof ConsoleSessionResultSchema>;

/** A staff session as the admin's list shows it (never its token). */
export const ConsoleSessionSchema = z
  .object({
    sessionId: ConsoleSessionIdSchema,
    email: z.string(),
    role: StaffRoleSchema,
    createdAt: timestamp,
    expiresAt: timestamp,
  })
  .meta({
    id: 'ConsoleSession',
    example: { sessionId: EXAMPLE.sessionId, email: EXAMPLE.email, role: 'write', createdAt: EXAMPLE.created, expiresAt: EXAMPLE.expires },
  });
export type ConsoleSession = z.infer<typeof ConsoleSessionSchema>;

/** A workspace the caller may open. */
export const WorkspaceSummarySchema = z
  .object({ slug: SlugSchema, name: z.string() })
  .meta({ id: 'WorkspaceSummary', example: { slug: 'acme', name: 'Acme Inc.' } });
