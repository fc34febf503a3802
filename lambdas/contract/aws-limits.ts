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
 * inside it; for the MCP function, behind a function URL in BUFFERED mode, the URL's event and
 * result carrying the JSON-RPC messages ({@link FUNCTION_URL_REFUSALS}).
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

/**
 * SQS, "Message size": 256 KiB (262,144 bytes) of body and attributes, counted as
 * {@link sqsMessageBytes} does, per message of SendMessage and for a whole SendMessageBatch. SQS
 * allows a queue up to 1 MiB since 2025, but only when its `MaximumMessageSize` says so; 256 KiB is
 * what the service holds itself to (a delivery or job message carries ids only, far under it).
 */
export const SQS_MESSAGE_BYTES = 256 * 1024;

/** SQS, SendMessageBatch: at most 10 entries per call. */
export const SQS_BATCH_ENTRIES = 10;

/** DynamoDB, "Item size": 400 KB (409,600 bytes), attribute names included. */
export const DYNAMODB_ITEM_BYTES = 400 * 1024;

/**
 * DynamoDB, "Nested attribute depth": 32 levels, counted along a document path with the top-level
 * attribute as the first, so a top-level attribute holds at most 31 nested lists or maps (an event
 * payload stored as a map: a JSON nesting depth of at most 31).
 */
export const DYNAMODB_MAX_NESTING_LEVELS = 32;

/**
 * Lambda function URL, invoke mode BUFFERED (the MCP function's): its payloads are Lambda's
 * synchronous ones, {@link LAMBDA_SYNC_PAYLOAD_BYTES} each way, and API Gateway's limits do not
 * apply. What the URL answers when Lambda refuses the payload: a request over it never reaches the
 * function (413), a result over it is dropped (502). The URL has no gateway responses: the status is the contract, the body is
 * Lambda's own short JSON message.
 */
export const FUNCTION_URL_REFUSALS = {
  requestTooLarge: {
    status: 413,
    message: `Request must be smaller than ${LAMBDA_SYNC_PAYLOAD_BYTES} bytes for the InvokeFunction operation`,
  },
  responseTooLarge: { status: 502, message: 'Internal Server Error' },
} as const;

/** One SQS message attribute as SendMessage takes it (string or binary value). */
export interface SqsMessageAttribute {
  readonly DataType: string;
  readonly StringValue?: string;
  readonly BinaryValue?: Uint8Array;
}

/**
 * The size of an SQS message as SQS counts it toward {@link SQS_MESSAGE_BYTES}: the UTF-8 bytes of
 * the body, plus, for each message attribute, its name, its data type and its value.
 */
export function sqsMessageBytes(body: string, attributes: Readonly<Record<string, SqsMessageAttribute>> = {}): number {
  const utf8 = (s: string) => new TextEncoder().encode(s).length;
  let bytes = utf8(body);
  for (const [name, a] of Object.entries(attributes))
    bytes += utf8(name) + utf8(a.DataType) + (a.BinaryValue ? a.BinaryValue.length : utf8(a.StringValue ?? ''));
  return bytes;
}

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

/**
 * Lambda, "Function environment variables": 4 KB in all, names and values, per function. A
 * deploy whose function would carry more fails in CloudFormation, so settings that become
 * environment variables are bounded below it.
 */
export const LAMBDA_ENVIRONMENT_BYTES = 4 * 1024;
