/**
 * Validation of what callers send, without zod at run time (docs/architecture.md#one-contract):
 * the contract's zod schemas stay the one source, and the generator (lib/generate/contract-code.ts)
 * turns each input schema into a plain {@link InputNode} tree that this module walks. The walk
 * follows zod 4's own rules (which checks run after which issues, optional and defaulted keys,
 * strict objects) and words every issue as zod's English messages do, so a refusal reads exactly
 * as it did when zod parsed it; test/contract/input-validation.test.ts compares the two on
 * generated inputs. Only the schema kinds the contract's inputs use are supported; the generator
 * refuses any other.
 */
import { AppError } from './errors';
import { MAX_PAYLOAD_DEPTH } from './limits';

/** A transform or refinement: a named export of a zod-free contract module, so generated code can import it. */
type RuleFn = (value: never, ...rest: never[]) => unknown;

/** A check on a value that has the node's type. `message` overrides zod's wording. */
export type InputCheck =
  | { readonly k: 'min_length' | 'max_length'; readonly n: number; readonly message?: string }
  | { readonly k: 'gte' | 'lte' | 'gt' | 'lt'; readonly n: number; readonly message?: string }
  | { readonly k: 'int' }
  | { readonly k: 'regex'; readonly re: RegExp; readonly message?: string }
  | { readonly k: 'refine'; readonly fn: RuleFn; readonly message?: string; readonly path?: readonly (string | number)[] };

/** One node of an input schema. */
export type InputNode =
  | { readonly t: 'string' | 'number' | 'boolean' | 'unknown'; readonly checks?: readonly InputCheck[] }
  | {
      readonly t: 'object';
      readonly shape: Readonly<Record<string, InputNode>>;
      readonly strict?: boolean;
      readonly checks?: readonly InputCheck[];
    }
  | { readonly t: 'array'; readonly element: InputNode; readonly checks?: readonly InputCheck[] }
  | { readonly t: 'enum'; readonly values: readonly (string | number)[]; readonly checks?: readonly InputCheck[] }
  | { readonly t: 'optional' | 'nullable'; readonly inner: InputNode }
  | { readonly t: 'default'; readonly inner: InputNode; readonly value: unknown }
  | { readonly t: 'pipe'; readonly in: InputNode; readonly out: InputNode }
  | { readonly t: 'transform'; readonly fn: RuleFn };

/** One problem of an input: where (keys and indexes from the root) and what. */
export interface InputIssue {
  readonly path: (string | number)[];
  readonly message: string;
}

/** The outcome of {@link validateInput}: the parsed value (defaults applied, unknown keys stripped) or the issues. */
export type InputResult = { readonly success: true; readonly data: unknown } | { readonly success: false; readonly issues: InputIssue[] };

interface Issue {
  path: (string | number)[];
  message: string;
  /** zod's `continue`: true when later checks still run (a failed size or pattern), else the value is unusable. */
  continue?: boolean;
  /** An unknown key of a strict object (the one issue a pipe lets through). */
  unrecognized?: boolean;
}

interface Payload {
  value: unknown;
  issues: Issue[];
  aborted?: boolean;
}

function aborted(p: Payload, start = 0): boolean {
  if (p.aborted) return true;
  for (let i = start; i < p.issues.length; i++) if (p.issues[i]?.continue !== true) return true;
  return false;
}

function explicitlyAborted(p: Payload): boolean {
  return p.aborted === true || p.issues.some((i) => i.continue === false);
}

/** zod's name of a value's type in "received …". */
function receivedType(data: unknown): string {
  const t = typeof data;
  if (t === 'number') return Number.isNaN(data) ? 'NaN' : Number.isFinite(data) ? 'number' : String(data);
  if (t === 'object') {
    if (data === null) return 'null';
    if (Array.isArray(data)) return 'array';
    const proto = Object.getPrototypeOf(data) as unknown;
    const ctor = (data as { constructor?: { name?: string } }).constructor;
    if (proto !== Object.prototype && 'constructor' in (data as object) && ctor) return ctor.name ?? 'object';
  }
  return t;
}

function literal(v: unknown): string {
  return typeof v === 'string' ? `"${v}"` : `${String(v)}`;
}

function invalidType(expected: string, input: unknown, cont?: boolean): Issue {
  return {
    path: [],
    message: `Invalid input: expected ${expected}, received ${receivedType(input)}`,
    ...(cont === false ? { continue: false } : {}),
  };
}

const SIZED: Record<string, string> = { string: 'characters', array: 'items' };

function sizeMessage(big: boolean, origin: string, bound: number, inclusive: boolean): string {
  const adj = big ? (inclusive ? '<=' : '<') : inclusive ? '>=' : '>';
  const unit = SIZED[origin];
  const head = big ? 'Too big' : 'Too small';
  return unit ? `${head}: expected ${origin} to have ${adj}${bound} ${unit}` : `${head}: expected ${origin} to be ${adj}${bound}`;
}

