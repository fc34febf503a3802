/**
 * The event-type catalogue's rules without zod or ajv (docs/behaviour.md#event-catalogue): lookup,
 * payload problems worded one way, and the configuration file's checks. Functions build their
 * catalogue from generated validators (lambdas/domain/configured-event-types.ts); tests and tools
 * that bring their own types compile them at run time (lambdas/domain/event-catalogue.ts).
 */
import { EVENT_TYPE_MAX_CHARS, EVENT_TYPE_NAME, type EventTypeInfo } from '../contract/events';
import type { InputIssue } from '../contract/input-validation';

/** A configured (non built-in) event type, as the configuration file lists it. */
export interface ConfiguredEventType {
  readonly name: string;
  readonly description?: string;
  readonly payloadSchema: Record<string, unknown>;
}

/** Lookup and payload validation over the catalogue. */
export interface EventCatalogue {
  readonly types: readonly EventTypeInfo[];
  has(name: string): boolean;
  /** Problems of a payload for a type (empty: valid); null for an unknown type. */
  validate(name: string, payload: unknown): string[] | null;
}

/** A compiled JSON Schema validator, as ajv makes them (standalone or not): `errors` after a failure. */
export type PayloadValidator = ((payload: unknown) => boolean) & { errors?: readonly { instancePath: string; message?: string }[] | null };

/** The problems of a built-in payload, from its input schema's issues. */
export function builtInProblems(issues: readonly InputIssue[]): string[] {
  return issues.map((i) => `${['payload', ...i.path.map(String)].join('.')}: ${i.message}`);
}

/** The problems of a configured payload, from its JSON Schema validator (empty: valid). */
export function configuredProblems(validate: PayloadValidator, payload: unknown): string[] {
  return validate(payload)
    ? []
    : (validate.errors ?? []).map((e) => `payload${e.instancePath.replaceAll('/', '.')}: ${e.message ?? 'invalid'}`);
}

/** A configured type as the catalogue lists it. */
export function configuredInfo(t: ConfiguredEventType): EventTypeInfo {
  return { name: t.name, description: t.description ?? t.name, payloadSchema: t.payloadSchema, builtIn: false };
}

/** A catalogue of `types`, each validated by its entry in `validators`. */
export function catalogueOf(
  types: readonly EventTypeInfo[],
  validators: ReadonlyMap<string, (payload: unknown) => string[]>,
): EventCatalogue {
  return {
    types,
    has: (name) => validators.has(name),
    validate: (name, payload) => validators.get(name)?.(payload) ?? null,
  };
}

/** Parses the configuration file's content; throws with every problem named. `builtIn`: the names it may not reuse. */
export function parseEventTypesConfigWith(raw: unknown, builtIn: ReadonlySet<string>): ConfiguredEventType[] {
  const types = (raw as { types?: unknown })?.types;
  if (!Array.isArray(types)) throw new Error('event types configuration: expected {"types": [...]}');
  const problems: string[] = [];
  const out: ConfiguredEventType[] = [];
  types.forEach((t: unknown, i) => {
    const e = t as Partial<ConfiguredEventType>;
    if (typeof e?.name !== 'string' || !EVENT_TYPE_NAME.test(e.name)) problems.push(`types[${i}].name must be dotted lower-case words`);
    else if (e.name.length > EVENT_TYPE_MAX_CHARS) problems.push(`types[${i}].name must be at most ${EVENT_TYPE_MAX_CHARS} characters`);
    else if (builtIn.has(e.name)) problems.push(`types[${i}].name ${e.name} is built in`);
    if (!e?.payloadSchema || typeof e.payloadSchema !== 'object') problems.push(`types[${i}].payloadSchema must be a JSON Schema object`);
    if (e?.description !== undefined && typeof e.description !== 'string') problems.push(`types[${i}].description must be a string`);
    if (problems.length === 0) out.push(e as ConfiguredEventType);
  });
  const names = out.map((t) => t.name);
  const repeated = names.filter((n, i) => names.indexOf(n) !== i);
  if (repeated.length) problems.push(`repeated type names: ${[...new Set(repeated)].join(', ')}`);
  if (problems.length) throw new Error(`event types configuration: ${problems.join('; ')}`);
  return out;
}
