/**
 * What a portal session limited to some event types may do (docs/behaviour.md#portal-sessions), in
 * one place: it sees only those types in the catalogue, subscribes endpoints to those only, and an
 * endpoint subscribed to any other type is read-only to it. Every operation that changes an endpoint,
 * or sends or replays to one, asks {@link assertMayChangeEndpoint}; an unrestricted caller passes.
 */
import { AppError } from '../contract/errors';
import type { Caller } from './context';

/** The types of `types` outside the caller's session's event types (none for an unrestricted caller). */
function outsideSession(caller: Pick<Caller, 'eventTypes'>, types: readonly string[]): string[] {
  const allowed = caller.eventTypes;
  return allowed ? types.filter((t) => !allowed.includes(t)) : [];
}

/** The catalogue's types as the caller may see them. */
export function visibleEventTypes<T extends { readonly name: string }>(caller: Pick<Caller, 'eventTypes'>, types: readonly T[]): T[] {
  const allowed = caller.eventTypes;
  return allowed ? types.filter((t) => allowed.includes(t.name)) : [...types];
}

/** Throws Forbidden (403) naming the types a session may not subscribe an endpoint to. */
export function assertMaySubscribe(caller: Pick<Caller, 'eventTypes'>, types: readonly string[]): void {
  const outside = outsideSession(caller, types);
  if (outside.length > 0) {
    throw new AppError(
      'Forbidden',
      `This portal session may subscribe only to ${caller.eventTypes!.join(', ')}; not to ${outside.join(', ')}`,
      { eventTypes: outside },
    );
  }
}

/** Throws Forbidden (403) when the endpoint is subscribed to a type outside the caller's session: it is read-only to it. */
export function assertMayChangeEndpoint(
  caller: Pick<Caller, 'eventTypes'>,
  endpoint: { readonly endpointId: string; readonly eventTypes: readonly string[] },
): void {
  const outside = outsideSession(caller, endpoint.eventTypes);
  if (outside.length > 0) {
    throw new AppError(
      'Forbidden',
      `Endpoint ${endpoint.endpointId} is subscribed to ${outside.join(', ')}, outside this portal session's event types: it is read-only here`,
      { eventTypes: outside },
    );
  }
}
