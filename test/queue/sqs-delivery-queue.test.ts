/** The SQS adapters, against aws-sdk-client-mock (SQS cannot run here). */
import { ChangeMessageVisibilityCommand, SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { sqsDeliveryQueue, sqsMessageDelayer } from '../../lambdas/queue/sqs-delivery-queue';
import { parseDeliveryMessage } from '../../lambdas/queue/delivery-queue';

const sqs = mockClient(SQSClient);
beforeEach(() => sqs.reset());
const id = (i: number) =>
  `whd_01JD2Y9P0R6S8T1V3W5X7Y9Z${String(i)
    .padStart(2, '0')
    .replace(/[ILOU]/g, 'A')}`;

describe('sqsDeliveryQueue', () => {
  it('sends in batches of 10 with id-only bodies', async () => {
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    await sqsDeliveryQueue(new SQSClient({}), 'https://sqs/q').send(Array.from({ length: 23 }, (_, i) => ({ deliveryId: id(i) })));
    const calls = sqs.commandCalls(SendMessageBatchCommand);
    expect(calls.map((c) => c.args[0].input.Entries!.length)).toEqual([10, 10, 3]);
    expect(JSON.parse(calls[0]!.args[0].input.Entries![0]!.MessageBody!)).toEqual({ deliveryId: id(0) });
  });

  it('retries failed entries, then reports what SQS kept refusing', async () => {
    sqs
      .on(SendMessageBatchCommand)
      .resolvesOnce({ Failed: [{ Id: '1', SenderFault: false, Code: 'x' }] })
      .resolves({ Failed: [] });
    await sqsDeliveryQueue(new SQSClient({}), 'q').send([{ deliveryId: id(1) }, { deliveryId: id(2) }]);
    expect(sqs.commandCalls(SendMessageBatchCommand)[1]!.args[0].input.Entries!.map((e) => e.Id)).toEqual(['1']);
    sqs.reset();
    sqs.on(SendMessageBatchCommand).resolves({ Failed: [{ Id: '0', SenderFault: false, Code: 'x' }] });
    await expect(sqsDeliveryQueue(new SQSClient({}), 'q').send([{ deliveryId: id(1) }])).rejects.toThrow(/refused 1/);
  });
});

describe('sqsMessageDelayer', () => {
  it('sets the visibility timeout of the received message to the backoff', async () => {
    sqs.on(ChangeMessageVisibilityCommand).resolves({});
    await sqsMessageDelayer(new SQSClient({}), 'q').delay('rh-1', 90);
    expect(sqs.commandCalls(ChangeMessageVisibilityCommand)[0]!.args[0].input).toEqual({
      QueueUrl: 'q',
      ReceiptHandle: 'rh-1',
      VisibilityTimeout: 90,
    });
  });
});

describe('parseDeliveryMessage', () => {
  it('accepts only delivery messages', () => {
    expect(parseDeliveryMessage(JSON.stringify({ deliveryId: id(3) }))).toEqual({ deliveryId: id(3) });
    for (const body of ['', 'x', '{}', '{"deliveryId":"nope"}', 'null']) expect(parseDeliveryMessage(body)).toBeNull();
  });
});
