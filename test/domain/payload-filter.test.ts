/**
 * docs/behaviour.md#payload-filters: what a filter means (equality, operators, missing paths,
 * type mismatches, lists, the reason in words), that paths reach own properties only, and that an
 * invalid filter is refused with an issue naming its place for each bound and each malformed
 * operator. The evaluator against a reference over generated filters: ./payload-filter.property.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { isAppError } from '../../lambdas/contract/errors';
import {
  MAX_FILTER_BYTES,
  MAX_FILTER_CONDITIONS,
  MAX_FILTER_DEPTH,
  MAX_FILTER_IN_VALUES,
  MAX_FILTER_PATH_CHARS,
  MAX_FILTER_PATH_SEGMENTS,
  MAX_REASON_CHARS,
  MAX_REASON_VALUE_CHARS,
} from '../../lambdas/contract/filter-limits';
import { FILTER_TEST_EXAMPLES } from '../../lambdas/contract/filter-schemas';
import {
  evaluatePayloadFilter,
  filterIssuePath,
  parsePayloadFilter,
  requirePayloadFilter,
  type FilterVerdict,
} from '../../lambdas/domain/payload-filter';

/** The verdict of `filter` on `payload`; the filter must be valid. */
function verdict(filter: unknown, payload: unknown): FilterVerdict {
  const parsed = parsePayloadFilter(filter);
  if (!parsed.ok) throw new Error(`invalid filter: ${JSON.stringify(parsed.issues)}`);
  return evaluatePayloadFilter(parsed.filter, payload);
}

/** The issues of an invalid filter, as the problem names them (under `body.filter`). */
function issuesOf(filter: unknown): { path: string; message: string }[] {
  const parsed = parsePayloadFilter(filter);
  expect(parsed.ok, 'the filter is refused').toBe(false);
  return parsed.ok ? [] : parsed.issues.map((i) => ({ path: filterIssuePath('body.filter', i.path), message: i.message }));
}

const order = {
  type: 'order.shipped',
  data: { order: { id: 'o-1', warehouse: 'ber-1', total: 250, items: [{ sku: 'ab-1' }, { sku: 'cd-2' }] } },
};

describe('the examples of the reference', () => {
  it('are what the evaluator answers: one payload that matches, one that does not, with its reason', () => {
    expect(FILTER_TEST_EXAMPLES.map((e) => e.response.matches)).toEqual([true, false]);
    for (const e of FILTER_TEST_EXAMPLES) expect(verdict(e.request.filter, e.request.payload)).toEqual(e.response);
  });
});

