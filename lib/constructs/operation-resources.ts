/**
 * What the functions that run contract operations need, derived from the
 * contract (docs/architecture.md#one-contract): the API environment (table, rate-limit table, quotas, workspace limits),
 * table grants by whether the operations write, and, for each resource an
 * operation `uses`, its environment variable and its grant. The REST API binds
 * one operation per function; the MCP endpoint binds the union of them all, so
 * a resource a future operation declares reaches both without naming it here
 * twice. Nothing here names an operation.
 */
import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { OperationDef, OperationResource } from '#lambdas/contract/operations';
import type { ConsoleOidcSettings } from '#lambdas/contract/console-oidc';
import { ENV } from '#lambdas/contract/deployment';
import { DEFAULT_RECOVERY_JOBS_PER_WORKSPACE } from '#lambdas/contract/jobs';
import { DEFAULT_WORKSPACE_LIMITS, type WorkspaceLimits } from '#lambdas/contract/limits';
import { DEFAULT_QUOTAS, type Quota, type RateLimitBucket } from '#lambdas/contract/rate-limits';
import { grantSend, operationsTableAccess } from './function-access';
import type { Outbox } from './outbox';
import type { SecretsKey } from './secrets-key';
import type { ServiceTable } from './table';

/** The resources beyond the table that operations may use (see `OperationDef.uses`). */
export interface OperationResources {
  /**
   * The delivery queue, for the operations whose contract `uses` `deliveryQueue`
   * (their function gets `DELIVERY_QUEUE_URL` and `sqs:SendMessage` on it).
   * @default - none; synth fails if an operation uses it
   */
  readonly deliveryQueue?: IQueue;
  /**
   * The outbox of domain events, for the operations whose contract `uses` `domainEvents`: they
   * write each event in the transaction of their change (their function gets `OUTBOX_TABLE_NAME`
   * and `dynamodb:PutItem` on the outbox table; the relay alone puts on the bus).
   * @default - none; synth fails if an operation uses it
   */
  readonly outbox?: Outbox;
  /**
   * The jobs queue, for the operations whose contract `uses` `jobQueue`
   * (their function gets `JOB_QUEUE_URL` and `sqs:SendMessage`).
   * @default - none; synth fails if an operation uses it
   */
  readonly jobQueue?: IQueue;
  /**
   * Recovery jobs one workspace may run at once (the stage's `recoveryJobsPerWorkspace`), given
   * with the jobs queue as `RECOVERY_JOBS_PER_WORKSPACE`.
   * @default DEFAULT_RECOVERY_JOBS_PER_WORKSPACE (3)
   */
  readonly recoveryJobsPerWorkspace?: number;
  /**
   * The key sealing signing secrets, for the operations whose contract `uses` `secretSealing`
   * (their function gets `SECRETS_KEY_ID` and `kms:GenerateDataKey` only: it seals, it never opens).
   * @default - none; synth fails if an operation uses it
   */
  readonly secretsKey?: SecretsKey;
  /**
   * Where portal links point and who may frame the console, for the operations whose contract
   * `uses` `portalLinks` (their function gets `CONSOLE_URL` and `CONSOLE_FRAME_ANCESTORS`).
   * @default - none; synth fails if an operation uses it
   */
  readonly portalLinks?: PortalLinks;
  /**
   * The stage's `consoleOidc` setting, for the operations whose contract `uses` `consoleOidc` (their
   * function gets `CONSOLE_OIDC`, the setting as JSON; no grant: the provider is reached over HTTPS).
   * @default - none: the variable is unset and staff sign-in answers 404 `StaffSignInDisabled`
   */
  readonly consoleOidc?: ConsoleOidcSettings | null;
}

/** The console's address and the origins that may frame it (the stage's `consoleFrameAncestors`). */
export interface PortalLinks {
  readonly consoleUrl: string;
  readonly frameAncestors: readonly string[];
}

/** The environment variables and grants of a set of used resources. */
export interface ResourceBinding {
  readonly environment: Readonly<Record<string, string>>;
  grant(grantee: IGrantable): void;
}

/** Fails synth: `what` is used but the construct was not given `prop`. */
type Need = (what: string, prop: string) => never;

/**
 * One entry per {@link OperationResource}: a resource added to the contract
 * without a binding here is a compile error, not a function missing a grant.
 */
