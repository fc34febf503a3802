/**
 * Counts DynamoDB consumed capacity on a document client: a middleware asks
 * every data-plane command for `ReturnConsumedCapacity: 'INDEXES'` (TOTAL plus
 * the table/index split) and sums the `ConsumedCapacity` of its output, per
 * pipeline stage and operation.
 *
 * DynamoDB Local answers with `CapacityUnits` only (no Read/Write split), so
 * units are attributed by operation: Get/Query/Scan/BatchGet/TransactGet are
 * reads, everything else writes. Local does count GSI writes and does double
 * transactional items, as DynamoDB does (checked when this bench was written).
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

const SUPPORTED = new Set([
  'GetItemCommand',
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'QueryCommand',
  'ScanCommand',
  'BatchGetItemCommand',
  'BatchWriteItemCommand',
  'TransactGetItemsCommand',
  'TransactWriteItemsCommand',
  'ExecuteStatementCommand',
  'BatchExecuteStatementCommand',
  'ExecuteTransactionCommand',
]);
const READS = new Set(['GetItemCommand', 'QueryCommand', 'ScanCommand', 'BatchGetItemCommand', 'TransactGetItemsCommand']);

interface Units {
  CapacityUnits?: number;
  ReadCapacityUnits?: number;
  WriteCapacityUnits?: number;
}
interface Capacity extends Units {
  Table?: Units;
  GlobalSecondaryIndexes?: Record<string, Units>;
  LocalSecondaryIndexes?: Record<string, Units>;
}

/** Totals of one (stage, operation) row. */
export interface CapacityRow {
  readonly stage: string;
  readonly operation: string;
  calls: number;
  rcu: number;
  wcu: number;
  /** Calls whose output carried no ConsumedCapacity. */
  missing: number;
  /** Sum of the calls' round trips as the handler saw them (SDK + HTTP + DynamoDB Local), ms. */
  totalMs: number;
  /** Units per target: `table` and each index name (from `ReturnConsumedCapacity: 'INDEXES'`). */
  byTarget: Record<string, number>;
}

/** A counter attached to a client. */
export interface CapacityMeter {
  reset(): void;
  rows(): CapacityRow[];
  totals(): { calls: number; rcu: number; wcu: number; missing: number };
}

/** The string value of an attribute, marshalled (`{S: …}`) or not. */
function str(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && typeof (value as { S?: unknown }).S === 'string') return (value as { S: string }).S;
  return '';
}

/** Which pipeline stage issued a command, from the operation and the key it touches (see lambdas/store). */
function label(command: string, input: Record<string, unknown>): { stage: string; operation: string } {
  const op = command.replace(/Command$/, '');
  if (op === 'GetItem') {
    const key = (input.Key ?? {}) as Record<string, unknown>;
    const pk = str(key.pk);
    const sk = str(key.sk);
    if (pk.startsWith('WS#') && sk === 'META') return { stage: 'publisher', operation: 'GetItem workspace (strong)' };
    if (pk.startsWith('DLV#')) return { stage: 'dispatcher', operation: 'GetItem delivery (strong)' };
    if (pk.startsWith('WS#') && sk.startsWith('WEBHOOK#')) return { stage: 'dispatcher', operation: 'GetItem endpoint (strong)' };
    return { stage: 'other', operation: `GetItem ${pk.split('#')[0]}` };
  }
  if (op === 'Query') return { stage: 'publisher', operation: 'Query subscribed endpoints' };
  if (op === 'BatchWriteItem') return { stage: 'publisher', operation: 'BatchWriteItem pending rows' };
  // The publisher writes each pending row put-if-absent (docs/architecture.md#publisher).
  if (op === 'PutItem' && str(((input.Item ?? {}) as Record<string, unknown>).pk).startsWith('DLV#')) return { stage: 'publisher', operation: 'PutItem pending row (if absent)' };
  if (op === 'TransactWriteItems') return { stage: 'dispatcher', operation: 'TransactWriteItems record attempt' };
  return { stage: 'other', operation: op };
}

const units = (u: Units | undefined) => u?.CapacityUnits ?? (u?.ReadCapacityUnits ?? 0) + (u?.WriteCapacityUnits ?? 0);

function sum(consumed: unknown, isRead: boolean, byTarget: Record<string, number>): { rcu: number; wcu: number } | null {
  if (!consumed) return null;
  const list = (Array.isArray(consumed) ? consumed : [consumed]) as Capacity[];
  let rcu = 0;
  let wcu = 0;
  for (const c of list) {
    if (c.Table) byTarget.table = (byTarget.table ?? 0) + units(c.Table);
    for (const [name, u] of Object.entries({ ...c.GlobalSecondaryIndexes, ...c.LocalSecondaryIndexes })) byTarget[name] = (byTarget[name] ?? 0) + units(u);
    if (c.ReadCapacityUnits !== undefined || c.WriteCapacityUnits !== undefined) {
      rcu += c.ReadCapacityUnits ?? 0;
      wcu += c.WriteCapacityUnits ?? 0;
    } else if (isRead) rcu += c.CapacityUnits ?? 0;
    else wcu += c.CapacityUnits ?? 0;
  }
  return { rcu, wcu };
}

/** Adds the counting middleware to `doc` (the client every handler of this process shares). */
export function meterCapacity(doc: DynamoDBDocumentClient): CapacityMeter {
  let rows = new Map<string, CapacityRow>();
  type AnyHandler = (args: { input: Record<string, unknown> }) => Promise<{ output: Record<string, unknown> }>;
  const middleware = (next: AnyHandler, context: { commandName?: string }): AnyHandler =>
    async (args) => {
      const command = context.commandName ?? 'Unknown';
      if (!SUPPORTED.has(command)) return next(args);
      // INDEXES: the TOTAL figures plus the share of the table and of each index.
      args.input.ReturnConsumedCapacity ??= 'INDEXES';
      const { stage, operation } = label(command, args.input);
      const started = performance.now();
      const result = await next(args);
      const ms = performance.now() - started;
      const key = `${stage}|${operation}`;
      let row = rows.get(key);
      if (!row) rows.set(key, (row = { stage, operation, calls: 0, rcu: 0, wcu: 0, missing: 0, totalMs: 0, byTarget: {} }));
      row.calls++;
      row.totalMs += ms;
      const consumed = sum(result.output.ConsumedCapacity, READS.has(command), row.byTarget);
      if (consumed) {
        row.rcu += consumed.rcu;
        row.wcu += consumed.wcu;
      } else row.missing++;
      return result;
    };
  (doc.middlewareStack as unknown as { add(m: typeof middleware, o: { step: string; name: string }): void }).add(middleware, {
    step: 'initialize',
    name: 'benchConsumedCapacity',
  });
  return {
    reset() {
      rows = new Map();
    },
    rows() {
      return [...rows.values()].sort((a, b) => a.stage.localeCompare(b.stage) || a.operation.localeCompare(b.operation));
    },
    totals() {
      const all = [...rows.values()];
      return {
        calls: all.reduce((n, r) => n + r.calls, 0),
        rcu: all.reduce((n, r) => n + r.rcu, 0),
        wcu: all.reduce((n, r) => n + r.wcu, 0),
        missing: all.reduce((n, r) => n + r.missing, 0),
      };
    },
  };
}
