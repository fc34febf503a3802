/**
 * The deployment's event types: the built-in ones and the platform team's own from
 * `config/event-types.json`, as generated at build time (lambdas/generated/event-catalogue.ts, by
 * `npm run generate`): the built-in payload schemas as data, the configured JSON Schemas compiled
 * to standalone code. Neither zod nor ajv is bundled; editing the file, regenerating and
 * redeploying adds types. Synth refuses generated code older than the file, and so does this
 * module when it loads (the local stack), naming the fix.
 */
import raw from '../../config/event-types.json';
import { validateInput } from '../contract/input-validation';
import { BUILT_IN_EVENT_PAYLOADS, CONFIGURED_EVENT_TYPES, CONFIGURED_VALIDATORS } from '../generated/event-catalogue';
import {
  builtInProblems,
  catalogueOf,
  configuredInfo,
  configuredProblems,
  parseEventTypesConfigWith,
  type EventCatalogue,
} from './event-catalogue-core';

/** Throws unless the generated types are the file's (a bad file throws too, naming every problem). */
function checkGenerated(): void {
  const configured = parseEventTypesConfigWith(raw, new Set(BUILT_IN_EVENT_PAYLOADS.map((t) => t.name)));
  if (JSON.stringify(configured) !== JSON.stringify(CONFIGURED_EVENT_TYPES)) {
    throw new Error('config/event-types.json differs from lambdas/generated/event-catalogue.ts: run `npm run generate`');
  }
}

let catalogue: EventCatalogue | undefined;

/** The deployment's catalogue (built-in + configured), built once. */
export function deploymentCatalogue(): EventCatalogue {
  if (catalogue) return catalogue;
  checkGenerated();
  const validators = new Map<string, (payload: unknown) => string[]>();
  for (const t of BUILT_IN_EVENT_PAYLOADS) {
    validators.set(t.name, (payload) => {
      const r = validateInput(t.payload, payload);
      return r.success ? [] : builtInProblems(r.issues);
    });
  }
  for (const t of CONFIGURED_EVENT_TYPES) {
    const validate = CONFIGURED_VALIDATORS[t.name];
    if (!validate) throw new Error(`No generated validator for event type ${t.name}: run npm run generate`);
    validators.set(t.name, (payload) => configuredProblems(validate, payload));
  }
  catalogue = catalogueOf(
    [
      ...BUILT_IN_EVENT_PAYLOADS.map((t) => ({ name: t.name, description: t.description, payloadSchema: t.payloadSchema, builtIn: true })),
      ...CONFIGURED_EVENT_TYPES.map(configuredInfo),
    ],
    validators,
  );
  return catalogue;
}
