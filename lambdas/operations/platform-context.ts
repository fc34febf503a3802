/**
 * What the operations of the routes that take no workspace token receive instead of a
 * {@link Caller} (docs/architecture.md#route-kinds): an `iam` route (the platform API) its verified
 * IAM principal, a `public` route the client's address.
 */
import type { OperationId, PlatformOperationId, PublicOperationId } from '../contract/operations';
import type { AuditActor } from '../contract/schemas';
import type { Caller, OperationDeps, OperationImpl } from './context';

/** The caller of a platform (`iam`) route: the IAM principal whose SigV4 signature API Gateway verified. */
export interface PlatformCaller {
  /** The principal's ARN (`requestContext.identity.userArn`). */
  readonly principalArn: string;
}

/** The caller of a `public` route: only where the request came from. */
export interface PublicCaller {
  /** The client's address (`requestContext.identity.sourceIp`), the key of its rate-limit bucket. */
  readonly clientAddress: string;
}

/**
 * The audit actor of a change made through the platform API, in the workspace's own log: the
 * principal's ARN is not shown to the workspace (the platform's own logs keep it).
 */
export const PLATFORM_API_ACTOR: AuditActor = { kind: 'system', id: 'platform-api', name: 'Platform API' };

type Input<K extends OperationId> = Parameters<OperationImpl<K>>[2];
type Result<K extends OperationId> = ReturnType<OperationImpl<K>>;

/** The implementation of platform operation K. */
export type PlatformOperationImpl<K extends PlatformOperationId> = (
  deps: OperationDeps,
  caller: PlatformCaller,
  input: Input<K>,
) => Result<K>;

/** The implementation of public operation K. */
export type PublicOperationImpl<K extends PublicOperationId> = (deps: OperationDeps, caller: PublicCaller, input: Input<K>) => Result<K>;

/** The implementation of operation K, with the caller its route kind gives (not distributed over a union of ids). */
export type AnyOperationImpl<K extends OperationId> = [K] extends [PlatformOperationId]
  ? PlatformOperationImpl<Extract<K, PlatformOperationId>>
  : [K] extends [PublicOperationId]
    ? PublicOperationImpl<Extract<K, PublicOperationId>>
    : OperationImpl<K>;

/** The caller any route kind hands its operation. */
export type AnyCaller = Caller | PlatformCaller | PublicCaller;