/** Code points of a string, as zod counts a string's length. */
function codePoints(s: string): number {
  let count = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    if ((s.charCodeAt(i) & 0xfc00) === 0xd800 && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      count--;
      i++;
    }
  }
  return count;
}

function lengthOf(v: unknown): { n: number; origin: string } {
  if (typeof v === 'string') return { n: codePoints(v), origin: 'string' };
  return { n: (v as { length: number }).length, origin: Array.isArray(v) ? 'array' : 'unknown' };
}

function runCheck(c: InputCheck, p: Payload): void {
  const v = p.value;
  switch (c.k) {
    case 'min_length':
    case 'max_length': {
      const { n, origin } = lengthOf(v);
      const big = c.k === 'max_length';
      if (big ? n <= c.n : n >= c.n) return;
      p.issues.push({ path: [], message: c.message ?? sizeMessage(big, origin, c.n, true), continue: true });
      return;
    }
    case 'gte':
    case 'gt':
    case 'lte':
    case 'lt': {
      const x = v as number;
      const ok = c.k === 'gte' ? x >= c.n : c.k === 'gt' ? x > c.n : c.k === 'lte' ? x <= c.n : x < c.n;
      if (ok) return;
      const big = c.k === 'lte' || c.k === 'lt';
      p.issues.push({
        path: [],
        message: c.message ?? sizeMessage(big, typeof v === 'number' ? 'number' : 'unknown', c.n, c.k === 'gte' || c.k === 'lte'),
        continue: true,
      });
      return;
    }
    case 'int': {
      const x = v as number;
      if (!Number.isInteger(x)) {
        p.issues.push({ ...invalidType('int', x), continue: false });
        return;
      }
      if (!Number.isSafeInteger(x)) {
        p.issues.push({
          path: [],
          message:
            x > 0
              ? `Too big: expected int to be <=${Number.MAX_SAFE_INTEGER}`
              : `Too small: expected int to be >=${Number.MIN_SAFE_INTEGER}`,
          continue: true,
        });
      }
      return;
    }
    case 'regex': {
      c.re.lastIndex = 0;
      if (c.re.test(v as string)) return;
      p.issues.push({ path: [], message: c.message ?? `Invalid string: must match pattern ${c.re.toString()}`, continue: true });
      return;
    }
    case 'refine': {
      if ((c.fn as (value: unknown) => unknown)(v)) return;
      p.issues.push({ path: [...(c.path ?? [])], message: c.message ?? 'Invalid input', continue: true });
      return;
    }
  }
}

/** zod's runChecks: size checks run whenever the value has a length; the others only while nothing has aborted. */
function runChecks(p: Payload, checks: readonly InputCheck[]): void {
  let isAborted = aborted(p);
  for (const c of checks) {
    if (c.k === 'min_length' || c.k === 'max_length') {
      if (explicitlyAborted(p)) continue;
      const v = p.value as { length?: unknown } | null | undefined;
      if (v === null || v === undefined || v.length === undefined) continue;
    } else if (isAborted) continue;
    const before = p.issues.length;
    runCheck(c, p);
    if (p.issues.length !== before && !isAborted) isAborted = aborted(p, before);
  }
}

/** How a node treats an absent key (zod's optin / optout). */
function optIn(n: InputNode): 'optional' | 'defaulted' | undefined {
  switch (n.t) {
    case 'optional':
      return optIn(n.inner) === 'defaulted' ? 'defaulted' : 'optional';
    case 'nullable':
      return optIn(n.inner);
    case 'default':
      return 'defaulted';
    case 'transform':
      return 'optional';
    case 'pipe':
      return optIn(n.in);
    default:
      return undefined;
  }
}

