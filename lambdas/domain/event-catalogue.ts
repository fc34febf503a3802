/**
 * The event-type catalogue a deployment runs with: the built-in types (zod
 * payload schemas) plus the platform team's own types from
 * `config/event-types.json` (JSON Schema payloads), validated alike.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { BUILT_IN_EVENT_TYPES, EVENT_TYPE_NAME, builtInCatalogue, type EventTypeInfo } from '../contract/events';

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

/** Parses the configuration file's content; throws with every problem named. */
export function parseEventTypesConfig(raw: unknown): ConfiguredEventType[] {
  const types = (raw as { types?: unknown })?.types;
  if (!Array.isArray(types)) throw new Error('event types configuration: expected {"types": [...]}');
  const problems: string[] = [];
  const out: ConfiguredEventType[] = [];
  types.forEach((t: unknown, i) => {
    const e = t as Partial<ConfiguredEventType>;
    if (typeof e?.name !== 'string' || !EVENT_TYPE_NAME.test(e.name)) problems.push(`types[${i}].name must be dotted lower-case words`);
    else if (e.name in BUILT_IN_EVENT_TYPES) problems.push(`types[${i}].name ${e.name} is built in`);
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

/** A catalogue of the built-in types and the configured ones. */
export function createEventCatalogue(configured: readonly ConfiguredEventType[] = []): EventCatalogue {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  const validators = new Map<string, (payload: unknown) => string[]>();
  for (const [name, t] of Object.entries(BUILT_IN_EVENT_TYPES)) {
    validators.set(name, (payload) => {
      const r = t.payload.safeParse(payload);
      return r.success ? [] : r.error.issues.map((i) => `${['payload', ...i.path.map(String)].join('.')}: ${i.message}`);
    });
  }
  for (const t of configured) {
    const validate = ajv.compile(t.payloadSchema);
    validators.set(t.name, (payload) => (validate(payload) ? [] : (validate.errors ?? []).map((e) => `payload${e.instancePath.replaceAll('/', '.')}: ${e.message ?? 'invalid'}`)));
  }
  const types: EventTypeInfo[] = [
    ...builtInCatalogue(),
    ...configured.map((t) => ({ name: t.name, description: t.description ?? t.name, payloadSchema: t.payloadSchema, builtIn: false })),
  ];
  return {
    types,
    has: (name) => validators.has(name),
    validate: (name, payload) => validators.get(name)?.(payload) ?? null,
  };
}
