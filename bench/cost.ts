/**
 * The cost model (docs/scaling.md#cost-per-million-deliveries): AWS dollars per million first-try deliveries,
 * computed from what one benchmark phase counted (DynamoDB units from ConsumedCapacity,
 * bench/capacity.ts; the rest from bench/usage.ts) at the prices of bench/prices.ts and the
 * functions' deployed memory and architecture (bench/deployed.ts). Pure: no I/O.
 */
import { PRICES } from './prices';
import type { FunctionSettings } from './deployed';
import type { UsageSnapshot } from './usage';

/**
 * The utilisation the provisioned figure assumes (lib/constructs/table.ts's auto-scaling target,
 * passed in by the caller so the model and the construct share one number).
 */
export interface ProvisionedAssumption {
  readonly targetUtilizationPercent: number;
}

/**
 * The share of invocations X-Ray records under its default sampling rule (1 request a second,
 * then 5 %): at a million deliveries a day and up, the 5 % dominates. Every function traces
 * (`Tracing.ACTIVE`, lib/constructs/service-function.ts).
 */
export const X_RAY_SAMPLED_FRACTION = 0.05;

/**
 * CloudWatch Logs bills each log event at its message size plus 26 bytes
 * (the PutLogEvents event-size rule, which ingestion is metered by).
 */
export const LOG_EVENT_OVERHEAD_BYTES = 26;

/**
 * Lambda's own lines per invocation (text log format: START, END and REPORT with its X-Ray line),
 * an estimate from their usual shape, not measured: the local stack has no Lambda runtime.
 */
const PLATFORM_LOG_LINES = [
  'START RequestId: 3f2b8c1e-6a4d-4e8f-9b7a-1c2d3e4f5a6b Version: $LATEST',
  'END RequestId: 3f2b8c1e-6a4d-4e8f-9b7a-1c2d3e4f5a6b',
  'REPORT RequestId: 3f2b8c1e-6a4d-4e8f-9b7a-1c2d3e4f5a6b\tDuration: 123.45 ms\tBilled Duration: 124 ms\tMemory Size: 512 MB\tMax Memory Used: 98 MB\t\nXRAY TraceId: 1-674a1b2c-0123456789abcdef01234567\tSegmentId: 0123456789abcdef\tSampled: true\t',
] as const;

/** Bytes CloudWatch Logs ingests for Lambda's own lines of one invocation (with the per-event overhead). */
export const PLATFORM_LOG_BYTES_PER_INVOCATION = PLATFORM_LOG_LINES.reduce(
  (n, line) => n + Buffer.byteLength(`${line}\n`) + LOG_EVENT_OVERHEAD_BYTES,
  0,
);

/**
 * DynamoDB's own round trip the duration estimate assumes, ms: single-digit milliseconds for a
 * read and a little more for a write or transaction, as DynamoDB documents for same-region calls.
 * DynamoDB Local on a loaded benchmark machine takes tens to hundreds of ms, which would bill the
 * emulator's slowness as Lambda time.
 */
export const AWS_DYNAMODB_ROUND_TRIP_MS = { read: 5, write: 10 } as const;

/** SQS's round trip for a SendMessageBatch, ms (the in-process queue answers at once). */
const AWS_SQS_SEND_ROUND_TRIP_MS = 15;

/** What a phase counted, as the model takes it. */
export interface PhaseCounts {
  /** First-try delivered events (one endpoint: one delivery each). */
  readonly deliveries: number;
  /** DynamoDB read and write units over the phase (tables and indexes). */
  readonly rcu: number;
  readonly wcu: number;
  readonly usage: UsageSnapshot;
}

/** One line of the cost table. */
interface CostRow {
  readonly component: string;
  /** Billed units per delivery. */
  readonly perDelivery: number;
  readonly unit: string;
  /** USD per million deliveries. */
  readonly perMillion: number;
  /** How the units were counted. */
  readonly basis: string;
  /** Whether the totals include it (the measured Lambda duration is shown next to the estimate, not added). @default true */
  readonly inTotal?: boolean;
}

/** The cost table of one phase. */
export interface CostModel {
  readonly rows: CostRow[];
  /** The total with on-demand tables. */
  readonly onDemandTotal: number;
  /** The DynamoDB rows priced as provisioned capacity at the target utilisation, and the total with them. */
  readonly provisioned: { readonly dynamoDb: number; readonly total: number; readonly targetUtilizationPercent: number };
}

const GB = 1024 ** 3;
const MILLION = 1e6;

/** Lambda GB-seconds of `billedMs` at `settings`' memory, and their price. */
function durationCost(billedMs: number, settings: FunctionSettings): { gbSeconds: number; usd: number } {
  const gbSeconds = (billedMs / 1000) * (settings.memoryMb / 1024);
  return { gbSeconds, usd: gbSeconds * PRICES.lambda.gbSecond[settings.architecture] };
}

