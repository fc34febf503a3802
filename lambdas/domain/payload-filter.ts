/**
 * Payload filters (docs/behaviour.md#payload-filters): a small JSON language over an event's
 * payload, validated into a {@link PayloadFilter} and evaluated against a payload. Our own code,
 * not a query library (README.md#payload-filters): the validator names the exact place of every
 * problem, the evaluator says in words which condition failed, paths reach own properties only,
 * and the work of one evaluation is bounded by the filter's size alone (no regular expressions,
 * no traversal of arrays, recursion only as deep as the filter's bounded nesting).
 * Pure: no I/O.
 */
import { AppError } from '../contract/errors';
import {
  MAX_FILTER_BYTES,
  MAX_FILTER_CONDITIONS,
  MAX_FILTER_DEPTH,
  MAX_FILTER_IN_VALUES,
  MAX_FILTER_PATH_CHARS,
  MAX_FILTER_PATH_SEGMENTS,
  MAX_REASON_CHARS,
  MAX_REASON_LIST_ITEMS,
  MAX_REASON_VALUE_CHARS,
} from '../contract/filter-limits';

/** A JSON scalar a filter compares with. */
type FilterScalar = string | number | boolean | null;

/** The numeric comparisons. */
type Comparison = '$gt' | '$gte' | '$lt' | '$lte';

/** One test of the value at a path. */
type Test =
  | { readonly op: 'eq'; readonly value: FilterScalar }
  | { readonly op: '$in'; readonly values: readonly FilterScalar[]; readonly set: ReadonlySet<FilterScalar> }
  | { readonly op: '$exists'; readonly value: boolean }
  | { readonly op: Comparison; readonly value: number }
  | { readonly op: '$prefix'; readonly value: string };

/** A validated filter's tree. */
type Node =
  | { readonly k: 'all'; readonly of: readonly Node[] }
  | { readonly k: 'any'; readonly of: readonly Node[] }
  | { readonly k: 'not'; readonly of: Node }
  | { readonly k: 'test'; readonly path: string; readonly segments: readonly string[]; readonly test: Test };

declare const validated: unique symbol;

/** A filter that passed {@link parsePayloadFilter}: only such a filter can be evaluated. */
export interface PayloadFilter {
  readonly [validated]: true;
}

/** One problem of a filter: where in the filter document (keys and list indexes from its root) and what. */
interface FilterIssue {
  readonly path: readonly (string | number)[];
  readonly message: string;
}

/** The outcome of {@link parsePayloadFilter}. */
export type FilterParseResult =
  { readonly ok: true; readonly filter: PayloadFilter } | { readonly ok: false; readonly issues: readonly FilterIssue[] };

/** The outcome of {@link evaluatePayloadFilter}: `reason` (only when it does not match) says which condition failed. */
export interface FilterVerdict {
  readonly matches: boolean;
  readonly reason?: string;
}

/** The operators a path's operator object may hold. */
const PATH_OPERATORS = ['$in', '$exists', '$gt', '$gte', '$lt', '$lte', '$prefix'] as const;
type PathOperator = (typeof PATH_OPERATORS)[number];
const LOGICAL = ['$and', '$or', '$not'] as const;

/** An array index segment: digits without a leading zero (`0`, `12`), short enough to be a safe integer. */
const INDEX = /^(?:0|[1-9]\d{0,14})$/;

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isScalar = (v: unknown): v is FilterScalar =>
  v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));

/** What a value is, in words (`a string`, `an object`…). */
function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  switch (typeof v) {
    case 'string':
      return 'a string';
    case 'number':
      // JSON.parse reads 1e999 as Infinity.
      return Number.isFinite(v) ? 'a number' : 'a number out of range';
    case 'boolean':
      return 'a boolean';
    case 'object':
      return 'an object';
    default:
      return typeof v;
  }
}

/**
 * Bytes of `value`'s JSON as `JSON.stringify` writes it, counted without recursion and without
 * building the text, stopping as soon as the count passes `limit` (it then answers `limit + 1`):
 * no nesting can overflow the stack, and the walk ends within `limit` bytes of JSON.
 */
