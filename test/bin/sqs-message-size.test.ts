/**
 * SQS's message size limit on the local queues (docs/behaviour.md#limits): SendMessage and
 * SendMessageBatch refuse exactly where SQS does, counted as SQS counts, and a sender meets the
 * same failure locally as with the SQS adapter on AWS.
 */
import { randomUUID } from 'node:crypto';
import { SendMessageBatchCommand, SQSClient, SQSServiceException } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { createTableContext, type TableContext } from '#lambdas/composition/tools';
import { SQS_BATCH_ENTRIES, SQS_MESSAGE_BYTES, sqsMessageBytes } from '../../lambdas/contract/aws-limits';
import { deliveryMessageBody, type DeliveryMessage } from '../../lambdas/queue/delivery-queue';
import { sqsDeliveryQueue } from '../../lambdas/queue/sqs-delivery-queue';
import { dynamoDbQueueStore, ensureQueueTable } from '../../bin/local/durable-queue-store';
import { InProcessQueue, SqsRefusal } from '../../bin/local/in-process-queue';

/** A delivery message whose body is exactly `bytes` long (the id is only filler here). */
const messageOf = (bytes: number): DeliveryMessage => {
  const deliveryId = 'x'.repeat(bytes - deliveryMessageBody({ deliveryId: '' }).length);
  expect(sqsMessageBytes(deliveryMessageBody({ deliveryId }))).toBe(bytes);
  return { deliveryId };
};

describe('how SQS counts a message', () => {
  it('the body in UTF-8 bytes, plus each attribute’s name, data type and value', () => {
    expect(sqsMessageBytes('é€')).toBe(2 + 3);
    expect(
      sqsMessageBytes('{}', {
        traceparent: { DataType: 'String', StringValue: 'abc' },
        blob: { DataType: 'Binary', BinaryValue: new Uint8Array(7) },
      }),
    ).toBe(2 + (11 + 6 + 3) + (4 + 6 + 7));
  });
});

describe('the local queue, kept in DynamoDB Local', () => {
  let table: TableContext;
  beforeAll(async () => {
    table = createTableContext({ tableName: 'unused', endpoint: inject('dynamoDbEndpoint') });
    await ensureQueueTable(table.doc);
  });
  afterAll(() => table.doc.destroy());

  it('SendMessage: a body of exactly 256 KiB is accepted and survives a restart; one byte more is refused and not kept', async () => {
    const namespace = `ns-${randomUUID()}`;
    const q = new InProcessQueue({ name: 'q', store: dynamoDbQueueStore(table.doc, namespace) });
    const fits = 'a'.repeat(SQS_MESSAGE_BYTES);
    await q.sendBody(fits);
    const refused = q.sendBody('a'.repeat(SQS_MESSAGE_BYTES + 1));
    await expect(refused).rejects.toBeInstanceOf(SqsRefusal);
    await expect(refused).rejects.toMatchObject({ name: 'InvalidParameterValue', message: /shorter than 262144 bytes/ });
    // Multi-byte text counts in bytes: 131,073 two-byte characters are one byte over.
    await expect(q.sendBody('é'.repeat(SQS_MESSAGE_BYTES / 2 + 1))).rejects.toMatchObject({ name: 'InvalidParameterValue' });
    expect(q.depth).toBe(1);
    const restarted = new InProcessQueue({ name: 'q', store: dynamoDbQueueStore(table.doc, namespace) });
    expect(await restarted.restore()).toBe(1);
    const received = new Promise<string>((resolve) =>
      restarted.consume(async (e) => (resolve(e.Records[0]!.body), { batchItemFailures: [] })),
    );
    expect(await received).toBe(fits);
    await restarted.stop();
  });

  it('SendMessageBatch: a batch totalling 256 KiB is accepted, one byte more is refused whole; the batches before it stay sent', async () => {
    const q = new InProcessQueue({ name: 'q', store: dynamoDbQueueStore(table.doc, `ns-${randomUUID()}`) });
    const tenth = SQS_MESSAGE_BYTES / SQS_BATCH_ENTRIES;
    // One full batch at the limit: nine of floor(limit / 10) bytes, the tenth takes the rest.
    const atLimit = [
      ...Array.from({ length: SQS_BATCH_ENTRIES - 1 }, () => messageOf(Math.floor(tenth))),
      messageOf(SQS_MESSAGE_BYTES - (SQS_BATCH_ENTRIES - 1) * Math.floor(tenth)),
    ];
    await q.send(atLimit);
    expect(q.depth).toBe(SQS_BATCH_ENTRIES);

    // Two batches: the first is small, the second one byte over in total (no single message is).
    const overByOne = [...atLimit.slice(0, -1), messageOf(SQS_MESSAGE_BYTES - (SQS_BATCH_ENTRIES - 1) * Math.floor(tenth) + 1)];
    const small = Array.from({ length: SQS_BATCH_ENTRIES }, (_, i) => ({ deliveryId: `whd_${i}` }));
    await expect(q.send([...small, ...overByOne])).rejects.toMatchObject({ name: 'BatchRequestTooLong' });
    expect(q.depth).toBe(2 * SQS_BATCH_ENTRIES);
  });
});

describe('on AWS, the SQS adapter fails the same way', () => {
  const sqs = mockClient(SQSClient);
  afterAll(() => sqs.restore());

  it('a refused SendMessageBatch rejects the send after the batches before it, as the local queue does', async () => {
    sqs.reset();
    sqs
      .on(SendMessageBatchCommand)
      .resolvesOnce({ Successful: [], Failed: [] })
      .rejects(
        new SQSServiceException({
          name: 'BatchRequestTooLong',
          $fault: 'client',
          $metadata: { httpStatusCode: 400 },
          message: 'Batch requests cannot be longer than 262144 bytes',
        }),
      );
    const small = Array.from({ length: SQS_BATCH_ENTRIES + 1 }, (_, i) => ({ deliveryId: `whd_${i}` }));
    await expect(sqsDeliveryQueue(new SQSClient({}), 'q').send(small)).rejects.toMatchObject({ name: 'BatchRequestTooLong' });
    expect(sqs.commandCalls(SendMessageBatchCommand)).toHaveLength(2);
  });
});
