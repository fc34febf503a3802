/**
 * The AWS list prices the benchmark's cost model (bench/cost.ts) uses: the one place they are
 * written. US East (N. Virginia), `us-east-1`, in US dollars, without free tiers (at a million
 * deliveries and up they are spent) and without savings plans or reserved capacity.
 *
 * Checked on 2026-11-26 against the public pricing pages below (copies stored for this project;
 * the web was not reachable): the DynamoDB on-demand prices are those in effect since AWS halved
 * them on 1 November 2024. Check the pages again before quoting a figure: prices change.
 */

/** When and where the prices were read. */
export const PRICES_AS_OF = { date: '2026-11-26', region: 'us-east-1' } as const;

/** The pricing pages, by component. */
export const PRICE_SOURCES = {
  dynamoDbOnDemand: 'https://aws.amazon.com/dynamodb/pricing/on-demand/',
  dynamoDbProvisioned: 'https://aws.amazon.com/dynamodb/pricing/provisioned/',
  sqs: 'https://aws.amazon.com/sqs/pricing/',
  lambda: 'https://aws.amazon.com/lambda/pricing/',
  eventBridge: 'https://aws.amazon.com/eventbridge/pricing/',
  cloudWatchLogs: 'https://aws.amazon.com/cloudwatch/pricing/',
  kms: 'https://aws.amazon.com/kms/pricing/',
  xRay: 'https://aws.amazon.com/xray/pricing/',
} as const;

/** Prices in USD. */
export const PRICES = {
  dynamoDb: {
    /** On-demand, per write request unit (a standard write of up to 1 KB): $0.625 per million. */
    writeRequestUnit: 0.625 / 1e6,
    /** On-demand, per read request unit (a strongly consistent read of up to 4 KB; eventually consistent: half): $0.125 per million. */
    readRequestUnit: 0.125 / 1e6,
    /** Provisioned, per write capacity unit and hour. */
    wcuHour: 0.00065,
    /** Provisioned, per read capacity unit and hour. */
    rcuHour: 0.00013,
  },
  /** Standard queue, per request (each 64 KiB chunk of a request's payload is a request): $0.40 per million. */
  sqsRequest: 0.4 / 1e6,
  lambda: {
    /** Per invocation: $0.20 per million. */
    request: 0.2 / 1e6,
    /** Per GB-second of duration (the first 7.5 billion GB-s a month for Arm, 6 billion for x86). */
    gbSecond: { arm64: 0.0000133334, x86_64: 0.0000166667 },
  },
  /** Custom events put on an event bus, per 64 KiB chunk: $1.00 per million. */
  eventBridgeEvent: 1 / 1e6,
  /** CloudWatch Logs ingestion (Standard log class), per GB. */
  logsIngestedGb: 0.5,
  /** KMS, per API request: $0.03 per 10,000. */
  kmsRequest: 0.03 / 10_000,
  /** X-Ray, per trace recorded: $5.00 per million. */
  xRayTrace: 5 / 1e6,
} as const;
