/**
 * The benchmark's cost model (bench/cost.ts): its arithmetic on a known phase, so the figures the
 * bench prints (and docs/scaling.md quotes) follow from the counts and bench/prices.ts alone.
 */
import { describe, expect, it } from 'vitest';
import {
  AWS_DYNAMODB_ROUND_TRIP_MS,
  costModel,
  estimatedAwsMs,
  LOG_EVENT_OVERHEAD_BYTES,
  PLATFORM_LOG_BYTES_PER_INVOCATION,
  payloadOwnUnits,
  provisionedUnitPrice,
  receiverLatencyCost,
  X_RAY_SAMPLED_FRACTION,
  type PhaseCounts,
} from '../../bench/cost';
import type { FunctionSettings } from '../../bench/deployed';
import { PRICES } from '../../bench/prices';
import type { UsageSnapshot } from '../../bench/usage';

const FUNCTIONS: Record<string, FunctionSettings> = {
  publisher: { memoryMb: 256, architecture: 'arm64' },
  dispatcher: { memoryMb: 512, architecture: 'arm64' },
};

const fn = (over: Partial<UsageSnapshot['functions'][string]>): UsageSnapshot['functions'][string] => ({
  invocations: 0,
  totalMs: 0,
  billedMs: 0,
  records: 0,
  dynamoBusyMs: 0,
  dynamoReads: 0,
  dynamoWrites: 0,
  dynamoCallMs: 0,
  sqsSends: 0,
  ...over,
});

/** 1,000 deliveries: one publisher invocation each, 40 dispatcher batches of 25. */
const COUNTS: PhaseCounts = {
  deliveries: 1000,
  rcu: 2000,
  wcu: 6000,
  usage: {
    functions: {
      // 30 ms each, 20 of them waiting on DynamoDB Local for 2 reads and a write of 100 ms each (300 ms of calls): rescaled, 20 × 20/300.
      publisher: fn({
        invocations: 1000,
        totalMs: 30_000,
        billedMs: 30_000,
        dynamoBusyMs: 20_000,
        dynamoReads: 2000,
        dynamoWrites: 1000,
        dynamoCallMs: 300_000,
        sqsSends: 1000,
      }),
      dispatcher: fn({ invocations: 40, totalMs: 4000, billedMs: 4000, records: 1000 }),
    },
    sqs: { sendRequests: 1000, sendChunks: 1000, messagesSent: 1000, receiveRequests: 120, deleteRequests: 120, visibilityRequests: 0 },
    eventBridge: { putEventsEntries: 1000, billedEvents: 1000 },
    logs: { bytes: { publisher: 500_000, dispatcher: 100_000 }, lines: { publisher: 2000, dispatcher: 80 } },
    kms: { decrypt: 1, generate: 0 },
  },
};

