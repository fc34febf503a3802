/**
 * Audit events: written in the same transaction as the change they record, with the change's
 * domain event when it reports one (its outbox item, lambdas/store/outbox.ts).
 */
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import type { AuditActor, AuditEvent } from '../contract/schemas';
import { idPattern } from '../contract/ids';
import type { Page } from '../contract/pagination';
import { newId } from '../domain/ids';
import type { TableContext } from './client';
import { outboxPut, type OutboxEventInput } from './outbox';
import { queryPage } from './pages';
import { ItemShapeError, oneOf, optMap, optStr, str, type Item } from './table-io';
import { keys, SK_PREFIX, TABLE } from './table-schema';

/** What an audit event says. */
export interface AuditInput {
  readonly action: string;
  /**
   * Who made the change (docs/behaviour.md#audit-events): the actor with its name as it is now, or
   * its id alone (a token id, or `system`) when no name is known.
   */
  readonly actor: AuditActor | string;
  readonly targetId: string;
  /** Never secrets. */
  readonly detail?: Record<string, unknown>;
  /**
   * The domain event the change reports (docs/architecture.md#outbox): written to the outbox in the
   * same transaction, under the audit event's id, and relayed to the bus from there.
   */
  readonly event?: OutboxEventInput;
}

/** The service itself, as the actor of what it decides alone (an auto-disable, a recovery that cannot go on). */
const SYSTEM = 'system';

/** The kinds of actor the service writes today. */
const WRITTEN_ACTOR_KINDS = ['token', 'portal_session', 'staff', 'system'] as const satisfies readonly AuditActor['kind'][];

/** An actor as items keep it: given by its id alone, `system` or a token id (its name unknown); else as it is. */
export function auditActor(actor: AuditActor | string): AuditActor {
  if (typeof actor !== 'string') return actor;
  return actor === SYSTEM ? { kind: 'system', id: actor } : { kind: 'token', id: actor };
}

/**
 * The actor an item keeps in its `actor` map (an audit entry, a recovery job): kind, id, the name
 * when known, and a staff member's email.
 */
export function storedActor(item: Item): AuditActor {
  // Entries written before the actor became a map (a kept local table) hold the token id or `system`.
  if (typeof item.actor === 'string') return auditActor(item.actor);
  const map = optMap(item, 'actor');
  if (!map) throw new ItemShapeError(`item ${String(item[TABLE.partitionKey])} / ${String(item[TABLE.sortKey])}: actor is not a map`);
  const name = optStr(map, 'name');
  const email = optStr(map, 'email');
  return {
    kind: oneOf(map, 'kind', WRITTEN_ACTOR_KINDS),
    id: str(map, 'id'),
    ...(name === null ? {} : { name }),
    ...(email === null ? {} : { email }),
  };
}

/**
 * An actor as a workspace's own views of what it made show it (an API token's or a portal
 * session's `createdBy`): platform staff as `{kind: 'staff', id: 'staff'}`, never who
 * (docs/behaviour.md#staff-sign-in); any other actor as it is.
 */
export function workspaceViewActor(actor: AuditActor): AuditActor {
  return actor.kind === 'staff' ? { kind: 'staff', id: 'staff' } : actor;
}

/**
 * The transaction item that writes an audit event; its domain event, if any, is not written (see
 * {@link auditWrites}). `auditEventId` is given by the caller that writes the event with it.
 */
export function auditPut(table: TableContext, slug: string, input: AuditInput, now: Date, auditEventId = newId('aud', now)) {
  return {
    Put: {
      TableName: table.tableName,
      Item: {
        ...keys.audit(slug, auditEventId),
        type: 'audit',
        auditEventId,
        action: input.action,
        actor: auditActor(input.actor),
        targetId: input.targetId,
        detail: input.detail ?? {},
        createdAt: now.toISOString(),
      },
    },
  };
}

/** One item of a write transaction. */
export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/**
 * The transaction items of an audit event: the audit item, then the outbox item of the change's
 * domain event when it has one (and the table binding an outbox), both under the audit event's id.
 */
export function auditWrites(table: TableContext, slug: string, input: AuditInput, now: Date): TransactItem[] {
  const auditEventId = newId('aud', now);
  const event = input.event && outboxPut(table, slug, auditEventId, input.event, now);
  return [auditPut(table, slug, input, now, auditEventId), ...(event ? [event] : [])];
}

/**
 * Writes `items` and the audit event of the change (when given) in one
 * transaction, so the change, its audit and its domain event stand or fall
 * together. The audit (and the event) come last: a caller reads a failed condition by its item's index.
 */
export async function writeAudited(
  table: TableContext,
  items: readonly TransactItem[],
  slug: string,
  audit: AuditInput | undefined,
  now: Date,
): Promise<void> {
  await table.doc.send(new TransactWriteCommand({ TransactItems: [...items, ...(audit ? auditWrites(table, slug, audit, now) : [])] }));
}

/** An audit item as its wire event, each attribute checked (an absent detail reads as empty). */
function auditEventFromItem(item: Item): AuditEvent {
  const actor = storedActor(item);
  return {
    auditEventId: str(item, 'auditEventId'),
    action: str(item, 'action'),
    actor,
    actorId: actor.id,
    targetId: str(item, 'targetId'),
    detail: optMap(item, 'detail') ?? {},
    createdAt: str(item, 'createdAt'),
  };
}

/** Audit events of a workspace, newest first. */
export function listAuditEvents(table: TableContext, slug: string, limit: number, cursor?: string): Promise<Page<AuditEvent>> {
  return queryPage(table, {
    pk: keys.workspacePk(slug),
    skPrefix: SK_PREFIX.audit,
    forward: false,
    limit,
    cursor,
    idPattern: idPattern('aud'),
    map: (item) => {
      const value = auditEventFromItem(item);
      return { value, sortKey: value.createdAt, id: value.auditEventId };
    },
  });
}