describe('what a filter means', () => {
  it('equality: same type and value, on a dotted path', () => {
    expect(verdict({ 'data.order.warehouse': 'ber-1' }, order)).toEqual({ matches: true });
    expect(verdict({ 'data.order.warehouse': 'ams-1' }, order)).toEqual({
      matches: false,
      reason: 'data.order.warehouse is "ber-1", not "ams-1"',
    });
    // No coercion: the string "250" is not the number 250, nor "true" true.
    expect(verdict({ 'data.order.total': '250' }, order)).toEqual({ matches: false, reason: 'data.order.total is 250, not "250"' });
    expect(verdict({ flag: true }, { flag: 'true' })).toEqual({ matches: false, reason: 'flag is "true", not true' });
    expect(verdict({ n: 1 }, { n: 1.0 }).matches).toBe(true);
  });

  it('null equals only a present null: a missing path is no match', () => {
    expect(verdict({ 'data.gone': null }, { data: { gone: null } }).matches).toBe(true);
    expect(verdict({ 'data.gone': null }, { data: {} })).toEqual({ matches: false, reason: 'data.gone is missing' });
  });

  it('$in: one of a list of scalars', () => {
    expect(verdict({ 'data.order.warehouse': { $in: ['ams-1', 'ber-1'] } }, order).matches).toBe(true);
    expect(verdict({ 'data.order.warehouse': { $in: ['ams-1'] } }, order)).toEqual({
      matches: false,
      reason: 'data.order.warehouse is "ber-1", not one of ["ams-1"]',
    });
    expect(verdict({ n: { $in: ['1', true] } }, { n: 1 }).matches).toBe(false);
    expect(verdict({ n: { $in: [null] } }, { n: null }).matches).toBe(true);
    expect(verdict({ n: { $in: [1] } }, { n: [1] })).toEqual({ matches: false, reason: 'n is an array, not one of [1]' });
  });

  it('$exists: present (null included) or missing', () => {
    expect(verdict({ 'data.order.id': { $exists: true } }, order).matches).toBe(true);
    expect(verdict({ 'data.n': { $exists: true } }, { data: { n: null } }).matches).toBe(true);
    expect(verdict({ 'data.x': { $exists: true } }, order)).toEqual({ matches: false, reason: 'data.x is missing' });
    expect(verdict({ 'data.x': { $exists: false } }, order).matches).toBe(true);
    expect(verdict({ 'data.order.id': { $exists: false } }, order)).toEqual({
      matches: false,
      reason: 'data.order.id is "o-1", but it must be missing',
    });
  });

  it('$gt, $gte, $lt, $lte compare numbers; another type is no match, not an error', () => {
    expect(verdict({ 'data.order.total': { $gt: 100, $lte: 250 } }, order).matches).toBe(true);
    expect(verdict({ 'data.order.total': { $gt: 250 } }, order)).toEqual({
      matches: false,
      reason: 'data.order.total is 250, not greater than 250',
    });
    expect(verdict({ 'data.order.total': { $gte: 251 } }, order).reason).toBe('data.order.total is 250, not at least 251');
    expect(verdict({ 'data.order.total': { $lt: 250 } }, order).reason).toBe('data.order.total is 250, not less than 250');
    expect(verdict({ 'data.order.total': { $lte: -1.5 } }, order).reason).toBe('data.order.total is 250, not at most -1.5');
    expect(verdict({ 'data.order.id': { $gt: 0 } }, order)).toEqual({ matches: false, reason: 'data.order.id is "o-1", not a number' });
    expect(verdict({ 'data.order': { $lt: 0 } }, order)).toEqual({ matches: false, reason: 'data.order is an object, not a number' });
    expect(verdict({ 'data.order.total': { $gt: 1 } }, { data: {} })).toEqual({ matches: false, reason: 'data.order.total is missing' });
  });

  it('$prefix: a string that starts with it', () => {
    expect(verdict({ type: { $prefix: 'order.' } }, order).matches).toBe(true);
    expect(verdict({ type: { $prefix: 'invoice.' } }, order)).toEqual({
      matches: false,
      reason: 'type is "order.shipped", which does not start with "invoice."',
    });
    expect(verdict({ 'data.order.total': { $prefix: '2' } }, order)).toEqual({
      matches: false,
      reason: 'data.order.total is 250, not a string',
    });
    // Plain text, never a pattern.
    expect(verdict({ type: { $prefix: 'order.*' } }, order).matches).toBe(false);
  });

  it('lists: a segment of digits indexes one; a path never fans out over a list', () => {
    expect(verdict({ 'data.order.items.1.sku': 'cd-2' }, order).matches).toBe(true);
    expect(verdict({ 'data.order.items.2.sku': { $exists: true } }, order).matches).toBe(false);
    // Not an index: a name, a leading zero, a sign; a list's length is no property of its JSON.
    for (const path of ['data.order.items.sku', 'data.order.items.01.sku', 'data.order.items.-1.sku', 'data.order.items.length'])
      expect(verdict({ [path]: { $exists: true } }, order).matches, path).toBe(false);
    // A list is not compared with one of its items.
    expect(verdict({ tags: 'vip' }, { tags: ['vip'] })).toEqual({ matches: false, reason: 'tags is an array, not "vip"' });
    // On an object, digits name a key.
    expect(verdict({ 'm.0': 'x' }, { m: { '0': 'x' } }).matches).toBe(true);
  });

  it('nothing resolves inside a string, a number or null', () => {
    expect(verdict({ 'type.length': { $exists: true } }, order).matches).toBe(false);
    expect(verdict({ 'type.0': 'o' }, order).matches).toBe(false);
    expect(verdict({ 'data.order.total.x': { $exists: false } }, order).matches).toBe(true);
  });

  it('all keys of a filter must hold; the first that fails is the reason', () => {
    expect(verdict({ type: 'order.shipped', 'data.order.total': { $gt: 100 } }, order).matches).toBe(true);
    expect(verdict({ type: 'order.shipped', 'data.order.total': { $gt: 300 }, 'data.x': 1 }, order).reason).toBe(
      'data.order.total is 250, not greater than 300',
    );
    expect(verdict({ $and: [{ type: 'order.shipped' }, { 'data.order.id': 'o-2' }] }, order).reason).toBe(
      'data.order.id is "o-1", not "o-2"',
    );
  });

  it('an empty filter matches every payload', () => {
    for (const payload of [{}, null, 1, 'x', [1], order]) expect(verdict({}, payload)).toEqual({ matches: true });
  });

  it('$or: one of its filters; its reason lists why each failed', () => {
    expect(verdict({ $or: [{ 'data.order.warehouse': 'ams-1' }, { 'data.order.total': { $gte: 200 } }] }, order).matches).toBe(true);
    expect(verdict({ $or: [{ 'data.order.warehouse': 'ams-1' }, { 'data.order.total': { $gte: 300 } }] }, order).reason).toBe(
      'none of the $or filters matched: data.order.warehouse is "ber-1", not "ams-1"; data.order.total is 250, not at least 300',
    );
  });

  it('$not: the opposite of its filter; its reason says what held', () => {
    expect(verdict({ $not: { 'data.order.warehouse': 'ams-1' } }, order).matches).toBe(true);
    expect(verdict({ $not: { 'data.order.warehouse': 'ber-1' } }, order)).toEqual({
      matches: false,
      reason: 'data.order.warehouse is "ber-1" (excluded by $not)',
    });
    expect(verdict({ $not: { type: { $prefix: 'order.' }, 'data.order.total': { $gt: 1 } } }, order).reason).toBe(
      'type is "order.shipped", which starts with "order." and data.order.total is 250, greater than 1 (excluded by $not)',
    );
    expect(verdict({ $not: { $not: { 'data.order.warehouse': 'ams-1' } } }, order).reason).toBe(
      'data.order.warehouse is "ber-1", not "ams-1" (excluded by $not)',
    );
  });

  it('cuts long values, long lists and long reasons', () => {
    const long = 'x'.repeat(500);
    expect(verdict({ s: 'y' }, { s: long }).reason).toBe(`s is "${'x'.repeat(MAX_REASON_VALUE_CHARS)}…", not "y"`);
    const values = Array.from({ length: 15 }, (_, i) => i);
    expect(verdict({ n: { $in: values } }, { n: -1 }).reason).toBe('n is -1, not one of [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, … 5 more]');
    const alternatives = Array.from({ length: 60 }, (_, i) => ({ [`data.field${i}`]: 'z' }));
    const { reason } = verdict({ $or: alternatives }, { data: {} });
    expect(reason).toHaveLength(MAX_REASON_CHARS);
    expect(reason?.endsWith('…')).toBe(true);
  });
});