const BINDINGS: { readonly [K in OperationResource]: (resources: OperationResources, need: Need) => ResourceBinding } = {
  consoleOidc: ({ consoleOidc }) => ({
    environment: consoleOidc ? { [ENV.CONSOLE_OIDC]: JSON.stringify(consoleOidc) } : ({} as Record<string, string>),
    grant: () => undefined,
  }),
  deliveryQueue: ({ deliveryQueue }, need) => {
    const queue = deliveryQueue ?? need('the delivery queue', 'a deliveryQueue');
    return { environment: { [ENV.DELIVERY_QUEUE_URL]: queue.queueUrl }, grant: (grantee) => grantSend(queue, grantee) };
  },
  domainEvents: ({ outbox }, need) => {
    const events = outbox ?? need('domain events', 'an outbox');
    return { environment: events.environment, grant: (grantee) => events.grantWriteEvents(grantee) };
  },
  jobQueue: ({ jobQueue, recoveryJobsPerWorkspace }, need) => {
    const queue = jobQueue ?? need('the jobs queue', 'a jobQueue');
    return {
      environment: {
        [ENV.JOB_QUEUE_URL]: queue.queueUrl,
        [ENV.RECOVERY_JOBS_PER_WORKSPACE]: String(recoveryJobsPerWorkspace ?? DEFAULT_RECOVERY_JOBS_PER_WORKSPACE),
      },
      grant: (grantee) => grantSend(queue, grantee),
    };
  },
  portalLinks: ({ portalLinks }, need) => {
    const links = portalLinks ?? need('portal links', 'portalLinks');
    return {
      environment: { [ENV.CONSOLE_URL]: links.consoleUrl, [ENV.CONSOLE_FRAME_ANCESTORS]: JSON.stringify(links.frameAncestors) },
      grant: () => undefined,
    };
  },
  secretSealing: ({ secretsKey }, need) => {
    const key = secretsKey ?? need('secret sealing', 'a secretsKey');
    return { environment: key.environment, grant: (grantee) => void key.grantSeal(grantee) };
  },
};

/** Every resource any of the operations uses. */
export function resourcesUsedBy(defs: readonly OperationDef[]): ReadonlySet<OperationResource> {
  return new Set(defs.flatMap((def) => def.uses ?? []));
}

/**
 * The environment and grants of the resources a function's operations use.
 * @param user who uses them, for the synth error when one was not given (e.g. `replayWebhookDelivery`)
 * @param owner the construct whose props lack it (e.g. `ServiceApi`)
 * @throws Error when a used resource is missing from `resources`
 */
export function bindOperationResources(
  uses: Iterable<OperationResource>,
  resources: OperationResources,
  user: string,
  owner: string,
): ResourceBinding {
  const need: Need = (what, prop) => {
    throw new Error(`${user} uses ${what}: give ${owner} ${prop}`);
  };
  const bindings = [...new Set(uses)].sort().map((resource) => BINDINGS[resource](resources, need));
  return {
    environment: Object.assign({}, ...bindings.map((b) => b.environment)) as Record<string, string>,
    grant: (grantee) => bindings.forEach((b) => b.grant(grantee)),
  };
}

/**
 * The environment every function running operations gets: the table, the
 * rate-limit counters (in the same table, docs/architecture.md#item-keys; without the variable the
 * code falls back to an in-process limiter), the per-token quotas and the per-workspace limits
 * (docs/behaviour.md#rate-limits: only the test-send, replay and create operations read them, but
 * every such function takes the same complete value, as with the quotas).
 */
export function operationEnvironment(
  table: ServiceTable,
  quotas: Readonly<Record<RateLimitBucket, Quota>> = DEFAULT_QUOTAS,
  workspaceLimits: WorkspaceLimits = DEFAULT_WORKSPACE_LIMITS,
): Record<string, string> {
  return {
    [ENV.TABLE_NAME]: table.table.tableName,
    [ENV.RATE_LIMIT_TABLE_NAME]: table.table.tableName,
    [ENV.RATE_LIMITS]: JSON.stringify(quotas),
    [ENV.WORKSPACE_LIMITS]: JSON.stringify(workspaceLimits),
  };
}

/**
 * Least-privilege table access of a function running operations: what their code reads and writes
 * (lib/constructs/function-access.ts), plus, when every one of them only reads, counting requests
 * in its own rate-limit bucket (a writer's UpdateItem covers its counters).
 */
export function grantOperationTableAccess(
  table: ServiceTable,
  grantee: IGrantable,
  defs: readonly Pick<OperationDef, 'operationId' | 'idempotent'>[],
  rateLimit: RateLimitBucket,
): void {
  const access = operationsTableAccess(defs);
  table.grantAccess(grantee, access);
  if (!access.actions.includes('dynamodb:UpdateItem')) table.grantRateLimitCounter(grantee, rateLimit);
}
