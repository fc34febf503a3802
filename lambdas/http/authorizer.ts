/**
 * The API Gateway side of token authorization (docs/architecture.md#authorizer): the caller as
 * authorizer context and policy. API Gateway caches the decision, so the context may outlive a
 * revocation: the REST handler re-checks it for every mutating route.
 */
import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { STAFF_ROLES, type StaffRole } from '../contract/console-oidc';
import type { Caller } from '../operations/context';

/** Context values the authorizer hands to every operation (strings only: API Gateway's rule). */
interface AuthorizerContext {
  workspace: string;
  tokenId: string;
  /** Space-separated scopes. */
  scopes: string;
  /** The token's name (for the audit entries of the request); absent when the token has none. */
  tokenName?: string;
  /** `portal_session` for a portal session's token, `staff` for a staff session's; absent for an API token. */
  kind?: 'portal_session' | 'staff';
  /** A staff session's role (docs/behaviour.md#staff-sign-in). */
  staffRole?: StaffRole;
  /** A staff session's person. */
  email?: string;
  /** A portal session's event types, space-separated (type names hold no spaces); absent when unrestricted. */
  eventTypes?: string;
  /** When a session ends (ISO 8601): the handler compares it on every request, cached or not. */
  expiresAt?: string;
}

/** Encodes a caller as authorizer context. */
function toAuthorizerContext(caller: Caller): AuthorizerContext {
  return {
    workspace: caller.workspace,
    tokenId: caller.tokenId,
    scopes: caller.scopes.join(' '),
    ...(caller.tokenName ? { tokenName: caller.tokenName } : {}),
    ...(caller.kind === 'portal_session' || caller.kind === 'staff' ? { kind: caller.kind } : {}),
    ...(caller.staffRole ? { staffRole: caller.staffRole } : {}),
    ...(caller.email ? { email: caller.email } : {}),
    ...(caller.eventTypes ? { eventTypes: caller.eventTypes.join(' ') } : {}),
    ...(caller.expiresAt ? { expiresAt: caller.expiresAt } : {}),
  };
}

/** Decodes authorizer context back into a caller; null when absent or malformed. */
export function fromAuthorizerContext(context: Record<string, unknown> | null | undefined): Caller | null {
  if (!context || typeof context.workspace !== 'string' || typeof context.tokenId !== 'string') return null;
  const scopes = typeof context.scopes === 'string' ? context.scopes.split(' ').filter(Boolean) : [];
  return {
    workspace: context.workspace,
    tokenId: context.tokenId,
    scopes,
    ...(typeof context.tokenName === 'string' && context.tokenName !== '' ? { tokenName: context.tokenName } : {}),
    ...(context.kind === 'portal_session' ? { kind: 'portal_session' as const } : {}),
    ...(context.kind === 'staff' ? { kind: 'staff' as const } : {}),
    ...(typeof context.staffRole === 'string' && (STAFF_ROLES as readonly string[]).includes(context.staffRole)
      ? { staffRole: context.staffRole as StaffRole }
      : {}),
    ...(typeof context.email === 'string' && context.email !== '' ? { email: context.email } : {}),
    ...(typeof context.eventTypes === 'string' ? { eventTypes: context.eventTypes.split(' ').filter(Boolean) } : {}),
    ...(typeof context.expiresAt === 'string' && context.expiresAt !== '' ? { expiresAt: context.expiresAt } : {}),
  };
}

/**
 * The Allow policy for a caller. The resource is the whole API stage, so the
 * cached decision holds for every route; each route checks its permission itself.
 */
export function allowPolicy(caller: Caller, methodArn: string): APIGatewayAuthorizerResult {
  const [arnPrefix = '*', stage = '*'] = methodArn.split('/');
  return {
    principalId: caller.tokenId,
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: `${arnPrefix}/${stage}/*` }],
    },
    context: { ...toAuthorizerContext(caller) },
  };
}