/**
 * An invocation's duration on AWS, estimated from the one measured here: the time it waited on
 * DynamoDB Local (at least one call in flight) rescaled by DynamoDB's round trip over the
 * emulator's ({@link AWS_DYNAMODB_ROUND_TRIP_MS}), plus an SQS round trip per send; the rest (the
 * code itself, the POST, the in-process queue) as measured, so still inflated by the machine's load.
 */
export function estimatedAwsMs(f: UsageSnapshot['functions'][string]): number {
  const awsCallMs = f.dynamoReads * AWS_DYNAMODB_ROUND_TRIP_MS.read + f.dynamoWrites * AWS_DYNAMODB_ROUND_TRIP_MS.write;
  const scale = f.dynamoCallMs > 0 ? awsCallMs / f.dynamoCallMs : 0;
  // Half a ms an invocation for Lambda's rounding up to the next ms.
  return Math.max(0, f.totalMs - f.dynamoBusyMs) + f.dynamoBusyMs * scale + f.sqsSends * AWS_SQS_SEND_ROUND_TRIP_MS + 0.5 * f.invocations;
}

/** Settings of a function the model has none for: fails loudly rather than pricing it at a guess. */
function settingsOf(functions: Readonly<Record<string, FunctionSettings>>, name: string): FunctionSettings {
  const settings = functions[name];
  if (!settings) throw new Error(`no deployed settings for the function "${name}" (bench/deployed.ts)`);
  return settings;
}

/**
 * Dollars per provisioned capacity unit consumed, at `utilization` (0 to 1) of what is provisioned:
 * a unit-hour serves 3,600 units a second's worth, of which that share is used.
 */
export function provisionedUnitPrice(unitHour: number, utilization: number): number {
  return unitHour / (3600 * utilization);
}