export function jsonBytesWithin(value: unknown, limit: number): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    if (total > limit) return limit + 1;
    const v = stack.pop();
    if (Array.isArray(v)) {
      // `[`, `]` and the commas between items; an item JSON cannot write (undefined, a function) is `null`.
      total += 2 + Math.max(0, v.length - 1);
      for (let i = v.length - 1; i >= 0; i--) stack.push(v[i] === undefined || typeof v[i] === 'function' ? null : v[i]);
    } else if (isPlainObject(v)) {
      const entries = Object.entries(v).filter(([, x]) => x !== undefined && typeof x !== 'function');
      // `{`, `}`, the commas, and each key with its colon.
      total += 2 + Math.max(0, entries.length - 1);
      for (const [k, x] of entries) {
        total += Buffer.byteLength(JSON.stringify(k), 'utf8') + 1;
        stack.push(x);
      }
    } else {
      total += Buffer.byteLength(JSON.stringify(v) ?? 'null', 'utf8');
    }
  }
  return total > limit ? limit + 1 : total;
}

/** The validator's walk: the issues so far and the conditions counted. */
interface Walk {
  readonly issues: FilterIssue[];
  conditions: number;
  /** Set once the filter has more conditions than allowed: the walk stops there. */
  full: boolean;
}

/** Counts one condition at `where`; false (with its issue) past the bound. */
function countCondition(walk: Walk, where: readonly (string | number)[]): boolean {
  if (walk.full) return false;
  walk.conditions++;
  if (walk.conditions <= MAX_FILTER_CONDITIONS) return true;
  walk.full = true;
  walk.issues.push({
    path: where,
    message: `The filter has more than ${MAX_FILTER_CONDITIONS} conditions (each test of a path, and each $and, $or and $not, counts one); this is condition ${walk.conditions}`,
  });
  return false;
}

/** A path's segments, or the issue with it. */
function pathSegments(path: string): { segments: string[] } | { problem: string } {
  if (path.length > MAX_FILTER_PATH_CHARS)
    return { problem: `The path is ${path.length} characters long; at most ${MAX_FILTER_PATH_CHARS} are allowed` };
  const segments = path.split('.');
  if (segments.some((s) => s === ''))
    return { problem: `The path "${path}" has an empty segment: segments are names or list indexes separated by single dots` };
  if (segments.length > MAX_FILTER_PATH_SEGMENTS)
    return { problem: `The path has ${segments.length} segments; at most ${MAX_FILTER_PATH_SEGMENTS} are allowed` };
  return { segments };
}

/** The test an operator of a path's operator object declares, or null after recording its issue. */
function operatorTest(op: string, operand: unknown, where: readonly (string | number)[], walk: Walk): Test | null {
  const issue = (message: string, at: readonly (string | number)[] = where) => {
    walk.issues.push({ path: at, message });
    return null;
  };
  switch (op as PathOperator) {
    case '$in': {
      if (!Array.isArray(operand))
        return issue(`$in takes a list of JSON scalars (strings, numbers, booleans, null), not ${kindOf(operand)}`);
      if (operand.length === 0) return issue('$in takes a non-empty list: an empty one would never match');
      if (operand.length > MAX_FILTER_IN_VALUES)
        return issue(`$in lists ${operand.length} values; at most ${MAX_FILTER_IN_VALUES} are allowed`);
      let ok = true;
      operand.forEach((v, i) => {
        if (!isScalar(v)) {
          ok = false;
          issue(`A $in value is a JSON scalar (a string, a finite number, a boolean or null), not ${kindOf(v)}`, [...where, i]);
        }
      });
      if (!ok) return null;
      const values = operand as FilterScalar[];
      return { op: '$in', values, set: new Set(values) };
    }
    case '$exists':
      if (typeof operand !== 'boolean') return issue(`$exists takes true or false, not ${kindOf(operand)}`);
      return { op: '$exists', value: operand };
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte':
      if (typeof operand !== 'number' || !Number.isFinite(operand)) return issue(`${op} takes a finite number, not ${kindOf(operand)}`);
      return { op: op as Comparison, value: operand };
    case '$prefix':
      if (typeof operand !== 'string') return issue(`$prefix takes a string, not ${kindOf(operand)}`);
      return { op: '$prefix', value: operand };
    default:
      if (op === '$eq') return issue('Unknown operator $eq: for equality write the value itself, as in {"path": value}');
      if ((LOGICAL as readonly string[]).includes(op))
        return issue(`${op} combines filters, not the tests of one path: write it beside the paths, as in {"${op}": …}`);
      return issue(`Unknown operator ${op}: a path's operator object takes ${PATH_OPERATORS.join(', ')}`);
  }
}

