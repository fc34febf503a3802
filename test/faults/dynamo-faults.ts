/**
 * DynamoDB faults, injected by an SDK middleware on a document client: throttling
 * (ProvisionedThroughputExceededException, 400) and server errors (InternalServerError,
 * 500), raised before the call reaches the table or after it was applied (the
 * response lost). Added at the `initialize` step, above the SDK's own retries, so
 * every injected fault reaches the service's code instead of being absorbed.
 */
import { InternalServerError, ProvisionedThroughputExceededException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** What kind of failure: a throttle, a 5xx, or a transaction cancelled because another one was changing its second item. */
type FaultKind = 'throttle' | '5xx' | 'conflict';

/** When the call fails: before it reaches the table, or after it was applied (the response lost). */
type FaultPhase = 'before' | 'after';

/** One fault rule: the next `times` calls it matches fail. */
interface FaultRule {
  /** Command name as the SDK names it (`PutItemCommand`, `TransactWriteItemsCommand`, …) or a pattern. @default every command */
  readonly command?: string | RegExp;
  /** Extra match on the command's input (its JSON text is the safest thing to look at). */
  readonly when?: (input: Record<string, unknown>) => boolean;
  readonly times: number;
  readonly kind?: FaultKind;
  readonly phase?: FaultPhase;
}

/** The injector on one client. */
export interface DynamoFaults {
  /** Adds a rule; rules are tried in order, the first one matching with calls left fails the call. */
  fail(rule: FaultRule): void;
  /** Fails the first `n` calls of every command kind from now on (each kind counted apart). */
  failFirstOfEachKind(n: number, kind: FaultKind, phase?: FaultPhase): void;
  /** Faults raised so far, per command name. */
  readonly injected: Map<string, number>;
  /** Calls seen so far, per command name. */
  readonly calls: Map<string, number>;
  /** Drops every rule left (the middleware stays, inert). */
  clear(): void;
  /** Removes the middleware. */
  remove(): void;
}

function fault(kind: FaultKind, command: string): Error {
  const $metadata = { httpStatusCode: kind === '5xx' ? 500 : 400, attempts: 1 };
  if (kind === 'conflict') {
    return new TransactionCanceledException({
      message: `injected conflict on ${command}`,
      $metadata,
      CancellationReasons: [{ Code: 'None' }, { Code: 'TransactionConflict' }],
    });
  }
  return kind === 'throttle'
    ? new ProvisionedThroughputExceededException({ message: `injected throttle on ${command}`, $metadata })
    : new InternalServerError({ message: `injected server error on ${command}`, $metadata });
}

let counter = 0;

/** Installs the fault middleware on `doc` (every command sent through it). */
export function injectDynamoFaults(doc: DynamoDBDocumentClient): DynamoFaults {
  type Live = { rule: FaultRule; left: number } | { perKind: number; kind: FaultKind; phase: FaultPhase; used: Map<string, number> };
  let rules: Live[] = [];
  const injected = new Map<string, number>();
  const calls = new Map<string, number>();
  const name = `injectFaults${++counter}`;
  const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);

  const pick = (command: string, input: Record<string, unknown>): { kind: FaultKind; phase: FaultPhase } | null => {
    for (const r of rules) {
      if ('perKind' in r) {
        const used = r.used.get(command) ?? 0;
        if (used >= r.perKind) continue;
        r.used.set(command, used + 1);
        return { kind: r.kind, phase: r.phase };
      }
      const { rule } = r;
      if (r.left <= 0) continue;
      if (rule.command !== undefined && !(typeof rule.command === 'string' ? rule.command === command : rule.command.test(command)))
        continue;
      if (rule.when && !rule.when(input)) continue;
      r.left--;
      return { kind: rule.kind ?? '5xx', phase: rule.phase ?? 'before' };
    }
    return null;
  };

  doc.middlewareStack.add(
    (next, context) => async (args) => {
      const command = String(context.commandName);
      bump(calls, command);
      const hit = pick(command, (args.input ?? {}) as Record<string, unknown>);
      if (!hit) return next(args);
      bump(injected, command);
      if (hit.phase === 'after') await next(args);
      throw fault(hit.kind, command);
    },
    { step: 'initialize', name },
  );

  return {
    fail: (rule) => void rules.push({ rule, left: rule.times }),
    failFirstOfEachKind: (n, kind, phase = 'before') => void rules.push({ perKind: n, kind, phase, used: new Map() }),
    injected,
    calls,
    clear: () => {
      rules = [];
    },
    remove: () => {
      rules = [];
      doc.middlewareStack.remove(name);
    },
  };
}
