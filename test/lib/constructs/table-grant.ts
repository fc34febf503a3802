/**
 * A function's table grant as the CDK tests assert it: its unconditioned item actions, where its
 * Query may run, and the leading-key patterns of its conditioned grants (lib/constructs/function-access.ts).
 */
import type { Template } from 'aws-cdk-lib/assertions';
import type { ServiceFunction } from '../../../lib/constructs/service-function';
import { actionsOf, dynamoStatements, type Statement } from '../template';

/** What a role may do on the table. */
export interface TableGrant {
  /** The item actions granted without a condition, sorted (never Query). */
  readonly items: string[];
  /** Where Query is granted: `table`, or `index/<name>`, sorted. */
  readonly queries: string[];
  /** The `dynamodb:LeadingKeys` patterns of the conditioned grants (rate-limit counters, token lookup). */
  readonly leadingKeys: string[];
}

const resourcesOf = (s: Statement): unknown[] => (Array.isArray(s.Resource) ? s.Resource : [s.Resource]);

/** The service table's grant of `fn` (the outbox table's left out); fails when an item action is granted on an index, or Query with a condition. */
export function tableGrantOf(template: Template, fn: ServiceFunction): TableGrant {
  const items = new Set<string>();
  const queries = new Set<string>();
  const leadingKeys: string[] = [];
  for (const s of dynamoStatements(template, fn)) {
    // The outbox table's grants (lib/constructs/outbox.ts) are asserted with the outbox; this is the service table's.
    if (resourcesOf(s).every((r) => /"Outbox[A-Za-z0-9]*"/.test(JSON.stringify(r)))) continue;
    if (s.Condition) {
      leadingKeys.push(...(s.Condition['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'] ?? []));
      continue;
    }
    for (const action of actionsOf(s)) {
      for (const resource of resourcesOf(s)) {
        const index = /\/index\/([\w-]+)/.exec(JSON.stringify(resource))?.[1];
        if (action === 'dynamodb:Query') queries.add(index ? `index/${index}` : 'table');
        else if (index) throw new Error(`${action} is granted on the index ${index}`);
        else items.add(action);
      }
    }
  }
  return { items: [...items].sort(), queries: [...queries].sort(), leadingKeys: leadingKeys.sort() };
}