/** The condition(s) a path key declares: an equality, or one test per operator of its operator object. */
function pathNode(path: string, value: unknown, where: readonly (string | number)[], walk: Walk): Node[] {
  const segs = pathSegments(path);
  if ('problem' in segs) {
    walk.issues.push({ path: where, message: segs.problem });
    return [];
  }
  const { segments } = segs;
  if (isScalar(value)) {
    if (!countCondition(walk, where)) return [];
    return [{ k: 'test', path, segments, test: { op: 'eq', value } }];
  }
  if (Array.isArray(value)) {
    walk.issues.push({
      path: where,
      message: 'A path is compared with a JSON scalar or an operator object, not a list: for "one of these values" write {"$in": [...]}',
    });
    return [];
  }
  if (!isPlainObject(value)) {
    walk.issues.push({ path: where, message: `A path is compared with a JSON scalar or an operator object, not ${kindOf(value)}` });
    return [];
  }
  const keys = Object.keys(value);
  if (keys.length === 0) {
    walk.issues.push({
      path: where,
      message: `An operator object needs at least one operator (${PATH_OPERATORS.join(', ')}); equality on objects is not supported`,
    });
    return [];
  }
  const fields = keys.filter((k) => !k.startsWith('$'));
  if (fields.length > 0) {
    walk.issues.push({
      path: where,
      message: `Equality on objects is not supported: compare each field by its own path, as in "${path}.${fields[0]}"`,
    });
    return [];
  }
  const nodes: Node[] = [];
  for (const op of keys) {
    const at = [...where, op];
    const test = operatorTest(op, value[op], at, walk);
    if (test && countCondition(walk, at)) nodes.push({ k: 'test', path, segments, test });
    if (walk.full) break;
  }
  return nodes;
}

/** A filter object at `where`, nested `level` deep, as a node (all of its keys must hold). */
function filterNode(raw: unknown, where: readonly (string | number)[], level: number, walk: Walk): Node {
  const none: Node = { k: 'all', of: [] };
  if (!isPlainObject(raw)) {
    walk.issues.push({ path: where, message: `A filter is a JSON object of paths and $and, $or, $not, not ${kindOf(raw)}` });
    return none;
  }
  if (level > MAX_FILTER_DEPTH) {
    walk.issues.push({
      path: where,
      message: `Filters nest more than ${MAX_FILTER_DEPTH} levels deep ($and, $or and $not each add a level); at most ${MAX_FILTER_DEPTH} are allowed`,
    });
    return none;
  }
  const of: Node[] = [];
  for (const key of Object.keys(raw)) {
    if (walk.full) break;
    const at = [...where, key];
    const value = raw[key];
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(value) || value.length === 0) {
        walk.issues.push({
          path: at,
          message: `${key} takes a non-empty list of filters, not ${Array.isArray(value) ? 'an empty list' : kindOf(value)}`,
        });
        continue;
      }
      if (!countCondition(walk, at)) break;
      const children = value.map((child, i) => filterNode(child, [...at, i], level + 1, walk));
      of.push({ k: key === '$and' ? 'all' : 'any', of: children });
    } else if (key === '$not') {
      if (!countCondition(walk, at)) break;
      of.push({ k: 'not', of: filterNode(value, at, level + 1, walk) });
    } else if (key.startsWith('$')) {
      walk.issues.push({
        path: at,
        message: (PATH_OPERATORS as readonly string[]).includes(key)
          ? `${key} tests a path: write it inside the path's operator object, as in {"data.total": {"${key}": …}}`
          : `Unknown operator ${key}: a filter's keys are paths (data.order.id) or $and, $or, $not`,
      });
    } else {
      of.push(...pathNode(key, value, at, walk));
    }
  }
  return of.length === 1 ? of[0]! : { k: 'all', of };
}

