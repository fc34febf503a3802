/**
 * docs/behaviour.md#payload-filters, as properties: over generated payloads and filters (paths
 * through lists and objects, keys such as `constructor`, `__proto__`, `toString` and `length`, every
 * operator, nested `$and`, `$or`, `$not`), the evaluator agrees with a small reference written here
 * straight from the documented rules, accepts exactly the filters within the condition bound, and
 * gives a reason exactly when it does not match.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_FILTER_BYTES, MAX_FILTER_CONDITIONS } from '../../lambdas/contract/filter-limits';
import { evaluatePayloadFilter, jsonBytesWithin, parsePayloadFilter } from '../../lambdas/domain/payload-filter';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

// ---- The reference: the documented rules, written as plainly as possible. ----

/** The value at a dotted path, as `[value]`, or `[]` when the path does not resolve. */
function lookup(payload: unknown, path: string): unknown[] {
  let current = payload;
  for (const segment of path.split('.')) {
    // A list's own properties are its items (and `length`, which JSON does not have); an object's, its keys.
    const ownIndex = Array.isArray(current) && segment !== 'length' && Object.hasOwn(current, segment);
    const ownKey = typeof current === 'object' && current !== null && !Array.isArray(current) && Object.hasOwn(current, segment);
    if (!ownIndex && !ownKey) return [];
    current = (current as Record<string, unknown>)[segment];
  }
  return [current];
}

/** Whether the one test `op` with `arg` holds for what the path found. */
function referenceTest(op: string, arg: unknown, found: unknown[]): boolean {
  if (op === '$exists') return arg === (found.length === 1);
  if (found.length === 0) return false;
  const v = found[0];
  if (op === '$in') return (arg as unknown[]).some((x) => x === v);
  if (op === '$prefix') return typeof v === 'string' && v.slice(0, (arg as string).length) === arg;
  if (typeof v !== 'number') return false;
  const n = arg as number;
  return op === '$gt' ? v > n : op === '$gte' ? v >= n : op === '$lt' ? v < n : v <= n;
}

/** Whether `payload` matches `filter`: every key holds. */
function referenceMatch(filter: Record<string, unknown>, payload: unknown): boolean {
  return Object.keys(filter).every((key) => {
    const value = filter[key];
    if (key === '$and') return (value as Record<string, unknown>[]).every((f) => referenceMatch(f, payload));
    if (key === '$or') return (value as Record<string, unknown>[]).some((f) => referenceMatch(f, payload));
    if (key === '$not') return !referenceMatch(value as Record<string, unknown>, payload);
    const found = lookup(payload, key);
    if (value === null || typeof value !== 'object') return found.length === 1 && found[0] === value;
    return Object.keys(value).every((op) => referenceTest(op, (value as Record<string, unknown>)[op], found));
  });
}

/** Conditions as docs/behaviour.md#payload-filters counts them. */
function conditions(filter: Record<string, unknown>): number {
  let n = 0;
  for (const key of Object.keys(filter)) {
    const value = filter[key];
    if (key === '$and' || key === '$or') n += 1 + (value as Record<string, unknown>[]).reduce((s, f) => s + conditions(f), 0);
    else if (key === '$not') n += 1 + conditions(value as Record<string, unknown>);
    else n += value !== null && typeof value === 'object' ? Object.keys(value).length : 1;
  }
  return n;
}

// ---- Generators. ----

/** Keys shared by payloads and paths, so paths often resolve; the prototype's names among them. */
const KEY = fc.constantFrom('a', 'b', 'c', '0', '1', '2', 'constructor', '__proto__', 'toString', 'length', 'x.y');
const SEGMENT = fc.constantFrom('a', 'b', 'c', '0', '1', '2', '01', 'constructor', '__proto__', 'toString', 'length', 'hasOwnProperty');
const SCALAR = fc.constantFrom<Json>(0, 1, 2, -1, 1.5, 250, 'a', 'ab', 'abc', 'b', '', '1', 'true', true, false, null);

/** Objects built from entries: `__proto__` is then an own key, as JSON.parse makes it. */
const objectOf = <T>(value: fc.Arbitrary<T>) =>
  fc.array(fc.tuple(KEY, value), { maxLength: 4 }).map((entries) => Object.fromEntries(entries) as Record<string, T>);

const { payload } = fc.letrec<{ payload: Json }>((tie) => ({
  payload: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    SCALAR,
    fc.array(tie('payload'), { maxLength: 3 }),
    objectOf(tie('payload')),
  ),
}));

