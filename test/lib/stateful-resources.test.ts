/**
 * The stateful resources of the stack, pinned: the table, its key schema and
 * every index, the six queues (both delivery lanes, the delivery dead letters,
 * the publish failures, the recovery jobs and their dead letters, the outbox
 * relay's failures), the outbox table with its stream, and the KMS
 * key that seals the signing secrets keep the logical ids and the
 * replacement-triggering properties they were first deployed with.
 * CloudFormation replaces a resource whose logical id changes (a moved or
 * renamed construct) or whose key schema, name or FIFO setting changes: for
 * the table that loses every endpoint, delivery and token, for the key every
 * sealed secret (docs/architecture.md#secrets), for a queue the messages in
 * flight. A refactor that fails here needs a migration plan, not
 * a new expected value. The values are literals on purpose: they must not
 * follow lambdas/store/table-schema.ts if that changes.
 *
 * A new queue or index may be added (the index as its own deploy: one GSI
 * change per update); the ones below must stay as they are.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebhooksApp } from '../../lib/app';
import { buildTestApp } from './synth';
import { resourcesOf, type Resource } from './template';

/** Logical id of the service table. */
const TABLE_ID = 'DataTableFDBAD0F2';
/** Logical id of the KMS key that seals signing secrets. */
const SECRETS_KEY_ID = 'SecretsKey9BF95D68';
/** Logical ids of the queues deployed so far, by what they hold. */
const QUEUE_IDS = {
  deliveries: 'DeliveryDeliveryQueueC61F3BC7',
  slowLaneDeliveries: 'DeliverySlowDeliveryQueue220B992E',
  deliveryDeadLetters: 'DeliveryDeadLetterQueue7D230F16',
  publishFailures: 'DeliveryPublishFailures32CC9E76',
  recoveryJobs: 'RecoveryJobQueue637B0139',
  recoveryDeadLetters: 'RecoveryDeadLetterQueueB1226BF0',
  outboxRelayFailures: 'OutboxRelayFailures4C4A023F',
} as const;
/** Logical id of the outbox table (docs/architecture.md#outbox): its stream feeds the relay. */
const OUTBOX_TABLE_ID = 'OutboxTableF17138FA';

/** The table's primary key. */
const TABLE_KEY_SCHEMA = [
  { AttributeName: 'pk', KeyType: 'HASH' },
  { AttributeName: 'sk', KeyType: 'RANGE' },
];

/** Every global secondary index deployed so far: name, keys, projection. */
const INDEXES = [
  {
    IndexName: 'gsi1',
    KeySchema: [
      { AttributeName: 'gsi1pk', KeyType: 'HASH' },
      { AttributeName: 'gsi1sk', KeyType: 'RANGE' },
    ],
    Projection: { ProjectionType: 'ALL' },
  },
  {
    IndexName: 'gsi2',
    KeySchema: [
      { AttributeName: 'gsi2pk', KeyType: 'HASH' },
      { AttributeName: 'gsi2sk', KeyType: 'RANGE' },
    ],
    Projection: { ProjectionType: 'KEYS_ONLY' },
  },
  {
    IndexName: 'gsi3',
    KeySchema: [
      { AttributeName: 'gsi3pk', KeyType: 'HASH' },
      { AttributeName: 'gsi3sk', KeyType: 'RANGE' },
    ],
    Projection: { ProjectionType: 'KEYS_ONLY' },
  },
  {
    IndexName: 'deliveryLog',
    KeySchema: [
      { AttributeName: 'logpk', KeyType: 'HASH' },
      { AttributeName: 'logsk', KeyType: 'RANGE' },
    ],
    Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['eventType'] },
  },
  {
    IndexName: 'eventDeliveries',
    KeySchema: [
      { AttributeName: 'evtpk', KeyType: 'HASH' },
      { AttributeName: 'evtsk', KeyType: 'RANGE' },
    ],
    Projection: { ProjectionType: 'KEYS_ONLY' },
  },
];

/** Every key attribute of the table and the indexes above, all strings. */
const KEY_ATTRIBUTES = ['pk', 'sk', 'gsi1pk', 'gsi1sk', 'gsi2pk', 'gsi2sk', 'gsi3pk', 'gsi3sk', 'logpk', 'logsk', 'evtpk', 'evtsk'];