/** The cost of one phase's counts, per million deliveries. */
export function costModel(
  counts: PhaseCounts,
  functions: Readonly<Record<string, FunctionSettings>>,
  assumption: ProvisionedAssumption,
): CostModel {
  const d = Math.max(1, counts.deliveries);
  const per = (n: number) => n / d;
  const { usage } = counts;
  const fns = Object.entries(usage.functions);
  const invocations = fns.reduce((n, [, f]) => n + f.invocations, 0);
  const measured = fns.map(([name, f]) => ({ name, ...durationCost(f.billedMs, settingsOf(functions, name)) }));
  const estimated = fns.map(([name, f]) => ({
    name,
    ms: estimatedAwsMs(f),
    ...durationCost(estimatedAwsMs(f), settingsOf(functions, name)),
  }));
  const sqs = usage.sqs;
  const sqsRequests = sqs.sendChunks + sqs.receiveRequests + sqs.deleteRequests + sqs.visibilityRequests;
  const loggedBytes = Object.values(usage.logs.bytes).reduce((n, b) => n + b, 0);
  const loggedLines = Object.values(usage.logs.lines).reduce((n, l) => n + l, 0);
  const logBytes = loggedBytes + loggedLines * LOG_EVENT_OVERHEAD_BYTES + invocations * PLATFORM_LOG_BYTES_PER_INVOCATION;
  const kms = usage.kms.decrypt + usage.kms.generate;
  const row = (component: string, units: number, unit: string, usdPerUnit: number, basis: string): CostRow => ({
    component,
    perDelivery: per(units),
    unit,
    perMillion: per(units) * usdPerUnit * MILLION,
    basis,
  });
  const perInvocation = fns
    .map(
      ([name, f]) =>
        `${name} ${f.invocations}${f.records > 0 ? ` (${(f.records / Math.max(1, f.invocations)).toFixed(1)} records each)` : ''}`,
    )
    .join(', ');
  const mean = (ms: number, invocations: number) => (ms / Math.max(1, invocations)).toFixed(1);
  const memory = (name: string) => `${settingsOf(functions, name).memoryMb} MB ${settingsOf(functions, name).architecture}`;
  const measuredMs = fns
    .map(([name, f]) => `${name} ${mean(f.billedMs, f.invocations)} ms (${mean(f.dynamoBusyMs, f.invocations)} waiting on DynamoDB Local)`)
    .join(', ');
  const estimatedMs = estimated
    .map((e) => `${e.name} ${mean(e.ms, usage.functions[e.name]!.invocations)} ms × ${memory(e.name)}`)
    .join(', ');
  const rows: CostRow[] = [
    row('DynamoDB writes (on-demand)', counts.wcu, 'WRU', PRICES.dynamoDb.writeRequestUnit, 'ConsumedCapacity, table and indexes'),
    row('DynamoDB reads (on-demand)', counts.rcu, 'RRU', PRICES.dynamoDb.readRequestUnit, 'ConsumedCapacity, table and indexes'),
    row(
      'SQS requests',
      sqsRequests,
      'requests',
      PRICES.sqsRequest,
      `64 KiB chunks: SendMessageBatch ${per(sqs.sendChunks).toFixed(3)}, ReceiveMessage ≥${per(sqs.receiveRequests).toFixed(3)}, DeleteMessageBatch ${per(sqs.deleteRequests).toFixed(3)}, ChangeMessageVisibility ${per(sqs.visibilityRequests).toFixed(3)}`,
    ),
    row('Lambda requests', invocations, 'invocations', PRICES.lambda.request, perInvocation),
    {
      component: 'Lambda duration (AWS estimate)',
      perDelivery: per(estimated.reduce((n, x) => n + x.gbSeconds, 0)),
      unit: 'GB-s',
      perMillion: per(estimated.reduce((n, x) => n + x.usd, 0)) * MILLION,
      basis: `${estimatedMs}: measured, DynamoDB waits rescaled to ${AWS_DYNAMODB_ROUND_TRIP_MS.read}/${AWS_DYNAMODB_ROUND_TRIP_MS.write} ms a read/write, + ${AWS_SQS_SEND_ROUND_TRIP_MS} ms a SQS send`,
    },
    {
      component: 'Lambda duration (as measured here)',
      perDelivery: per(measured.reduce((n, x) => n + x.gbSeconds, 0)),
      unit: 'GB-s',
      perMillion: per(measured.reduce((n, x) => n + x.usd, 0)) * MILLION,
      basis: `not in the total: ${measuredMs}`,
      inTotal: false,
    },
    row(
      'EventBridge events',
      usage.eventBridge.billedEvents,
      'events',
      PRICES.eventBridgeEvent,
      `PutEvents entries in 64 KiB chunks (${usage.eventBridge.putEventsEntries} entries)`,
    ),
    {
      component: 'CloudWatch Logs ingestion',
      perDelivery: per(logBytes),
      unit: 'bytes',
      perMillion: (per(logBytes) * MILLION * PRICES.logsIngestedGb) / GB,
      basis: `captured stdout/stderr at INFO with EMF metrics ${per(loggedBytes).toFixed(0)} B in ${per(loggedLines).toFixed(2)} lines, + ${LOG_EVENT_OVERHEAD_BYTES} B a line, + Lambda's START/END/REPORT ≈ ${PLATFORM_LOG_BYTES_PER_INVOCATION} B an invocation (estimate)`,
    },
    row(
      'KMS requests',
      kms,
      'requests',
      PRICES.kmsRequest,
      `data-key Decrypt ${usage.kms.decrypt} + GenerateDataKey ${usage.kms.generate} in the phase: opened data keys are cached per container, so about one Decrypt per dispatcher container and data key`,
    ),
    row(
      'X-Ray traces',
      invocations * X_RAY_SAMPLED_FRACTION,
      'traces',
      PRICES.xRayTrace,
      `${X_RAY_SAMPLED_FRACTION * 100} % of invocations (default sampling rule; estimate)`,
    ),
  ];
  const onDemandTotal = rows.filter((r) => r.inTotal !== false).reduce((n, r) => n + r.perMillion, 0);
  const dynamoOnDemand = rows[0]!.perMillion + rows[1]!.perMillion;
  const utilization = assumption.targetUtilizationPercent / 100;
  const dynamoProvisioned =
    per(counts.wcu) * MILLION * provisionedUnitPrice(PRICES.dynamoDb.wcuHour, utilization) +
    per(counts.rcu) * MILLION * provisionedUnitPrice(PRICES.dynamoDb.rcuHour, utilization);
  return {
    rows,
    onDemandTotal,
    provisioned: {
      dynamoDb: dynamoProvisioned,
      total: onDemandTotal - dynamoOnDemand + dynamoProvisioned,
      targetUtilizationPercent: assumption.targetUtilizationPercent,
    },
  };
}

/**
 * What receivers' answer time adds: a dispatcher batch runs its records concurrently, so it waits
 * about one receiver latency per invocation; per delivery that is latency × memory / records per
 * invocation (the bench's receiver answers at once).
 */
export function receiverLatencyCost(
  latencyMs: number,
  counts: PhaseCounts,
  functions: Readonly<Record<string, FunctionSettings>>,
  dispatcher = 'dispatcher',
): number {
  const f = counts.usage.functions[dispatcher];
  if (!f || f.invocations === 0) return 0;
  const extra = durationCost(latencyMs * f.invocations, settingsOf(functions, dispatcher));
  return (extra.usd / Math.max(1, counts.deliveries)) * MILLION;
}

/**
 * The payload's own DynamoDB units (the growth a larger payload is allowed): one standard write of an item of
 * `bytes` (1 WCU per 1 KiB or part of it) and one strongly consistent read of it (1 RCU per 4 KiB
 * or part), ignoring the item's other attributes.
 */
export function payloadOwnUnits(bytes: number): { wcu: number; rcu: number } {
  return { wcu: Math.ceil(bytes / 1024), rcu: Math.ceil(bytes / 4096) };
}