const RANDOM_PATH = fc.array(SEGMENT, { minLength: 1, maxLength: 3 }).map((segments) => segments.join('.'));
const NUMBER = fc.constantFrom(-1, 0, 1, 1.5, 2, 250);
const PREFIX = fc.constantFrom('', 'a', 'ab', 'b', '1');

/**
 * Every dotted path into `value` up to 3 segments, with what it names (a key holding a dot gives
 * a path that reads it as two segments, and so names something else or nothing).
 */
function pathsOf(value: unknown, prefix = '', depth = 0): [string, unknown][] {
  if (depth === 3 || value === null || typeof value !== 'object') return [];
  return Object.keys(value).flatMap((k) => {
    const path = prefix ? `${prefix}.${k}` : k;
    const inner = (value as Record<string, unknown>)[k];
    return [[path, inner] as [string, unknown], ...pathsOf(inner, path, depth + 1)];
  });
}

/** Operands close to `v`: itself, its neighbours, its prefixes, so a test often sits on its edge. */
function near(v: unknown): { scalars: Json[]; numbers: number[]; prefixes: string[] } {
  if (typeof v === 'number') return { scalars: [v, v + 1, String(v)], numbers: [v, v - 1, v + 1, v - 0.5, v + 0.5], prefixes: [String(v)] };
  if (typeof v === 'string')
    return { scalars: [v, `${v}x`], numbers: [Number(v) || 0], prefixes: [v, v.slice(0, 1), v.slice(1, 2), v.slice(0, -1), `${v}x`] };
  if (v === null || typeof v === 'boolean') return { scalars: [v, String(v)], numbers: [0], prefixes: [String(v)] };
  return { scalars: [null], numbers: [0], prefixes: [''] };
}

/** A test of one path: mostly a path of `p` with operands near what it names, at times any path and operand. */
function testFor(p: Json): fc.Arbitrary<Record<string, unknown>> {
  const entries = pathsOf(p);
  const own = entries.length
    ? fc.constantFrom(...entries).chain(([path, v]) => {
        const { scalars, numbers, prefixes } = near(v);
        return fc.tuple(fc.constant(path), fc.constantFrom(...scalars), fc.constantFrom(...numbers), fc.constantFrom(...prefixes));
      })
    : fc.tuple(RANDOM_PATH, SCALAR, NUMBER, PREFIX);
  const any = fc.tuple(RANDOM_PATH, SCALAR, NUMBER, PREFIX);
  return fc.oneof({ weight: 3, arbitrary: own }, { weight: 1, arbitrary: any }).chain(([path, scalar, number, prefix]) => {
    const operator = fc.oneof(
      fc.array(fc.oneof(fc.constant(scalar), SCALAR), { minLength: 1, maxLength: 3 }).map(($in) => ({ $in })),
      fc.boolean().map(($exists) => ({ $exists })),
      fc.constantFrom('$gt', '$gte', '$lt', '$lte').map((op) => ({ [op]: number })),
      fc.constant({ $prefix: prefix }),
    );
    // Mostly one operator, at times two (a range), so a test is rarely a contradiction.
    const operators = fc.array(operator, { minLength: 1, maxLength: 2 }).map((ops) => Object.assign({}, ...ops) as Record<string, unknown>);
    return fc.oneof(fc.constant<unknown>(scalar), operators).map((test) => Object.fromEntries([[path, test]]));
  });
}

/** A filter of tests of `p`: paths beside `$and`, `$or`, `$not`, nested. */
function filterFor(p: Json): fc.Arbitrary<Record<string, unknown>> {
  return fc.letrec<{ filter: Record<string, unknown> }>((tie) => ({
    filter: fc.oneof(
      { depthSize: 'small', maxDepth: 4 },
      testFor(p),
      fc.array(tie('filter'), { minLength: 1, maxLength: 3 }).map((of) => ({ $and: of })),
      fc.array(tie('filter'), { minLength: 1, maxLength: 3 }).map((of) => ({ $or: of })),
      tie('filter').map((of) => ({ $not: of })),
      // Several keys in one filter.
      fc.array(tie('filter'), { minLength: 2, maxLength: 3 }).map((parts) => Object.fromEntries(parts.flatMap((q) => Object.entries(q)))),
    ),
  })).filter;
}

/** A payload (an object, as events carry) through JSON, and a filter drawn from it. */
const scenario = objectOf(payload)
  .map((p) => JSON.parse(JSON.stringify(p)) as Json)
  .chain((p) => filterFor(p).map((f) => ({ filter: f, payload: p })));

/** As a request carries it: through JSON, so `__proto__` stays an own key. */
const viaJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

