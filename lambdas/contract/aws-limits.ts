/**
 * The AWS service quotas the code depends on, each named once with the quota it is
 * (docs/behaviour.md#limits). The service's own limits derive from these (`limits.ts`,
 * `pagination.ts`), so a number AWS enforces is never restated. Imports nothing: the console and
 * every function may import it. These are hard quotas; none can be raised by a quota request.
 */

/**
 * Lambda, "Invocation payload (request and response)", synchronous: 6 MB each way. Lambda counts
 * it in bytes of the serialized JSON (6 × 1024 × 1024; its refusal names 6,291,456 for a request,
 * and a response gets 100 bytes more, which nothing here relies on). For a REST function the
 * response is API Gateway's proxy result `{statusCode, headers, body}` with the body JSON-escaped
 * inside it; for the MCP function, the function URL's result carrying the JSON-RPC answer.
 */
export const LAMBDA_SYNC_PAYLOAD_BYTES = 6 * 1024 * 1024;

/** API Gateway REST API, "Maximum payload size": 10 MB (10,485,760 bytes) per request. */
export const API_GATEWAY_PAYLOAD_BYTES = 10 * 1024 * 1024;

/** API Gateway REST API, "Maximum integration timeout": 29 seconds (the default one). */
export const API_GATEWAY_INTEGRATION_TIMEOUT_SECONDS = 29;

/**
 * EventBridge, "PutEvents event entry size": 256 KB, counted as 262,144 bytes the way
 * {@link putEventsEntryBytes} computes it.
 */
export const EVENTBRIDGE_ENTRY_BYTES = 256 * 1024;

/** EventBridge PutEvents entry, `DetailType`: 1 to 128 characters. */
export const EVENTBRIDGE_DETAIL_TYPE_MAX_CHARS = 128;

/** EventBridge PutEvents entry, `Source`: 1 to 256 characters. */
export const EVENTBRIDGE_SOURCE_MAX_CHARS = 256;

/** EventBridge PutEvents entry: what `Time` counts when it is set, whatever its value. */
export const EVENTBRIDGE_TIME_BYTES = 14;

/** SQS, "Message size": 256 KiB (262,144 bytes) of body and attributes. */
export const SQS_MESSAGE_BYTES = 256 * 1024;

/** DynamoDB, "Item size": 400 KB (409,600 bytes), attribute names included. */
export const DYNAMODB_ITEM_BYTES = 400 * 1024;

/** The fields of a PutEvents entry that count toward its size. */
export interface PutEventsEntryParts {
  readonly source: string;
  readonly detailType: string;
  /** The `Detail` string as sent (JSON). */
  readonly detail?: string;
  /** True when the entry sets `Time`. */
  readonly time?: boolean;
  readonly resources?: readonly string[];
}

/**
 * The size of a PutEvents entry as EventBridge computes it ("Calculating PutEvents event entry
 * size"): `Time` 14 bytes if set, plus the UTF-8 bytes of `Source`, `DetailType`, `Detail` and each
 * of `Resources`. An entry over {@link EVENTBRIDGE_ENTRY_BYTES} is refused.
 */
export function putEventsEntryBytes(entry: PutEventsEntryParts): number {
  const utf8 = (s: string) => new TextEncoder().encode(s).length;
  return (
    (entry.time ? EVENTBRIDGE_TIME_BYTES : 0) +
    utf8(entry.source) +
    utf8(entry.detailType) +
    utf8(entry.detail ?? '') +
    (entry.resources ?? []).reduce((n, r) => n + utf8(r), 0)
  );
}