function optOut(n: InputNode): 'optional' | undefined {
  switch (n.t) {
    case 'optional':
      return 'optional';
    case 'nullable':
      return optOut(n.inner);
    case 'pipe':
      return optOut(n.out);
    default:
      return undefined;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function prefix(key: string | number, issues: Issue[]): Issue[] {
  for (const i of issues) i.path.unshift(key);
  return issues;
}

function parseObject(n: Extract<InputNode, { t: 'object' }>, p: Payload): void {
  const input = p.value;
  if (!isObject(input)) {
    p.issues.push(invalidType('object', input));
    return;
  }
  const out: Record<string, unknown> = {};
  p.value = out;
  for (const key of Object.keys(n.shape)) {
    if (key === '__proto__') continue;
    const el = n.shape[key] as InputNode;
    const optin = optIn(el);
    const optout = optOut(el);
    const r = run(el, { value: input[key], issues: [] });
    const present = key in input;
    if (!present && optout === 'optional' && optin === 'optional') continue;
    if (r.issues.length) {
      if (optin !== undefined && optout === 'optional' && !present) continue;
      p.issues.push(...prefix(key, r.issues));
    }
    if (!present && optin === undefined) {
      if (!r.issues.length) p.issues.push({ path: [key], message: 'Invalid input: expected nonoptional, received undefined' });
      continue;
    }
    if (r.value === undefined) {
      if (present || (optin === 'defaulted' && optout !== 'optional')) out[key] = undefined;
    } else out[key] = r.value;
  }
  if (n.strict) {
    const unknown: string[] = [];
    for (const key in input) if (!Object.prototype.hasOwnProperty.call(n.shape, key)) unknown.push(key);
    if (unknown.length) {
      p.issues.push({
        path: [],
        message: `Unrecognized key${unknown.length > 1 ? 's' : ''}: ${unknown.map(literal).join(', ')}`,
        unrecognized: true,
      });
    }
  }
}

function parse(n: InputNode, p: Payload): Payload {
  const v = p.value;
  switch (n.t) {
    case 'string':
      if (typeof v !== 'string') p.issues.push(invalidType('string', v));
      return p;
    case 'number':
      if (typeof v !== 'number' || !Number.isFinite(v)) p.issues.push(invalidType('number', v));
      return p;
    case 'boolean':
      if (typeof v !== 'boolean') p.issues.push(invalidType('boolean', v));
      return p;
    case 'unknown':
      return p;
    case 'enum':
      if (!n.values.includes(v as string | number)) {
        p.issues.push({
          path: [],
          message:
            n.values.length === 1
              ? `Invalid input: expected ${literal(n.values[0])}`
              : `Invalid option: expected one of ${n.values.map(literal).join('|')}`,
        });
      }
      return p;
    case 'object':
      parseObject(n, p);
      return p;
    case 'array': {
      if (!Array.isArray(v)) {
        p.issues.push(invalidType('array', v));
        return p;
      }
      const out: unknown[] = new Array<unknown>(v.length);
      p.value = out;
      v.forEach((item, i) => {
        const r = run(n.element, { value: item, issues: [] });
        if (r.issues.length) p.issues.push(...prefix(i, r.issues));
        out[i] = r.value;
      });
      return p;
    }
    case 'optional':
      if (v === undefined) {
        if (optIn(n.inner) !== 'defaulted') return p;
        const r = run(n.inner, { value: v, issues: [] });
        p.value = r.issues.length ? undefined : r.value;
        return p;
      }
      return run(n.inner, p);
    case 'nullable':
      return v === null ? p : run(n.inner, p);
    case 'default': {
      if (v === undefined) {
        p.value = n.value;
        return p;
      }
      const r = run(n.inner, p);
      if (r.value === undefined) r.value = n.value;
      return r;
    }
    case 'transform':
      p.value = (n.fn as (value: unknown) => unknown)(v);
      return p;
    case 'pipe': {
      const left = run(n.in, p);
      if (left.issues.some((i) => !i.unrecognized)) {
        left.aborted = true;
        return left;
      }
      return run(n.out, { value: left.value, issues: left.issues });
    }
  }
}

function run(n: InputNode, p: Payload): Payload {
  const checks = 'checks' in n ? n.checks : undefined;
  const out = parse(n, p);
  if (checks?.length) runChecks(out, checks);
  return out;
}

/**
 * The body of an operation that takes none, for a surface whose arguments are flat (MCP): an empty
 * strict object, so any argument beyond the operation's fields is refused as REST refuses an
 * unknown field of a body (`Unrecognized key`).
 */
export const NO_BODY: InputNode = { t: 'object', shape: {}, strict: true };

/** Parses `value` with an input schema the generator produced: zod's `safeParse`, with its issues' paths and messages. */
export function validateInput(schema: InputNode, value: unknown): InputResult {
  const p = run(schema, { value, issues: [] });
  return p.issues.length
    ? { success: false, issues: p.issues.map((i) => ({ path: i.path, message: i.message })) }
    : { success: true, data: p.value };
}

/**
 * Whether `value` (parsed JSON) nests arrays and objects deeper than `max` levels (one that is an
 * array or object is level 1). Iterative, so no nesting overflows the stack; it stops at the
 * first node too deep.
 */
function nestsDeeperThan(value: unknown, max: number): boolean {
  const isNode = (v: unknown): v is object => v !== null && typeof v === 'object';
  if (!isNode(value)) return false;
  const stack: [node: object, level: number][] = [[value, 1]];
  for (let next = stack.pop(); next; next = stack.pop()) {
    const [node, level] = next;
    if (level > max) return true;
    // Own enumerable values: a `__proto__` key that JSON.parse made an own property counts like any other.
    for (const child of Array.isArray(node) ? (node as unknown[]) : Object.values(node)) if (isNode(child)) stack.push([child, level + 1]);
  }
  return false;
}

/**
 * The refusal of an event payload nested deeper than {@link MAX_PAYLOAD_DEPTH} (docs/behaviour.md#limits),
 * worded once for the publisher and `POST /local/events`; null when the payload is within it.
 */
export function payloadDepthRefusal(payload: unknown): AppError | null {
  if (!nestsDeeperThan(payload, MAX_PAYLOAD_DEPTH)) return null;
  const message = `nests arrays and objects more than ${MAX_PAYLOAD_DEPTH} levels deep; at most ${MAX_PAYLOAD_DEPTH} levels are accepted`;
  return new AppError('ValidationError', `The payload ${message}`, { issues: [{ path: 'payload', message }] });
}
