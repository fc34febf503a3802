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
 * A row is (function, operation and the kinds of items it touches): the function from
 * bench/usage.ts's `currentFunction`, the kinds from the keys.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { currentFunction, dynamoCallStarted } from './usage';

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

/** What an item is, from its key (lambdas/store/table-schema.ts builds every key); unknown kinds by their key prefixes. */
function kindOf(key: Record<string, unknown> | undefined): string {
  const pk = str(key?.pk);
  const sk = str(key?.sk);
  if (pk.startsWith('WS#')) {
    if (sk === 'META') return 'workspace';
    if (sk.startsWith('WEBHOOK#')) return 'endpoint';
    return `workspace ${sk.split('#')[0]}`;
  }
  if (pk.startsWith('DLV#')) return sk === 'META' ? 'summary' : sk.startsWith('ATT#') ? 'attempt' : `delivery ${sk.split('#')[0]}`;
  if (pk.startsWith('HEALTH#EP#')) return 'endpoint health';
  if (pk.startsWith('HEALTH#WS#')) return 'workspace health';
  if (pk === '' && sk === '') return 'item';
  return `${pk.split('#')[0]}/${sk.split('#')[0]}`;
}

/** The kinds of the items a write request touches, `summary+attempt` (sorted, distinct). */
function kinds(items: (Record<string, unknown> | undefined)[]): string {
  return [...new Set(items.map(kindOf))].sort().join('+');
}

type Input = Record<string, unknown>;
const asList = (value: unknown) => (Array.isArray(value) ? (value as Input[]) : []);

/**
 * How a command is shown: the operation and the kinds of items it reads or writes (from their
 * keys), so the rows follow whatever the store does without naming its calls here.
 */
function describe(command: string, input: Input): string {
  const op = command.replace(/Command$/, '');
  const consistent = input.ConsistentRead === true ? ' (strong)' : '';
  switch (op) {
    case 'GetItem':
    case 'DeleteItem':
    case 'UpdateItem':
      return `${op} ${kindOf(input.Key as Input)}${consistent}`;
    case 'PutItem':
      return `${op} ${kindOf(input.Item as Input)}`;
    case 'Query':
      return `Query ${typeof input.IndexName === 'string' ? `index ${input.IndexName}` : 'table'}${consistent}`;
    case 'BatchWriteItem': {
      const requests = Object.values((input.RequestItems ?? {}) as Record<string, Input[]>).flat();
      return `BatchWriteItem ${kinds(requests.map((r) => ((r.PutRequest as Input | undefined)?.Item ?? (r.DeleteRequest as Input | undefined)?.Key) as Input | undefined))}`;
    }
    case 'BatchGetItem': {
      const keys = Object.values((input.RequestItems ?? {}) as Record<string, { Keys?: Input[] }>).flatMap((r) => r.Keys ?? []);
      return `BatchGetItem ${kinds(keys)}`;
    }
    case 'TransactWriteItems':
      return `TransactWriteItems ${kinds(
        asList(input.TransactItems).map((t) => {
          const part = (t.Put ?? t.Update ?? t.Delete ?? t.ConditionCheck) as Input | undefined;
          return (part?.Item ?? part?.Key) as Input | undefined;
        }),
      )}`;
    case 'TransactGetItems':
      return `TransactGetItems ${kinds(asList(input.TransactItems).map((t) => (t.Get as Input | undefined)?.Key as Input | undefined))}`;
    default:
      return op;
  }
}

const units = (u: Units | undefined) => u?.CapacityUnits ?? (u?.ReadCapacityUnits ?? 0) + (u?.WriteCapacityUnits ?? 0);

function sum(consumed: unknown, isRead: boolean, byTarget: Record<string, number>): { rcu: number; wcu: number } | null {
  if (!consumed) return null;
  const list = (Array.isArray(consumed) ? consumed : [consumed]) as Capacity[];
  let rcu = 0;
  let wcu = 0;
  for (const c of list) {
    if (c.Table) byTarget.table = (byTarget.table ?? 0) + units(c.Table);
    for (const [name, u] of Object.entries({ ...c.GlobalSecondaryIndexes, ...c.LocalSecondaryIndexes }))
      byTarget[name] = (byTarget[name] ?? 0) + units(u);
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
  const middleware =
    (next: AnyHandler, context: { commandName?: string }): AnyHandler =>
    async (args) => {
      const command = context.commandName ?? 'Unknown';
      if (!SUPPORTED.has(command)) return next(args);
      // INDEXES: the TOTAL figures plus the share of the table and of each index.
      args.input.ReturnConsumedCapacity ??= 'INDEXES';
      // The function running the call (bench/usage.ts), so rows follow the function, not a guess from the key.
      const stage = currentFunction() ?? 'other';
      const operation = describe(command, args.input);
      const started = performance.now();
      const ended = dynamoCallStarted(READS.has(command));
      const result = await next(args).finally(ended);
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
      // Copies: a phase keeps its snapshot while the next phase (before its reset) adds to the live rows.
      return [...rows.values()]
        .map((r) => ({ ...r, byTarget: { ...r.byTarget } }))
        .sort((a, b) => a.stage.localeCompare(b.stage) || a.operation.localeCompare(b.operation));
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