describe('paths reach own properties only', () => {
  const empty = JSON.parse('{"data": {"text": "x", "list": [1]}}') as unknown;

  it('never a prototype: constructor, __proto__, toString, hasOwnProperty are missing unless the payload has them', () => {
    for (const path of [
      'constructor',
      'constructor.name',
      '__proto__',
      '__proto__.constructor',
      'toString',
      'hasOwnProperty',
      'valueOf',
      'data.constructor',
      'data.text.constructor',
      'data.text.length',
      'data.list.length',
      'data.list.constructor',
      'data.list.map',
    ]) {
      expect(verdict({ [path]: { $exists: true } }, empty), path).toEqual({ matches: false, reason: `${path} is missing` });
      expect(verdict({ [path]: { $exists: false } }, empty).matches, path).toBe(true);
    }
    expect(verdict({ 'constructor.name': 'Object' }, empty).matches).toBe(false);
    expect(verdict({ 'data.text.constructor.name': 'String' }, empty).matches).toBe(false);
  });

  it('finds them when the payload has them as its own keys, __proto__ included', () => {
    const own = JSON.parse('{"__proto__": {"polluted": "yes"}, "constructor": {"name": "mine"}, "toString": 1}') as unknown;
    expect(verdict({ '__proto__.polluted': 'yes', 'constructor.name': 'mine', toString: 1 }, own)).toEqual({ matches: true });
    // Nothing leaked into the prototype of every object.
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('the filter own keys too: a __proto__ key in a filter is a path, not a prototype', () => {
    const filter = JSON.parse('{"__proto__": {"$exists": true}}') as unknown;
    expect(verdict(filter, {}).matches).toBe(false);
    expect(verdict(filter, JSON.parse('{"__proto__": 1}')).matches).toBe(true);
  });

  it('never runs a getter', () => {
    const payload = Object.defineProperty({}, 'trap', {
      enumerable: true,
      get() {
        throw new Error('getter ran');
      },
    });
    expect(verdict({ trap: { $exists: true } }, payload).matches).toBe(false);
  });
});

describe('an invalid filter is refused, each issue naming its place in the filter', () => {
  it('a filter that is not an object', () => {
    for (const raw of [null, [], 'type', 1, true]) {
      expect(issuesOf(raw)).toEqual([{ path: 'body.filter', message: expect.stringMatching(/^A filter is a JSON object/) as string }]);
    }
  });

  it(`over ${MAX_FILTER_BYTES} bytes of JSON`, () => {
    const at = (n: number) => ({ s: 'é'.repeat(n) });
    // 8 bytes of {"s":""} and two per é.
    expect(parsePayloadFilter(at((MAX_FILTER_BYTES - 8) / 2)).ok).toBe(true);
    expect(issuesOf(at((MAX_FILTER_BYTES - 8) / 2 + 1))).toEqual([
      { path: 'body.filter', message: `The filter is over ${MAX_FILTER_BYTES} bytes of JSON; at most ${MAX_FILTER_BYTES} are allowed` },
    ]);
    // Measured without recursion: no nesting overflows the stack.
    let deep: unknown = 1;
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(issuesOf({ a: deep })[0]?.message).toMatch(/over 4096 bytes/);
  });

  it(`nested more than ${MAX_FILTER_DEPTH} levels`, () => {
    const nest = (levels: number): unknown => (levels === 1 ? { a: 1 } : { $not: nest(levels - 1) });
    expect(parsePayloadFilter(nest(MAX_FILTER_DEPTH)).ok).toBe(true);
    const issues = issuesOf(nest(MAX_FILTER_DEPTH + 1));
    expect(issues).toEqual([
      { path: `body.filter${'.$not'.repeat(MAX_FILTER_DEPTH)}`, message: expect.stringContaining('more than 8 levels') as string },
    ]);
    expect(issuesOf({ $and: [{ $or: [{ a: 1 }, nest(MAX_FILTER_DEPTH - 1)] }] })[0]?.path).toBe(
      `body.filter.$and[0].$or[1]${'.$not'.repeat(MAX_FILTER_DEPTH - 2)}`,
    );
  });

  it(`more than ${MAX_FILTER_CONDITIONS} conditions`, () => {
    const paths = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, i]));
    expect(parsePayloadFilter(paths(MAX_FILTER_CONDITIONS)).ok).toBe(true);
    expect(issuesOf(paths(MAX_FILTER_CONDITIONS + 1))).toEqual([
      {
        path: `body.filter.p${MAX_FILTER_CONDITIONS}`,
        message: expect.stringContaining(`more than ${MAX_FILTER_CONDITIONS} conditions`) as string,
      },
    ]);
    // Each operator counts one, and so does each $and, $or, $not.
    const ops = { n: { $gt: 0, $lt: 9 } };
    const many = { $and: Array.from({ length: MAX_FILTER_CONDITIONS / 2 }, () => ops) };
    expect(issuesOf(many)).toEqual([
      {
        path: `body.filter.$and[${MAX_FILTER_CONDITIONS / 2 - 1}].n.$lt`,
        message: expect.stringContaining('this is condition 65') as string,
      },
    ]);
  });

  it(`a path over ${MAX_FILTER_PATH_CHARS} characters or ${MAX_FILTER_PATH_SEGMENTS} segments, or with an empty segment`, () => {
    const long = 'a'.repeat(MAX_FILTER_PATH_CHARS + 1);
    expect(parsePayloadFilter({ [long.slice(1)]: 1 }).ok).toBe(true);
    expect(issuesOf({ [long]: 1 })).toEqual([
      {
        path: `body.filter.${long}`,
        message: `The path is ${MAX_FILTER_PATH_CHARS + 1} characters long; at most ${MAX_FILTER_PATH_CHARS} are allowed`,
      },
    ]);
    const segs = (n: number) => Array.from({ length: n }, (_, i) => `s${i}`).join('.');
    expect(parsePayloadFilter({ [segs(MAX_FILTER_PATH_SEGMENTS)]: 1 }).ok).toBe(true);
    expect(issuesOf({ [segs(MAX_FILTER_PATH_SEGMENTS + 1)]: 1 })).toEqual([
      {
        path: `body.filter[${JSON.stringify(segs(MAX_FILTER_PATH_SEGMENTS + 1))}]`,
        message: `The path has ${MAX_FILTER_PATH_SEGMENTS + 1} segments; at most ${MAX_FILTER_PATH_SEGMENTS} are allowed`,
      },
    ]);
    for (const path of ['', '.a', 'a.', 'a..b'])
      expect(issuesOf({ [path]: 1 })).toEqual([
        { path: `body.filter[${JSON.stringify(path)}]`, message: expect.stringContaining('has an empty segment') as string },
      ]);
  });

  it(`$in: a non-empty list of at most ${MAX_FILTER_IN_VALUES} scalars`, () => {
    const list = (n: number) => Array.from({ length: n }, (_, i) => i);
    expect(parsePayloadFilter({ n: { $in: list(MAX_FILTER_IN_VALUES) } }).ok).toBe(true);
    expect(issuesOf({ n: { $in: list(MAX_FILTER_IN_VALUES + 1) } })).toEqual([
      { path: 'body.filter.n.$in', message: `$in lists ${MAX_FILTER_IN_VALUES + 1} values; at most ${MAX_FILTER_IN_VALUES} are allowed` },
    ]);
    expect(issuesOf({ n: { $in: [] } })).toEqual([{ path: 'body.filter.n.$in', message: expect.stringContaining('non-empty') as string }]);
    expect(issuesOf({ n: { $in: 'ams-1' } })).toEqual([
      { path: 'body.filter.n.$in', message: '$in takes a list of JSON scalars (strings, numbers, booleans, null), not a string' },
    ]);
    expect(issuesOf({ n: { $in: [1, { a: 1 }, [2]] } })).toEqual([
      { path: 'body.filter.n.$in[1]', message: expect.stringContaining('not an object') as string },
      { path: 'body.filter.n.$in[2]', message: expect.stringContaining('not an array') as string },
    ]);
  });

  it('each operator with an operand of the wrong type', () => {
    expect(issuesOf({ n: { $exists: 'yes' } })).toEqual([
      { path: 'body.filter.n.$exists', message: '$exists takes true or false, not a string' },
    ]);
    for (const op of ['$gt', '$gte', '$lt', '$lte']) {
      expect(issuesOf({ n: { [op]: '5' } })).toEqual([
        { path: `body.filter.n.${op}`, message: `${op} takes a finite number, not a string` },
      ]);
    }
    // JSON.parse reads 1e999 as Infinity.
    expect(issuesOf(JSON.parse('{"n": {"$gt": 1e999}}'))).toEqual([
      { path: 'body.filter.n.$gt', message: '$gt takes a finite number, not a number out of range' },
    ]);
    expect(issuesOf(JSON.parse('{"n": 1e999}'))[0]?.message).toMatch(/not a number out of range/);
    expect(issuesOf({ n: { $prefix: 1 } })).toEqual([{ path: 'body.filter.n.$prefix', message: '$prefix takes a string, not a number' }]);
  });

  it('unknown operators, and operators in the wrong place', () => {
    expect(issuesOf({ $nor: [] })).toEqual([
      { path: 'body.filter.$nor', message: expect.stringContaining('Unknown operator $nor') as string },
    ]);
    expect(issuesOf({ n: { $regex: 'a.*' } })).toEqual([
      { path: 'body.filter.n.$regex', message: expect.stringContaining('Unknown operator $regex') as string },
    ]);
    expect(issuesOf({ n: { $eq: 1 } })).toEqual([
      { path: 'body.filter.n.$eq', message: 'Unknown operator $eq: for equality write the value itself, as in {"path": value}' },
    ]);
    expect(issuesOf({ $gt: 1 })).toEqual([
      { path: 'body.filter.$gt', message: expect.stringContaining("inside the path's operator object") as string },
    ]);
    expect(issuesOf({ n: { $not: { $gt: 1 } } })).toEqual([
      { path: 'body.filter.n.$not', message: expect.stringContaining('$not combines filters') as string },
    ]);
  });

  it('$and and $or take non-empty lists of filters, $not one filter', () => {
    expect(issuesOf({ $and: {} })).toEqual([
      { path: 'body.filter.$and', message: '$and takes a non-empty list of filters, not an object' },
    ]);
    expect(issuesOf({ $or: [] })).toEqual([
      { path: 'body.filter.$or', message: '$or takes a non-empty list of filters, not an empty list' },
    ]);
    expect(issuesOf({ $or: [{ a: 1 }, 'b'] })).toEqual([
      { path: 'body.filter.$or[1]', message: expect.stringContaining('not a string') as string },
    ]);
    expect(issuesOf({ $not: [{ a: 1 }] })).toEqual([
      { path: 'body.filter.$not', message: expect.stringContaining('not an array') as string },
    ]);
  });

  it('a path compared with an object or a list', () => {
    expect(issuesOf({ 'data.order': { id: 'o-1' } })).toEqual([
      {
        path: 'body.filter["data.order"]',
        message: 'Equality on objects is not supported: compare each field by its own path, as in "data.order.id"',
      },
    ]);
    expect(issuesOf({ 'data.order': { $exists: true, id: 'o-1' } })[0]?.message).toMatch(/^Equality on objects is not supported/);
    expect(issuesOf({ n: {} })[0]?.message).toMatch(/^An operator object needs at least one operator/);
    expect(issuesOf({ n: [1, 2] })).toEqual([{ path: 'body.filter.n', message: expect.stringContaining('{"$in": [...]}') as string }]);
  });

  it('every problem at once, each at its place', () => {
    const issues = issuesOf({ 'a..b': 1, ok: 1, $and: [{ x: { $in: [] } }, { y: { $gt: 'z' } }], $not: { z: { $foo: 1 } } });
    expect(issues.map((i) => i.path)).toEqual([
      'body.filter["a..b"]',
      'body.filter.$and[0].x.$in',
      'body.filter.$and[1].y.$gt',
      'body.filter.$not.z.$foo',
    ]);
  });

  it('as a 400 InvalidFilter whose issues and detail name the places', () => {
    let thrown: unknown;
    try {
      requirePayloadFilter({ 'data.order.warehouse': { $in: 'ams-1' } }, 'body.filter');
    } catch (e) {
      thrown = e;
    }
    expect(isAppError(thrown)).toBe(true);
    const error = thrown as { tag: string; status: number; detail: string; extensions: { issues: unknown } };
    expect(error).toMatchObject({ tag: 'InvalidFilter', status: 400 });
    expect(error.extensions.issues).toEqual([
      {
        path: 'body.filter["data.order.warehouse"].$in',
        message: '$in takes a list of JSON scalars (strings, numbers, booleans, null), not a string',
      },
    ]);
    expect(error.detail).toBe(
      'Invalid filter: body.filter["data.order.warehouse"].$in: $in takes a list of JSON scalars (strings, numbers, booleans, null), not a string',
    );
  });
});

describe('filterIssuePath', () => {
  it('writes names after dots, indexes and names that are no plain word in brackets', () => {
    expect(filterIssuePath('body.filter', [])).toBe('body.filter');
    expect(filterIssuePath('body.filter', ['$or', 0, 'warehouse', '$in', 3])).toBe('body.filter.$or[0].warehouse.$in[3]');
    expect(filterIssuePath('filter', ['data.order.id', '0', 'a b', 'x"y'])).toBe('filter["data.order.id"]["0"]["a b"]["x\\"y"]');
  });
});
