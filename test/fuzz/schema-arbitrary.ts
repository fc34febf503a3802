/**
 * fast-check arbitraries from the contract's zod schemas, through zod's JSON Schema export:
 * values inside the schema (with its boundaries: shortest and longest strings, fewest and most
 * items, smallest and largest numbers) and values that break it one place at a time (a wrong
 * type, one past a bound, a missing required or an unknown member, a hostile string).
 * Domain hints replace a property's values where the schema alone cannot say what works
 * (a URL the URL guard accepts, an event type of the catalogue).
 */
import fc from 'fast-check';
import { z } from 'zod';

/** A JSON Schema node, as zod exports it. */
export type JsonSchema = { readonly [key: string]: any };

/** Valid values for a property, by property name (the schema's own generator otherwise). */
export type Hints = Readonly<Record<string, fc.Arbitrary<unknown>>>;

/** The JSON Schema of a zod schema, as a client sends it (preprocessing input side). */
export function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
}

function deref(node: JsonSchema, root: JsonSchema): JsonSchema {
  let n = node;
  for (let i = 0; i < 10 && typeof n.$ref === 'string'; i++) {
    const name = n.$ref.replace(/^#\/\$defs\//, '');
    n = (root.$defs as Record<string, JsonSchema> | undefined)?.[name] ?? {};
  }
  return n;
}

/** Strings that hurt: control and format characters, lone surrogates, injection shapes, huge. */
const HOSTILE_STRINGS: readonly string[] = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff\ud800',
  '\u202e\u0041\u202c',
  '\ufeff',
  '\r\n\t',
  '💥'.repeat(40),
  '../../etc/passwd',
  '%00',
  '%2e%2e%2f',
  "' OR '1'='1",
  '{"$ne":null}',
  '${jndi:ldap://x}',
  '<script>alert(1)</script>',
  '__proto__',
  'constructor',
  'null',
  'undefined',
  'NaN',
  '-0',
  '1e309',
  'true',
  '[]',
  '{}',
];

/** Values of every JSON type (and their edges), for "wrong type" mutations. */
export const anyJsonEdge: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(null, true, false, 0, -1, 1.5, -0, 1e308, Number.MAX_SAFE_INTEGER + 2, '', [], {}, [null], { '': null }),
  fc.constantFrom(...HOSTILE_STRINGS),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.jsonValue({ maxDepth: 3 }),
);

/** A string as hostile as it gets, of any length up to `max` (then sometimes far past it). */
export function hostileString(max = 300): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
    { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 60 }) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 60 }) },
    { weight: 1, arbitrary: fc.nat({ max: 3 }).map((k) => 'x'.repeat([max + 1, max * 4 + 7, 10_000, 70_000][k]!)) },
  );
}

function stringInSchema(node: JsonSchema): fc.Arbitrary<string> {
  const min = typeof node.minLength === 'number' ? node.minLength : 0;
  const max = typeof node.maxLength === 'number' ? node.maxLength : Math.max(min, 80);
  if (Array.isArray(node.enum)) return fc.constantFrom(...(node.enum as string[]));
  if (typeof node.pattern === 'string') {
    return fc.stringMatching(new RegExp(node.pattern)).filter((s) => s.length >= min && s.length <= max);
  }
  if (node.format === 'date-time') return instantString;
  const short = Math.min(max, min + 40);
  return fc.oneof(
    { weight: 4, arbitrary: fc.string({ minLength: min, maxLength: short }) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: min, maxLength: short }).filter((s) => s.length <= max) },
    // The bounds themselves.
    { weight: 1, arbitrary: fc.constantFrom('a'.repeat(Math.max(min, 1) <= max ? Math.max(min, 1) : min), 'é'.repeat(max)) },
  );
}

/** An ISO 8601 instant as the contract accepts it: Z or an offset, with or without milliseconds. */
export const instantString: fc.Arbitrary<string> = fc
  .tuple(
    fc.date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2030-12-31T23:59:59Z'), noInvalidDate: true }),
    fc.constantFrom('Z', 'ms', '+02:00', '-05:30'),
  )
  .map(([d, form]) => {
    const iso = d.toISOString();
    if (form === 'Z') return iso.replace(/\.\d{3}Z$/, 'Z');
    if (form === 'ms') return iso;
    return iso.replace(/\.\d{3}Z$/, form);
  });

