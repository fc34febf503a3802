/**
 * The catalogue of subscribable event types (docs/behaviour.md#event-catalogue): each type with its
 * payload schema. Built-in types are the synthetic test event and the
 * service's own domain events, so a workspace can subscribe to its own changes. Zod-free: the
 * payload schemas are zod, in `event-schemas.ts`, re-exported here for build-time code.
 */
export { BUILT_IN_EVENT_TYPES, builtInCatalogue, type BuiltInEventType } from './event-schemas';
import { EVENTBRIDGE_DETAIL_TYPE_MAX_CHARS } from './aws-limits';
import type { BuiltInEventType } from './event-schemas';

/** The test send's event type (docs/behaviour.md#test-sends). */
export const TEST_EVENT_TYPE = 'webhook.test_event' satisfies BuiltInEventType;

/** Event type names: dotted lower-case words, as the built-ins. */
export const EVENT_TYPE_NAME = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;

/** The longest event type name: a type travels as the EventBridge entry's `DetailType`, which allows no more. */
export const EVENT_TYPE_MAX_CHARS = EVENTBRIDGE_DETAIL_TYPE_MAX_CHARS;

/** One entry of the catalogue as the API shows it. */
export interface EventTypeInfo {
  readonly name: string;
  readonly description: string;
  /** JSON Schema (draft 2020-12) of the payload. */
  readonly payloadSchema: Record<string, unknown>;
  readonly builtIn: boolean;
}