describe('the evaluator and the reference', () => {
  it('agree on every generated filter and payload; a reason comes exactly with no match', () => {
    let matched = 0;
    let refused = 0;
    let evaluated = 0;
    fc.assert(
      fc.property(scenario, ({ filter: rawFilter, payload: p }) => {
        const f = viaJson(rawFilter);
        const parsed = parsePayloadFilter(f);
        // The generator stays within every bound but the count of conditions.
        const within = conditions(f) <= MAX_FILTER_CONDITIONS && Buffer.byteLength(JSON.stringify(f)) <= MAX_FILTER_BYTES;
        expect(parsed.ok, JSON.stringify(f)).toBe(within);
        if (!parsed.ok) {
          refused++;
          return;
        }
        const verdict = evaluatePayloadFilter(parsed.filter, p);
        expect(verdict.matches, `${JSON.stringify(f)} on ${JSON.stringify(p)}`).toBe(referenceMatch(f, p));
        expect(verdict.reason === undefined).toBe(verdict.matches);
        if (verdict.reason !== undefined) expect(verdict.reason.length).toBeGreaterThan(0);
        evaluated++;
        if (verdict.matches) matched++;
      }),
      { numRuns: 500, interruptAfterTimeLimit: 20_000 },
    );
    // Not vacuous: both outcomes were seen often.
    expect(evaluated).toBeGreaterThan(100);
    expect(matched / evaluated).toBeGreaterThan(0.1);
    expect((evaluated - matched) / evaluated).toBeGreaterThan(0.1);
    expect(refused).toBeLessThan(evaluated);
  });

  it('a prototype never answers for a path: the same payload without prototypes gives the same verdict', () => {
    fc.assert(
      fc.property(scenario, ({ filter: rawFilter, payload: p }) => {
        const f = viaJson(rawFilter);
        const parsed = parsePayloadFilter(f);
        if (!parsed.ok) return;
        // The same payload with every object made prototype-less.
        const bare = JSON.parse(JSON.stringify(p), (_k, v: unknown) =>
          v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.assign(Object.create(null) as object, v) : v,
        ) as unknown;
        expect(evaluatePayloadFilter(parsed.filter, bare)).toEqual(evaluatePayloadFilter(parsed.filter, p));
      }),
      { numRuns: 300, interruptAfterTimeLimit: 10_000 },
    );
  });
});

describe('each test of a path', () => {
  it('agrees with the reference for every operator and operand near every value of the payload', () => {
    const ops = ['$in', '$exists', '$gt', '$gte', '$lt', '$lte', '$prefix'];
    let checked = 0;
    let matched = 0;
    fc.assert(
      fc.property(objectOf(payload), fc.array(RANDOM_PATH, { maxLength: 3 }), (raw, extra) => {
        const p = viaJson(raw);
        const targets: [string, unknown][] = [...pathsOf(p), ...extra.map((path): [string, unknown] => [path, undefined])];
        for (const [path, v] of targets) {
          const { scalars, numbers, prefixes } = near(v);
          const tests: unknown[] = [...scalars, null, true, 'a', 0];
          for (const op of ops) {
            const operands: unknown[] =
              op === '$in'
                ? [scalars, [...scalars, 'z'], ['z', 2]]
                : op === '$exists'
                  ? [true, false]
                  : op === '$prefix'
                    ? [...prefixes, '', 'a']
                    : [...numbers, 0, 1.5];
            for (const operand of operands) tests.push({ [op]: operand });
          }
          for (const test of tests) {
            const f = viaJson({ [path]: test });
            const parsed = parsePayloadFilter(f);
            expect(parsed.ok, JSON.stringify(f)).toBe(true);
            if (!parsed.ok) continue;
            const verdict = evaluatePayloadFilter(parsed.filter, p);
            expect(verdict.matches, `${JSON.stringify(f)} on ${JSON.stringify(p)}`).toBe(referenceMatch(f, p));
            checked++;
            if (verdict.matches) matched++;
          }
        }
      }),
      { numRuns: 300, interruptAfterTimeLimit: 20_000 },
    );
    expect(checked).toBeGreaterThan(10_000);
    expect(matched / checked).toBeGreaterThan(0.1);
  });
});

describe('the size of a filter', () => {
  it("is counted as JSON.stringify's UTF-8 bytes, and stops past the limit", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 0, max: 400 }), (value, limit) => {
        const bytes = Buffer.byteLength(JSON.stringify(value), 'utf8');
        expect(jsonBytesWithin(value, 1_000_000)).toBe(bytes);
        expect(jsonBytesWithin(value, limit)).toBe(bytes > limit ? limit + 1 : bytes);
      }),
      { numRuns: 500, interruptAfterTimeLimit: 10_000 },
    );
  });
});
