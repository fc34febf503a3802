/**
 * The event-type catalogue built at run time: the built-in types (zod payload schemas) plus any
 * configured types (JSON Schema payloads, compiled by ajv), validated alike. For tests, tools and
 * generation; deployed functions use the same catalogue generated at build time
 * (lambdas/domain/configured-event-types.ts), so they carry neither zod nor ajv.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { BUILT_IN_EVENT_TYPES, builtInCatalogue } from '../contract/events';
import {
  builtInProblems,
  catalogueOf,
  configuredInfo,
  configuredProblems,
  parseEventTypesConfigWith,
  type ConfiguredEventType,
  type EventCatalogue,
} from './event-catalogue-core';

export type { ConfiguredEventType, EventCatalogue } from './event-catalogue-core';

/** Parses the configuration file's content; throws with every problem named. */
export function parseEventTypesConfig(raw: unknown): ConfiguredEventType[] {
  return parseEventTypesConfigWith(raw, new Set(Object.keys(BUILT_IN_EVENT_TYPES)));
}

/** A catalogue of the built-in types and the configured ones. */
export function createEventCatalogue(configured: readonly ConfiguredEventType[] = []): EventCatalogue {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  const validators = new Map<string, (payload: unknown) => string[]>();
  for (const [name, t] of Object.entries(BUILT_IN_EVENT_TYPES)) {
    validators.set(name, (payload) => {
      const r = t.payload.safeParse(payload);
      return r.success ? [] : builtInProblems(r.error.issues.map((i) => ({ path: i.path as (string | number)[], message: i.message })));
    });
  }
  for (const t of configured) {
    const validate = ajv.compile(t.payloadSchema);
    validators.set(t.name, (payload) => configuredProblems(validate, payload));
  }
  return catalogueOf([...builtInCatalogue(), ...configured.map(configuredInfo)], validators);
}