let built: WebhooksApp;
let resources: Record<string, Resource>;

beforeAll(() => {
  // The app exactly as `cdk synth` builds it: logical ids come from its construct paths.
  built = buildTestApp();
  resources = resourcesOf(Template.fromStack(built.stack));
}, 120_000);

afterAll(() => {
  if (built) rmSync(built.app.outdir, { recursive: true, force: true });
});

/** The resource of a pinned logical id, asserting its type. */
function pinned(id: string, type: string): Resource {
  const resource = resources[id];
  expect(resource, `${type} ${id} is missing: a renamed or moved construct would replace it`).toBeDefined();
  expect(resource!.Type).toBe(type);
  return resource!;
}

describe('the table', () => {
  it('keeps its logical id, is retained, and has no fixed name (a rename would replace it)', () => {
    const table = pinned(TABLE_ID, 'AWS::DynamoDB::Table');
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.UpdateReplacePolicy).toBe('Retain');
    expect(table.Properties.TableName).toBeUndefined();
  });

  it('keeps its key schema', () => {
    expect(pinned(TABLE_ID, 'AWS::DynamoDB::Table').Properties.KeySchema).toEqual(TABLE_KEY_SCHEMA);
  });

  it('keeps every index with its name, keys and projection (new ones may follow)', () => {
    const indexes = pinned(TABLE_ID, 'AWS::DynamoDB::Table').Properties.GlobalSecondaryIndexes as { IndexName: string }[];
    for (const expected of INDEXES) {
      expect(
        indexes.find((i) => i.IndexName === expected.IndexName),
        `index ${expected.IndexName}`,
      ).toEqual(expected);
    }
  });

  it('keeps every key attribute a string', () => {
    const definitions = pinned(TABLE_ID, 'AWS::DynamoDB::Table').Properties.AttributeDefinitions as {
      AttributeName: string;
      AttributeType: string;
    }[];
    for (const name of KEY_ATTRIBUTES) {
      expect(
        definitions.find((d) => d.AttributeName === name),
        `attribute ${name}`,
      ).toEqual({ AttributeName: name, AttributeType: 'S' });
    }
  });

  it('keeps point-in-time recovery on, so the runbook can restore it', () => {
    expect(pinned(TABLE_ID, 'AWS::DynamoDB::Table').Properties.PointInTimeRecoverySpecification).toEqual({
      PointInTimeRecoveryEnabled: true,
    });
  });
});

describe('the outbox table', () => {
  it('keeps its logical id, key, stream of new images and TTL, is retained, and has no fixed name', () => {
    // A replaced outbox loses the events not yet relayed, and its new stream starts the relay afresh.
    const table = pinned(OUTBOX_TABLE_ID, 'AWS::DynamoDB::Table');
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.UpdateReplacePolicy).toBe('Retain');
    expect(table.Properties.TableName).toBeUndefined();
    expect(table.Properties.KeySchema).toEqual([{ AttributeName: 'pk', KeyType: 'HASH' }]);
    expect(table.Properties.StreamSpecification).toEqual({ StreamViewType: 'NEW_IMAGE' });
    expect(table.Properties.TimeToLiveSpecification).toEqual({ AttributeName: 'expiresAtEpoch', Enabled: true });
  });
});

describe('the KMS key of the signing secrets', () => {
  it('keeps its logical id, is retained, and stays a symmetric encryption key', () => {
    const key = pinned(SECRETS_KEY_ID, 'AWS::KMS::Key');
    expect(key.DeletionPolicy).toBe('Retain');
    expect(key.UpdateReplacePolicy).toBe('Retain');
    expect(key.Properties.KeySpec ?? 'SYMMETRIC_DEFAULT').toBe('SYMMETRIC_DEFAULT');
    expect(key.Properties.KeyUsage ?? 'ENCRYPT_DECRYPT').toBe('ENCRYPT_DECRYPT');
  });
});

describe('the queues', () => {
  it.each(Object.entries(QUEUE_IDS))('%s keeps its logical id, standard (not FIFO), with no fixed name', (_what, id) => {
    const queue = pinned(id, 'AWS::SQS::Queue');
    expect(queue.Properties.QueueName).toBeUndefined();
    expect(queue.Properties.FifoQueue ?? false).toBe(false);
  });
});
