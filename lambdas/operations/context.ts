/**
 * What every operation receives: its adapters (passed in, never imported as
 * singletons), the authenticated caller and the parsed input.
 */
import type { z } from 'zod';
import { OPERATIONS, type OperationId } from '../contract/operations';
import type { EventCatalogue } from '../domain/event-catalogue';
import type { UrlCheckOptions } from '../domain/webhook-url';
import type { TableContext } from '../store/client';
import type { DeliveryQueue } from '../queue/delivery-queue';
import type { JobQueue } from '../queue/job-queue';
import type { SecretSealer } from '../domain/secrets';
import type { RateLimiter } from './rate-limiter';
import type { WorkspaceLimits } from '../contract/limits';
import type { MetricsRecorder } from '../contract/metrics';
import type { AuditActor } from '../contract/schemas';
import type { ConsoleOidcSettings, StaffRole } from '../contract/console-oidc';
import type { IdTokenVerifier } from '../identity/id-token-verifier';

/** Adapters and configuration of the operations. */
export interface OperationDeps {
  readonly table: TableContext;
  /** The clock; injected so tests control time. */
  readonly now: () => Date;
  readonly eventTypes: EventCatalogue;
  /** URL rules; `allowLoopback` only in the local stack. */
  readonly urlPolicy: UrlCheckOptions;
  /** The delivery queue (test sends, replays). */
  readonly queue: DeliveryQueue;
  /** The jobs queue (recovery jobs); absent where no operation starts a job. */
  readonly jobQueue?: JobQueue;
  /**
   * Recovery jobs one workspace may run at once (the stage's `recoveryJobsPerWorkspace`).
   * @default DEFAULT_RECOVERY_JOBS_PER_WORKSPACE (3)
   */
  readonly recoveryJobsPerWorkspace?: number;
  /**
   * Seals new signing secrets (docs/architecture.md#secrets): a secret is stored sealed only. Where
   * no operation mints one, a sealer that refuses (the function holds no key).
   */
  readonly secretSealer: SecretSealer;
  /**
   * The workspace limits (docs/behaviour.md#rate-limits): quotas of test sends and replays,
   * most endpoints and tokens.
   * @default DEFAULT_WORKSPACE_LIMITS
   */
  readonly workspaceLimits?: WorkspaceLimits;
  /**
   * The service's metrics (docs/operations.md): replays and recovery jobs started, workspace-quota
   * refusals. @default none recorded
   */
  readonly metrics?: MetricsRecorder;
  /**
   * Where portal links lead (docs/behaviour.md#portal-sessions): the console's address and the
   * stage's `consoleFrameAncestors`, the origins a session's `returnUrl` may lead to.
   * @default none: creating a portal session then fails (a deployment fault)
   */
  readonly portal?: PortalSettings;
  /**
   * Staff sign-in (docs/behaviour.md#staff-sign-in): the stage's `consoleOidc` setting and the
   * verifier of its provider's ID tokens. @default none: the sign-in routes answer 404 `StaffSignInDisabled`
   */
  readonly consoleOidc?: ConsoleOidcDeps;
}

/** What staff sign-in runs with: from `CONSOLE_OIDC`. */
export interface ConsoleOidcDeps {
  readonly settings: ConsoleOidcSettings;
  readonly verifyIdToken: IdTokenVerifier;
  /** Records a sign-in, a sign-out or a revocation in the function's log (they belong to no workspace's audit log). @default none */
  readonly log?: (message: string, fields: Record<string, unknown>) => void;
}

/** Where portal links lead: from `CONSOLE_URL` and `CONSOLE_FRAME_ANCESTORS`. */
export interface PortalSettings {
  /** The console's address; a link is it with `#portal=<code>`. */
  readonly consoleUrl: string | null;
  /** Origins a `returnUrl` may have (loopback ones too where `urlPolicy.allowLoopback`). */
  readonly frameAncestors: readonly string[];
}

/** What a request surface (a REST function, the MCP function) runs with: the operations' adapters and the rate limiter. */
export interface SurfaceRuntime {
  readonly deps: OperationDeps;
  readonly rateLimiter: RateLimiter;
}

/** The authenticated caller, from the authorizer's context. */
export interface Caller {
  /**
   * The workspace the caller acts on: a token's or portal session's own. A staff session's token
   * item holds {@link STAFF_WORKSPACE}; `authorize` gives the operation the caller with the route's
   * workspace in its place, once that workspace is known to exist.
   */
  readonly workspace: string;
  /** The API token's id, or the portal session's (`wps_…`): what rate limits and idempotency keys are counted against. */
  readonly tokenId: string;
  /** The token's scopes; a portal session's permissions. */
  readonly scopes: readonly string[];
  /** The token's name, as its hash item holds it: kept on the audit entries the caller makes. */
  readonly tokenName?: string;
  /**
   * `portal_session` for a portal session's token (docs/behaviour.md#portal-sessions), `staff` for a
   * staff session's (docs/behaviour.md#staff-sign-in). @default 'token'
   */
  readonly kind?: 'token' | 'portal_session' | 'staff';
  /** A staff session's role. Absent for other callers. */
  readonly staffRole?: StaffRole;
  /** A staff session's person, as the identity provider verified them. Absent for other callers. */
  readonly email?: string;
  /**
   * A portal session's event types: the only ones it sees in the catalogue and may subscribe to;
   * endpoints subscribed to others are read-only to it. Absent: unrestricted.
   */
  readonly eventTypes?: readonly string[];
  /** When a portal session ends (ISO 8601): checked on every request, whatever the authorizer cached. Absent: never. */
  readonly expiresAt?: string;
}

/** What a staff session's token item holds as its workspace: it may open any (docs/behaviour.md#staff-sign-in). */
export const STAFF_WORKSPACE = '*';

/**
 * The caller as the actor of an audited change: its token (with the token's name when known), its
 * portal session, or its staff session with the person's email (docs/behaviour.md#staff-sign-in).
 */
export function callerActor(caller: Caller): AuditActor {
  if (caller.kind === 'portal_session') return { kind: 'portal_session', id: caller.tokenId };
  if (caller.kind === 'staff') return { kind: 'staff', id: caller.tokenId, ...(caller.email ? { email: caller.email } : {}) };
  return { kind: 'token', id: caller.tokenId, ...(caller.tokenName ? { name: caller.tokenName } : {}) };
}

type OpDef<K extends OperationId> = Extract<(typeof OPERATIONS)[number], { operationId: K }>;
type Out<T> = T extends z.ZodType ? z.output<T> : undefined;

/** Parsed input of operation K. */
interface OperationInput<K extends OperationId> {
  readonly params: Out<OpDef<K>['params']>;
  readonly query: OpDef<K> extends { query: infer Q } ? Out<Q> : undefined;
  readonly body: OpDef<K> extends { body: infer B } ? Out<B> : undefined;
}

type DryRunResult<K extends OperationId> =
  OpDef<K> extends { dryRun: { response: infer D } } ? (D extends z.ZodType ? z.input<D> : never) : never;

/** Result of operation K (undefined for 204; its dry-run answer too when it has one). */
type OperationResult<K extends OperationId> =
  (OpDef<K> extends { response: infer R } ? (R extends z.ZodType ? z.input<R> : never) : void) | DryRunResult<K>;

/** The implementation of operation K. */
export type OperationImpl<K extends OperationId> = (
  deps: OperationDeps,
  caller: Caller,
  input: OperationInput<K>,
) => Promise<OperationResult<K>>;
