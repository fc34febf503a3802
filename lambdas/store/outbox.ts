/**
 * The outbox of the service's own domain events (docs/architecture.md#outbox): an event is an item
 * of the outbox table, written in the same transaction as the change it reports (with its audit
 * event, lambdas/store/audit.ts), and relayed to the bus from the table's stream
 * (lambdas/pipeline/outbox-relay.ts). Nothing is put on the bus in the request path, so a change
 * that commits always has its event, whatever happens to the function after the commit.
 */
import { OUTBOX } from '../contract/deployment';
import type { TableContext } from './client';
import type { TransactItem } from './audit';

declare module './client' {
  interface TableContext {
    /**
     * The outbox table a change's domain event is written to, beside the table (docs/architecture.md#outbox);
     * unset, changes write no event (a table binding of tests and tools that relay nothing).
     */
    readonly outboxTableName?: string;
  }
}

/** A domain event a change reports: its type and payload (a catalogue type of the service's own). */
export interface OutboxEventInput {
  readonly type: string;
  readonly payload: unknown;
}

/** A domain event as the outbox keeps it and the relay puts it on the bus. */
export interface OutboxEvent {
  /** The event's id: the id of its change's audit event; subscribers' delivery ids derive from it. */
  readonly outboxId: string;
  readonly workspace: string;
  readonly type: string;
  /** The payload as JSON text, relayed as it was written. */
  readonly payloadJson: string;
  /** When the change was written (ISO 8601): the event's time on the bus. */
  readonly createdAt: string;
}

/**
 * The transaction item that writes `event` as outbox item `outboxId`, or none where the table
 * binding has no outbox. Put-if-absent: the id is its change's, written once.
 */
export function outboxPut(
  table: TableContext,
  slug: string,
  outboxId: string,
  event: OutboxEventInput,
  now: Date,
): TransactItem | undefined {
  if (!table.outboxTableName) return undefined;
  return {
    Put: {
      TableName: table.outboxTableName,
      Item: {
        [OUTBOX.table.partitionKey]: outboxId,
        workspace: slug,
        type: event.type,
        payload: JSON.stringify(event.payload ?? null),
        createdAt: now.toISOString(),
        [OUTBOX.table.ttlAttribute]: Math.floor(now.getTime() / 1000) + OUTBOX.retentionHours * 3600,
      },
      ConditionExpression: 'attribute_not_exists(#pk)',
      ExpressionAttributeNames: { '#pk': OUTBOX.table.partitionKey },
    },
  };
}

/** A stream image's attribute (marshalled, as DynamoDB Streams delivers it): its string value, if it has one. */
type StreamImage = Readonly<Record<string, { readonly S?: string } | undefined>>;

/**
 * The outbox event of a stream record's new image, or null when the image is not an outbox
 * item's (a missing or non-string attribute): such a record cannot become an event by retrying.
 */
export function outboxEventFromImage(image: StreamImage | undefined): OutboxEvent | null {
  const s = (name: string) => image?.[name]?.S;
  const outboxId = s(OUTBOX.table.partitionKey);
  const workspace = s('workspace');
  const type = s('type');
  const payloadJson = s('payload');
  const createdAt = s('createdAt');
  if (!outboxId || !workspace || !type || payloadJson === undefined || !createdAt) return null;
  return { outboxId, workspace, type, payloadJson, createdAt };
}
