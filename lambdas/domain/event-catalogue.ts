/** The event-type catalogue a deployment runs with: built-ins plus configured types. */
import { builtInCatalogue, type EventTypeInfo } from '../contract/events';

/** Lookup over the catalogue. */
export interface EventCatalogue {
  readonly types: readonly EventTypeInfo[];
  has(name: string): boolean;
}

/** A catalogue of the built-in types and any extra ones. */
export function createEventCatalogue(extra: readonly EventTypeInfo[] = []): EventCatalogue {
  const types = [...builtInCatalogue(), ...extra];
  const names = new Set(types.map((t) => t.name));
  return { types, has: (name) => names.has(name) };
}
