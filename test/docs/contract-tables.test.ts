/**
 * The reference lists that mirror the contract say what the code serves: the REST routes of
 * docs/api.md, the MCP tools of docs/mcp.md, and the delivery statuses, error tags, rate-limit
 * buckets and workspace limits of docs/behaviour.md. A client author reads them instead of the code, so a route, tool, permission,
 * bucket or default added, removed or changed in the code fails here until the table follows, and
 * the failure names the missing, extra and wrong rows.
 */
import { describe, expect, it } from 'vitest';
import { DELIVERY_STATUSES } from '../../lambdas/contract/delivery-statuses';
import { ERROR_STATUS } from '../../lambdas/contract/error-tags';
import { DEFAULT_WORKSPACE_LIMITS } from '../../lambdas/contract/limits';
import { OPERATIONS, TOKEN_OPERATIONS } from '../../lambdas/contract/operations';
import { DEFAULT_QUOTAS, RATE_LIMIT_BUCKETS } from '../../lambdas/contract/rate-limits';
import { isReplayable, isTerminal } from '../../lambdas/domain/delivery-lifecycle';
import { MCP_TOOLS } from '../../lambdas/generated/mcp-tools';
import { codeSpan, read, section, tables, type Table } from './markdown';

/** What a permission cell says for an operation any token of the workspace may call. */
const ANY_TOKEN = 'any token of the workspace';

/** The one table under a heading of a document whose first column is `firstColumn`. */
function tableUnder(doc: string, heading: string, firstColumn: string): Table {
  const text = section(read(doc), heading);
  expect(text, `${doc} has a "${heading}" section`).toBeDefined();
  const found = tables(text!).filter((t) => t.header[0] === firstColumn);
  expect(found, `${doc} "${heading}": one table whose first column is "${firstColumn}"`).toHaveLength(1);
  return found[0]!;
}

/** A table as records keyed by its header, every cell that is one code span unwrapped. */
function records(table: Table): Record<string, string>[] {
  return table.rows.map((row) => Object.fromEntries(table.header.map((name, i) => [name, codeSpan(row[i] ?? '') ?? row[i] ?? ''])));
}

/** What a permission cell says for an operation only a staff session may call (docs/behaviour.md#staff-sign-in). */
const STAFF_ONLY = 'a staff session';
/** What a permission cell says for a workspace-less operation any token may call. */
const ANY_CALLER = 'any token or session';

/** A permission as a cell shows it. */
const permissionCell = (op: { permission: string | null; staffOnly?: boolean; workspaceless?: boolean } | undefined) =>
  op?.staffOnly ? STAFF_ONLY : op?.workspaceless ? ANY_CALLER : (op?.permission ?? ANY_TOKEN);
/** The permission cell of a route that takes no workspace token (docs/api.md#platform-api). */
const KIND_CELL = { iam: 'IAM (platform)', public: 'none (public)' } as const;

/**
 * The differences between the documented rows and the code's, by key: rows the table lacks, rows
 * the code does not have, rows listed twice, and cells that say something else than the code.
 */
function compare(documented: Record<string, unknown>[], expected: Record<string, unknown>[], key: string) {
  const keyOf = (row: Record<string, unknown>) => String(row[key]);
  const documentedKeys = documented.map(keyOf);
  const expectedByKey = new Map(expected.map((row) => [keyOf(row), row]));
  const wrong = documented.flatMap((row) => {
    const want = expectedByKey.get(keyOf(row));
    if (!want) return [];
    return Object.keys(want)
      .filter((field) => JSON.stringify(row[field]) !== JSON.stringify(want[field]))
      .map((field) => `${keyOf(row)}: ${field} is ${JSON.stringify(row[field])}, the code says ${JSON.stringify(want[field])}`);
  });
  return {
    missing: [...expectedByKey.keys()].filter((k) => !documentedKeys.includes(k)),
    extra: documentedKeys.filter((k) => !expectedByKey.has(k)),
    duplicated: documentedKeys.filter((k, i) => documentedKeys.indexOf(k) !== i),
    wrong,
  };
}

const NO_DIFFERENCE = { missing: [], extra: [], duplicated: [], wrong: [] };