describe('the cost model', () => {
  const model = costModel(COUNTS, FUNCTIONS, { targetUtilizationPercent: 70 });
  const row = (prefix: string) => model.rows.find((r) => r.component.startsWith(prefix))!;

  it('prices DynamoDB units on demand per million', () => {
    expect(row('DynamoDB writes').perDelivery).toBe(6);
    expect(row('DynamoDB writes').perMillion).toBeCloseTo(6 * 0.625, 9);
    expect(row('DynamoDB reads').perMillion).toBeCloseTo(2 * 0.125, 9);
  });

  it('counts SQS requests in chunks: sends, receives, deletes and visibility changes', () => {
    expect(row('SQS').perDelivery).toBeCloseTo((1000 + 120 + 120) / 1000, 9);
    expect(row('SQS').perMillion).toBeCloseTo(1.24 * 0.4, 9);
  });

  it("bills Lambda requests and GB-seconds at each function's memory and architecture", () => {
    expect(row('Lambda requests').perDelivery).toBeCloseTo(1.04, 9);
    const measured = row('Lambda duration (as measured');
    expect(measured.inTotal).toBe(false);
    expect(measured.perDelivery).toBeCloseTo((30 * 0.25 + 4 * 0.5) / 1000, 9);
    // The estimate: 10 ms of code + 20 ms of waits × (2×5 + 10) / 300 + one 15 ms send + 0.5 ms rounding, per publisher invocation.
    const publisherMs = estimatedAwsMs(COUNTS.usage.functions.publisher!) / 1000;
    expect(publisherMs).toBeCloseTo(
      10 + (20 * (2 * AWS_DYNAMODB_ROUND_TRIP_MS.read + AWS_DYNAMODB_ROUND_TRIP_MS.write)) / 300 + 15 + 0.5,
      6,
    );
    expect(row('Lambda duration (AWS').perMillion).toBeCloseTo(
      ((publisherMs / 1000) * 0.25 * 1000 + (estimatedAwsMs(COUNTS.usage.functions.dispatcher!) / 1000) * 0.5) *
        PRICES.lambda.gbSecond.arm64 *
        1000,
      6,
    );
  });

  it("adds EventBridge events, log bytes (with the per-event overhead and Lambda's own lines), KMS and X-Ray", () => {
    expect(row('EventBridge').perMillion).toBeCloseTo(1, 9);
    const bytes = (600_000 + 2080 * LOG_EVENT_OVERHEAD_BYTES + 1040 * PLATFORM_LOG_BYTES_PER_INVOCATION) / 1000;
    expect(row('CloudWatch Logs').perDelivery).toBeCloseTo(bytes, 6);
    expect(row('CloudWatch Logs').perMillion).toBeCloseTo((bytes * 1e6 * 0.5) / 1024 ** 3, 9);
    expect(row('KMS').perMillion).toBeCloseTo(0.001 * 3, 9);
    expect(row('X-Ray').perMillion).toBeCloseTo(1.04 * X_RAY_SAMPLED_FRACTION * 5, 9);
  });

  it('totals what is in the total, and prices the same units provisioned at the target utilisation', () => {
    expect(model.onDemandTotal).toBeCloseTo(
      model.rows.filter((r) => r.inTotal !== false).reduce((n, r) => n + r.perMillion, 0),
      9,
    );
    // A WCU-hour serves 3,600 writes a second's worth; at 70 % utilisation 2,520 of them are used.
    expect(provisionedUnitPrice(0.00065, 0.7)).toBeCloseTo(0.00065 / 2520, 12);
    expect(model.provisioned.dynamoDb).toBeCloseTo(6e6 * (0.00065 / 2520) + 2e6 * (0.00013 / 2520), 9);
    expect(model.provisioned.total).toBeCloseTo(model.onDemandTotal - 3.75 - 0.25 + model.provisioned.dynamoDb, 9);
  });

  it('adds one receiver latency of dispatcher time per invocation', () => {
    // 40 invocations × 0.2 s × 0.5 GB per 1,000 deliveries.
    expect(receiverLatencyCost(200, COUNTS, FUNCTIONS)).toBeCloseTo(((40 * 0.2 * 0.5) / 1000) * PRICES.lambda.gbSecond.arm64 * 1e6, 9);
  });

  it('refuses to price a function it has no deployed settings for', () => {
    expect(() =>
      costModel({ ...COUNTS, usage: { ...COUNTS.usage, functions: { mystery: fn({ invocations: 1 }) } } }, FUNCTIONS, {
        targetUtilizationPercent: 70,
      }),
    ).toThrow(/mystery/);
  });
});

describe("the payload's own units", () => {
  it('are one write per KiB and one strongly consistent read per 4 KiB, each rounded up', () => {
    expect(payloadOwnUnits(1024)).toEqual({ wcu: 1, rcu: 1 });
    expect(payloadOwnUnits(16 * 1024)).toEqual({ wcu: 16, rcu: 4 });
    expect(payloadOwnUnits(64 * 1024)).toEqual({ wcu: 64, rcu: 16 });
    expect(payloadOwnUnits(64 * 1024 + 1)).toEqual({ wcu: 65, rcu: 17 });
  });
});
