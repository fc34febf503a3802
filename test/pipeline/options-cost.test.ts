/**
 * What endpoint options cost in DynamoDB (docs/architecture.md#rate-budget,
 * docs/architecture.md#subscriptions), measured on DynamoDB Local with ReturnConsumedCapacity and
 * printed: the rate budget adds one write per batch and rate-limited endpoint, never one per
 * delivery; an event no filter matches costs the publisher one Query of the subscription items
 * and no write, as an event of a type nobody subscribes to does.
 */
import { randomUUID } from 'node:crypto';
import type { SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createHttpSender } from '../../lambdas/pipeline/http-sender';
import { publishEvent } from '../../lambdas/pipeline/publisher';
import { sqsBatchHandler } from '../../lambdas/pipeline/sqs-batch';
import { dispatcherBatch } from '../../lambdas/pipeline/sqs-settlement';
import { deliveryMessageBody } from '../../lambdas/queue/delivery-queue';
import { createTableContext, type TableContext } from '../../lambdas/store/client';
import { lambdaContext } from '../../bin/local/lambda-loader';
import { capturingQueue, seedEndpoint, testCatalogue, testSealer } from '../helpers/pipeline';
import { scriptedReceiver } from '../helpers/scripted-receiver';
import { freshTable } from '../helpers/table';

let table: Awaited<ReturnType<typeof freshTable>>;
beforeAll(async () => {
  table = await freshTable();
});
afterAll(async () => {
  await table?.drop();
});

/** A call of the table: its command, the capacity it consumed, the partition of its item when it names one. */
interface Call {
  readonly command: string;
  readonly units: number;
  readonly pk?: string;
}

/** A client on the same table counting every call and its consumed capacity. */
function countingTable(): TableContext & { calls: () => Call[]; reset: () => void } {
  const counted = createTableContext({ tableName: table.tableName, endpoint: inject('dynamoDbEndpoint') });
  let calls: Call[] = [];
  counted.doc.middlewareStack.add(
    (next, context) => async (args) => {
      (args.input as Record<string, unknown>).ReturnConsumedCapacity = 'TOTAL';
      const out = await next(args);
      const consumed = (out.output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] }).ConsumedCapacity;
      const pk = (args.input as { Key?: { pk?: unknown } }).Key?.pk;
      calls.push({
        command: context.commandName ?? '?',
        units: [consumed ?? []].flat().reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0),
        ...(typeof pk === 'string' ? { pk } : {}),
      });
      return out;
    },
    { step: 'initialize', name: 'countCalls' },
  );
  return Object.assign(counted, { calls: () => calls, reset: () => void (calls = []) });
}

const WRITES = /^(PutItem|UpdateItem|DeleteItem|TransactWriteItems|BatchWriteItem)Command$/;
const writeUnits = (calls: Call[]) => calls.filter((c) => WRITES.test(c.command)).reduce((s, c) => s + c.units, 0);
const writeCalls = (calls: Call[]) => calls.filter((c) => WRITES.test(c.command)).length;

function sqsRecord(body: string): SQSRecord {
  return {
    messageId: randomUUID(),
    receiptHandle: randomUUID(),
    body,
    attributes: { ApproximateReceiveCount: '1', SentTimestamp: '0', SenderId: 'x', ApproximateFirstReceiveTimestamp: '0' },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:local:0:deliveries',
    awsRegion: 'local',
  };
}