describe('docs/api.md, Routes', () => {
  it('lists every operation of the contract with its method, path, permission, bucket and success statuses', () => {
    const documented = records(tableUnder('docs/api.md', '## Routes', 'operation')).map((row) => ({
      operation: row.operation,
      method: row.method,
      path: row.path,
      permission: row.permission,
      bucket: row.bucket,
      // "202 (200 with `dryRun`)": every status the operation answers on success.
      success: [...(row.success ?? '').matchAll(/\b[1-5]\d\d\b/g)].map((m) => Number(m[0])).sort(),
    }));
    const contract = OPERATIONS.map((op) => ({
      operation: op.operationId,
      method: op.method,
      path: op.path,
      permission: 'auth' in op ? KIND_CELL[op.auth] : permissionCell(op),
      bucket: op.rateLimit,
      success: [op.successStatus, ...('dryRun' in op ? [op.dryRun.successStatus] : [])].sort(),
    }));
    expect(compare(documented, contract, 'operation')).toEqual(NO_DIFFERENCE);
  });
});

describe('docs/mcp.md, Tools', () => {
  it('lists every tool the server serves with its operation, permission and kind', () => {
    const documented = records(tableUnder('docs/mcp.md', '## Tools', 'tool'));
    const served = MCP_TOOLS.map((tool) => {
      const op = TOKEN_OPERATIONS.find((o) => o.mcpTool === tool.name);
      const kind = tool.annotations?.readOnlyHint ? 'reads' : tool.annotations?.destructiveHint ? 'deletes' : 'writes';
      return { tool: tool.name, operation: op?.operationId ?? '(no operation)', permission: permissionCell(op), kind };
    });
    expect(served.length).toBe(TOKEN_OPERATIONS.length);
    expect(compare(documented, served, 'tool')).toEqual(NO_DIFFERENCE);
  });
});

describe('docs/behaviour.md, Rate limits', () => {
  it('lists every bucket with its default quota, and says which no operation declares', () => {
    const documented = records(tableUnder('docs/behaviour.md', '## Rate limits', 'Bucket')).map((row) => {
      const quota = /^(\d+) per (\d+) s$/.exec(row['Default quota per token'] ?? '');
      return {
        bucket: row.Bucket,
        limit: quota ? Number(quota[1]) : null,
        windowSeconds: quota ? Number(quota[2]) : null,
        unused: /no operation uses it/i.test(row['Used by'] ?? ''),
      };
    });
    // The MCP gate counts `mcp` once per HTTP request (lambdas/mcp/gate.ts); operations declare the others.
    const code = RATE_LIMIT_BUCKETS.map((bucket) => ({
      bucket,
      ...DEFAULT_QUOTAS[bucket],
      unused: bucket !== 'mcp' && !OPERATIONS.some((op) => op.rateLimit === bucket),
    }));
    expect(compare(documented, code, 'bucket')).toEqual(NO_DIFFERENCE);
  });
});

describe('docs/behaviour.md, Workspace limits', () => {
  it('lists every workspace limit with its default', () => {
    const documented = records(tableUnder('docs/behaviour.md', '### Workspace limits', 'Limit')).map((row) => ({
      limit: row.Limit,
      default: Number(/^\d+/.exec(row.Default ?? '')?.[0]),
    }));
    const code = Object.entries(DEFAULT_WORKSPACE_LIMITS).map(([limit, value]) => ({ limit, default: value }));
    expect(compare(documented, code, 'limit')).toEqual(NO_DIFFERENCE);
  });
});

describe('docs/behaviour.md, Error tags', () => {
  it('lists every error tag with its status', () => {
    const documented = records(tableUnder('docs/behaviour.md', '### Error tags', 'Tag')).map((row) => ({
      tag: row.Tag,
      status: Number(row.Status),
    }));
    const code = Object.entries(ERROR_STATUS).map(([tag, status]) => ({ tag, status }));
    expect(compare(documented, code, 'tag')).toEqual(NO_DIFFERENCE);
  });
});

describe('docs/behaviour.md, Delivery statuses', () => {
  it('lists every status, open or terminal and replayable as the delivery rules say', () => {
    const documented = records(tableUnder('docs/behaviour.md', '## Delivery statuses', 'Status')).map((row) => ({
      status: row.Status,
      terminal: row['Open or terminal'],
      replayable: row.Replayable,
    }));
    const code = DELIVERY_STATUSES.map((status) => ({
      status,
      terminal: isTerminal(status) ? 'terminal' : 'open',
      replayable: isReplayable(status) ? 'yes' : 'no',
    }));
    expect(compare(documented, code, 'status')).toEqual(NO_DIFFERENCE);
  });
});