/**
 * Validates a filter document (docs/behaviour.md#payload-filters): within every bound of
 * lambdas/contract/filter-limits.ts, each key a path or `$and`/`$or`/`$not`, each path compared with
 * a JSON scalar or an operator object of known operators with operands of the right type. Every
 * problem found is an issue naming its place in the filter (the walk stops early only at the
 * size and condition bounds).
 */
export function parsePayloadFilter(raw: unknown): FilterParseResult {
  if (!isPlainObject(raw))
    return { ok: false, issues: [{ path: [], message: `A filter is a JSON object of paths and $and, $or, $not, not ${kindOf(raw)}` }] };
  const bytes = jsonBytesWithin(raw, MAX_FILTER_BYTES);
  if (bytes > MAX_FILTER_BYTES)
    return {
      ok: false,
      issues: [{ path: [], message: `The filter is over ${MAX_FILTER_BYTES} bytes of JSON; at most ${MAX_FILTER_BYTES} are allowed` }],
    };
  const walk: Walk = { issues: [], conditions: 0, full: false };
  const node = filterNode(raw, [], 1, walk);
  return walk.issues.length ? { ok: false, issues: walk.issues } : { ok: true, filter: node as unknown as PayloadFilter };
}

/** A place in a filter document as the problem's `issues` name it: `body.filter.$and[0]["data.order.id"].$in[2]`. */
export function filterIssuePath(where: string, path: readonly (string | number)[]): string {
  return path.reduce<string>((out, seg) => {
    if (typeof seg === 'number') return `${out}[${seg}]`;
    return /^[A-Za-z_$][\w$-]*$/.test(seg) ? `${out}.${seg}` : `${out}[${JSON.stringify(seg)}]`;
  }, where);
}

/**
 * The filter `raw` validated, or a 400 `InvalidFilter` whose `issues` name each problem's place
 * under `where` (the filter's own place in the request, e.g. `body.filter`).
 */