describe('the cost of endpoint options', () => {
  it('the rate budget: one write per batch and endpoint, whatever the batch size (printed)', { timeout: 120_000 }, async () => {
    const receiver = await scriptedReceiver((_req, res) => res.writeHead(204).end());
    const rows: string[] = [];
    try {
      for (const rate of [undefined, 1000] as const) {
        const workspace = `cost-rate-${rate ?? 'none'}`;
        const endpoint = await seedEndpoint(table, { workspace, url: receiver.url, options: rate ? { rateLimitPerSecond: rate } : {} });
        const queue = capturingQueue();
        for (let i = 0; i < 25; i++)
          await publishEvent(
            { table, queue, eventTypes: testCatalogue, now: () => new Date() },
            { workspace, type: 'order.shipped', payload: { orderId: `o-${i}` } },
          );
        const counted = countingTable();
        const lanes = { ownLane: capturingQueue(), slowLane: capturingQueue(), deadLetters: capturingQueue() };
        const handler = sqsBatchHandler(
          { table: () => counted, metrics: () => ({ add: () => undefined, flush: () => undefined }), log: console },
          dispatcherBatch('fast', {
            queues: { ...lanes, delayer: { delay: async () => undefined } },
            log: console,
            table: () => counted,
            dispatch: () => ({
              table: counted,
              now: () => new Date(),
              sender: createHttpSender(),
              resolve: async () => [{ address: '127.0.0.1', family: 4 }],
              urlPolicy: { allowLoopback: true },
              secrets: testSealer,
            }),
          }),
        );
        const out = await handler({ Records: queue.sent.map((m) => sqsRecord(deliveryMessageBody(m))) }, lambdaContext('dispatcher', 'x'));
        // A record whose POST would start past its second's end comes back (DynamoDB Local is slow): it then wrote nothing.
        const sent = 25 - out.batchItemFailures.length;
        const calls = counted.calls();
        const rateWrites = calls.filter((c) => c.pk?.startsWith('RL#delivery#')).length;
        expect(rateWrites).toBe(rate ? 1 : 0);
        rows.push(
          `${rate ? `rateLimitPerSecond ${rate}` : 'no rate'}: ${writeCalls(calls)} write calls, ${writeUnits(calls)} WCU for ${sent} deliveries (${(writeUnits(calls) / sent).toFixed(2)} WCU a delivery; ${rateWrites} of them the rate budget's)`,
        );
        expect(endpoint.endpointId).toBeTruthy();
        counted.doc.destroy();
      }
      console.info(`Dispatcher writes of one batch of 25 to one endpoint (DynamoDB Local):\n${rows.join('\n')}`);
    } finally {
      await receiver.stop();
    }
  });

  it('an event no filter matches: one Query, no write, as for a type without subscribers (printed)', async () => {
    const testPayload = { message: 'm', sentAt: new Date().toISOString(), endpointId: 'whe_x' };
    const workspace = 'cost-filter';
    for (let i = 0; i < 10; i++)
      await seedEndpoint(table, {
        workspace,
        url: `https://h${i}.example.com`,
        eventTypes: ['order.shipped'],
        options: { filter: { 'order.region': { $in: ['eu-west', 'eu-central'] }, 'order.total': { $gte: 100 } } },
      });
    const counted = countingTable();
    const deps = { table: counted, queue: capturingQueue(), eventTypes: testCatalogue, now: () => new Date() };
    await publishEvent(deps, { workspace, type: 'webhook.test_event', payload: testPayload });
    counted.reset();
    const unmatched = await publishEvent(deps, { workspace, type: 'order.shipped', payload: { orderId: 'o-1' } });
    const filtered = counted.calls();
    counted.reset();
    await publishEvent(deps, { workspace, type: 'webhook.test_event', payload: testPayload });
    const nobody = counted.calls();
    expect(unmatched.deliveryIds).toEqual([]);
    expect(filtered.map((c) => c.command)).toEqual(['QueryCommand']);
    expect(nobody.map((c) => c.command)).toEqual(['QueryCommand']);
    expect(writeCalls(filtered)).toBe(0);
    console.info(
      `Publishing to 10 filtered subscribers, no filter matching: ${filtered.map((c) => `${c.command} ${c.units} RCU`).join(', ')}; ` +
        `an event type without subscribers: ${nobody.map((c) => `${c.command} ${c.units} RCU`).join(', ')}`,
    );
    counted.doc.destroy();
  });
});