/** Values the schema node accepts (up to refinements JSON Schema cannot say). */
export function validArbitrary(node: JsonSchema, root: JsonSchema = node, hints: Hints = {}, name?: string): fc.Arbitrary<unknown> {
  if (name && hints[name]) return hints[name];
  const n = deref(node, root);
  if (Array.isArray(n.anyOf)) return fc.oneof(...(n.anyOf as JsonSchema[]).map((s) => validArbitrary(s, root, hints, name)));
  if (Array.isArray(n.enum)) return fc.constantFrom(...(n.enum as unknown[]));
  if ('const' in n) return fc.constant(n.const);
  switch (n.type) {
    case 'string':
      return stringInSchema(n);
    case 'integer':
    case 'number': {
      const min = typeof n.minimum === 'number' ? n.minimum : -1_000_000;
      const max = typeof n.maximum === 'number' ? n.maximum : 1_000_000;
      return fc.oneof(fc.integer({ min, max }), fc.constantFrom(min, max));
    }
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const item = validArbitrary((n.items as JsonSchema | undefined) ?? {}, root, hints, name ? `${name}[]` : undefined);
      const minLength = typeof n.minItems === 'number' ? n.minItems : 0;
      const maxLength = typeof n.maxItems === 'number' ? n.maxItems : 10;
      return fc.oneof(
        { weight: 4, arbitrary: fc.array(item, { minLength, maxLength: Math.min(maxLength, minLength + 4) }) },
        { weight: 1, arbitrary: fc.array(item, { minLength: maxLength, maxLength }) },
      );
    }
    case 'object': {
      const props = (n.properties ?? {}) as Record<string, JsonSchema>;
      const required = new Set((n.required ?? []) as string[]);
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [key, schema] of Object.entries(props)) model[key] = validArbitrary(schema, root, hints, key);
      return fc.record(model, { requiredKeys: [...required] });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** Values that break the node: a wrong type, or one step past one of its bounds. */
export function invalidArbitrary(node: JsonSchema, root: JsonSchema = node): fc.Arbitrary<unknown> {
  const n = deref(node, root);
  const options: fc.Arbitrary<unknown>[] = [anyJsonEdge];
  if (n.type === 'string') {
    if (typeof n.maxLength === 'number') options.push(fc.constant('y'.repeat(n.maxLength + 1)));
    if (typeof n.minLength === 'number' && n.minLength > 0) options.push(fc.constant('y'.repeat(n.minLength - 1)));
    options.push(hostileString(typeof n.maxLength === 'number' ? n.maxLength : 300));
  }
  if (n.type === 'integer' || n.type === 'number') {
    if (typeof n.minimum === 'number') options.push(fc.constantFrom(n.minimum - 1, n.minimum - 0.5));
    if (typeof n.maximum === 'number') options.push(fc.constantFrom(n.maximum + 1, n.maximum + 0.5));
  }
  if (n.type === 'array') {
    const item = deref((n.items as JsonSchema | undefined) ?? {}, root);
    if (typeof n.maxItems === 'number')
      options.push(fc.array(validArbitrary(item, root), { minLength: n.maxItems + 1, maxLength: n.maxItems + 1 }));
    if (typeof n.minItems === 'number' && n.minItems > 0) options.push(fc.constant([]));
    options.push(fc.array(invalidArbitrary(item, root), { minLength: 1, maxLength: 3 }));
  }
  return fc.oneof(...options);
}

/**
 * A value of an object schema, broken in one place or pushed to its edges: one member replaced
 * by an invalid value, a required member dropped, an unknown (or prototype-polluting) member
 * added, or the whole value of another type.
 */
export function mutatedObjectArbitrary(node: JsonSchema, root: JsonSchema = node, hints: Hints = {}): fc.Arbitrary<unknown> {
  const n = deref(node, root);
  const props = Object.entries((n.properties ?? {}) as Record<string, JsonSchema>);
  const valid = validArbitrary(n, root, hints) as fc.Arbitrary<Record<string, unknown>>;
  const options: fc.Arbitrary<unknown>[] = [
    invalidArbitrary({ type: 'object' }),
    fc
      .tuple(valid, fc.constantFrom('__proto__', 'constructor', 'prototype', 'extra', '', 'URL', 'eventtypes'), anyJsonEdge)
      .map(([v, key, value]) => {
        // Own data property even for __proto__, as JSON.parse would make it.
        const out: Record<string, unknown> = { ...v };
        Object.defineProperty(out, key, { value, enumerable: true, configurable: true, writable: true });
        return out;
      }),
  ];
  if (props.length) {
    options.push(
      fc.oneof(...props.map(([key, schema]) => fc.tuple(valid, invalidArbitrary(schema, root)).map(([v, bad]) => ({ ...v, [key]: bad })))),
      fc.tuple(valid, fc.constantFrom(...props.map(([k]) => k))).map(([v, key]) => {
        const { [key]: _dropped, ...rest } = v;
        return rest;
      }),
    );
  }
  return fc.oneof(...options);
}