export function requirePayloadFilter(raw: unknown, where: string): PayloadFilter {
  const parsed = parsePayloadFilter(raw);
  if (parsed.ok) return parsed.filter;
  const issues = parsed.issues.map((i) => ({ path: filterIssuePath(where, i.path), message: i.message }));
  throw new AppError('InvalidFilter', `Invalid filter: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, { issues });
}

/** The value at a path: through own data properties of objects and in-range indexes of lists only. */
function resolve(payload: unknown, segments: readonly string[]): { found: true; value: unknown } | { found: false } {
  let cur = payload;
  for (const seg of segments) {
    if (Array.isArray(cur)) {
      if (!INDEX.test(seg)) return { found: false };
      const i = Number(seg);
      if (i >= cur.length) return { found: false };
      cur = cur[i] as unknown;
    } else if (isPlainObject(cur)) {
      // Own data properties only: `constructor`, `__proto__` or `toString` never reach a prototype.
      const own = Object.getOwnPropertyDescriptor(cur, seg);
      if (!own || !('value' in own)) return { found: false };
      cur = own.value as unknown;
    } else {
      return { found: false };
    }
  }
  return { found: true, value: cur };
}

/** Whether a test holds for what the path resolved to. */
function holds(test: Test, at: { found: true; value: unknown } | { found: false }): boolean {
  if (test.op === '$exists') return test.value === at.found;
  if (!at.found) return false;
  const v = at.value;
  switch (test.op) {
    case 'eq':
      return v === test.value;
    case '$in':
      return isScalar(v) && test.set.has(v);
    case '$gt':
      return typeof v === 'number' && v > test.value;
    case '$gte':
      return typeof v === 'number' && v >= test.value;
    case '$lt':
      return typeof v === 'number' && v < test.value;
    case '$lte':
      return typeof v === 'number' && v <= test.value;
    case '$prefix':
      return typeof v === 'string' && v.startsWith(test.value);
  }
}

/** A value as a reason quotes it: scalars as JSON (long strings cut), lists and objects by kind. */
function quote(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.length > MAX_REASON_VALUE_CHARS ? `${v.slice(0, MAX_REASON_VALUE_CHARS)}…` : v);
  if (typeof v === 'number') return String(v);
  if (v === null || typeof v === 'boolean') return JSON.stringify(v);
  return kindOf(v);
}

function quoteList(values: readonly FilterScalar[]): string {
  const shown = values.slice(0, MAX_REASON_LIST_ITEMS).map(quote);
  const more = values.length - shown.length;
  return `[${shown.join(', ')}${more > 0 ? `, … ${more} more` : ''}]`;
}

const COMPARISON_WORDS: Record<Comparison, string> = {
  $gt: 'greater than',
  $gte: 'at least',
  $lt: 'less than',
  $lte: 'at most',
};

/** What a test found, in words: why it failed, or (for a `$not`) what held. */
function describeTest(path: string, test: Test, at: { found: true; value: unknown } | { found: false }, ok: boolean): string {
  if (test.op === '$exists')
    return at.found ? `${path} is ${quote(at.value)}${ok ? '' : ', but it must be missing'}` : `${path} is missing`;
  if (!at.found) return `${path} is missing`;
  const v = quote(at.value);
  switch (test.op) {
    case 'eq':
      return ok ? `${path} is ${v}` : `${path} is ${v}, not ${quote(test.value)}`;
    case '$in':
      return `${path} is ${v}, ${ok ? '' : 'not '}one of ${quoteList(test.values)}`;
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte':
      if (typeof at.value !== 'number') return `${path} is ${v}, not a number`;
      return `${path} is ${v}, ${ok ? '' : 'not '}${COMPARISON_WORDS[test.op]} ${test.value}`;
    case '$prefix':
      if (typeof at.value !== 'string') return `${path} is ${v}, not a string`;
      return `${path} is ${v}, which ${ok ? 'starts' : 'does not start'} with ${quote(test.value)}`;
  }
}

/** Whether `node` holds for `payload`; the words only when asked (a `$not` asks of what it excludes). */
function run(node: Node, payload: unknown): { ok: boolean; why: () => string } {
  switch (node.k) {
    case 'test': {
      const at = resolve(payload, node.segments);
      const ok = holds(node.test, at);
      return { ok, why: () => describeTest(node.path, node.test, at, ok) };
    }
    case 'all': {
      const whys: (() => string)[] = [];
      for (const child of node.of) {
        const r = run(child, payload);
        // The first condition that fails is the reason.
        if (!r.ok) return r;
        whys.push(r.why);
      }
      return { ok: true, why: () => (whys.length ? whys.map((w) => w()).join(' and ') : 'the filter is empty') };
    }
    case 'any': {
      const whys: (() => string)[] = [];
      for (const child of node.of) {
        const r = run(child, payload);
        if (r.ok) return r;
        whys.push(r.why);
      }
      return { ok: false, why: () => `none of the $or filters matched: ${whys.map((w) => w()).join('; ')}` };
    }
    case 'not': {
      const r = run(node.of, payload);
      // Held: what its filter found is excluded. Failed: why its filter failed is why it holds.
      return { ok: !r.ok, why: () => (r.ok ? `${r.why()} (excluded by $not)` : r.why()) };
    }
  }
}

/**
 * Whether `payload` matches `filter`, and if not, why (the first condition that failed, in words,
 * at most {@link MAX_REASON_CHARS} characters). A missing path or a value of another type than
 * the test's is no match, never an error.
 */
export function evaluatePayloadFilter(filter: PayloadFilter, payload: unknown): FilterVerdict {
  const r = run(filter as unknown as Node, payload);
  if (r.ok) return { matches: true };
  const reason = r.why();
  return { matches: false, reason: reason.length > MAX_REASON_CHARS ? `${reason.slice(0, MAX_REASON_CHARS - 1)}…` : reason };
}
