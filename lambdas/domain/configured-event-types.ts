/**
 * The platform team's event types: `config/event-types.json`, imported so the
 * bundler bakes it into every function at synth and the local stack reads the
 * same file. Editing the file and redeploying adds types; no code changes.
 */
import raw from '../../config/event-types.json';
import { createEventCatalogue, parseEventTypesConfig, type EventCatalogue } from './event-catalogue';

let catalogue: EventCatalogue | undefined;

/** The deployment's catalogue (built-in + configured), built once. */
export function deploymentCatalogue(): EventCatalogue {
  catalogue ??= createEventCatalogue(parseEventTypesConfig(raw));
  return catalogue;
}
