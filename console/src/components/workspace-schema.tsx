/**
 * An event type's payload JSON Schema as a reader needs it: its top-level fields at a glance,
 * the schema itself, and an example payload (the schema's own `examples`/`example` when it has
 * one, else a small one built from its properties and types).
 */
type Schema = Record<string, unknown>;

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The schema's own example, if it declares one. */
function declaredExample(schema: Schema): { value: unknown } | null {
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return { value: schema.examples[0] };
  if ('example' in schema) return { value: schema.example };
  return null;
}

/** The first type a schema names, skipping `null` when another is allowed. */
function typeOf(schema: Schema): string | undefined {
  const type = schema.type;
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) return (type.find((t) => t !== 'null') ?? type[0]) as string | undefined;
  if (isSchema(schema.properties)) return 'object';
  if (isSchema(schema.items)) return 'array';
  return undefined;
}

const STRING_BY_FORMAT: Record<string, string> = {
  'date-time': '2026-11-25T12:00:00.000Z',
  date: '2026-11-25',
  time: '12:00:00Z',
  email: 'user@example.com',
  uri: 'https://example.com/',
  url: 'https://example.com/',
  uuid: '6f1c2a9e-3b7d-4e58-9a0c-2d4b8e7f1a36',
};

/** A number inside the schema's bounds (0 when they allow it). */
function exampleNumber(schema: Schema, integer: boolean): number {
  const min =
    typeof schema.minimum === 'number'
      ? schema.minimum
      : typeof schema.exclusiveMinimum === 'number'
        ? schema.exclusiveMinimum + 1
        : undefined;
  const max =
    typeof schema.maximum === 'number'
      ? schema.maximum
      : typeof schema.exclusiveMaximum === 'number'
        ? schema.exclusiveMaximum - 1
        : undefined;
  let n = 0;
  if (min !== undefined && n < min) n = min;
  if (max !== undefined && n > max) n = max;
  return integer ? Math.trunc(n) : n;
}

/**
 * A small example value for `schema` (depth-limited; `$ref`s are not followed). Declared
 * examples, `const`, `default` and the first `enum` value win over generated ones.
 */
function exampleFromSchema(schema: unknown, depth = 0): unknown {
  if (!isSchema(schema) || depth > 8) return null;
  const declared = declaredExample(schema);
  if (declared) return declared.value;
  if ('const' in schema) return schema.const;
  if ('default' in schema) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  for (const key of ['oneOf', 'anyOf', 'allOf'] as const) {
    const options = schema[key];
    if (Array.isArray(options) && options.length > 0) {
      // allOf: merge the objects' examples; oneOf/anyOf: the first option that is not null.
      if (key === 'allOf') {
        const parts = options.map((o) => exampleFromSchema(o, depth + 1));
        return parts.every(isSchema) ? (Object.assign({}, ...parts) as Schema) : parts[0];
      }
      const option: unknown = (options as unknown[]).find((o) => !(isSchema(o) && o.type === 'null')) ?? options[0];
      return exampleFromSchema(option, depth + 1);
    }
  }
  switch (typeOf(schema)) {
    case 'object': {
      const out: Record<string, unknown> = {};
      if (isSchema(schema.properties))
        for (const [name, sub] of Object.entries(schema.properties)) out[name] = exampleFromSchema(sub, depth + 1);
      return out;
    }
    case 'array':
      return isSchema(schema.items) ? [exampleFromSchema(schema.items, depth + 1)] : [];
    case 'string':
      return (typeof schema.format === 'string' ? STRING_BY_FORMAT[schema.format] : undefined) ?? 'string';
    case 'integer':
      return exampleNumber(schema, true);
    case 'number':
      return exampleNumber(schema, false);
    case 'boolean':
      return true;
    default:
      return null;
  }
}

/** One top-level field of an object schema. */
export interface SchemaField {
  readonly name: string;
  readonly type: string;
  readonly required: boolean;
}

/** The top-level fields of an object schema, required ones first. */
function schemaFields(schema: unknown): SchemaField[] {
  if (!isSchema(schema) || !isSchema(schema.properties)) return [];
  const required = new Set(
    Array.isArray(schema.required) ? (schema.required as unknown[]).filter((r): r is string => typeof r === 'string') : [],
  );
  const fields = Object.entries(schema.properties).map(([name, sub]) => {
    const type = isSchema(sub) ? typeOf(sub) : undefined;
    const items = isSchema(sub) && type === 'array' && isSchema(sub.items) ? typeOf(sub.items) : undefined;
    return { name, type: items ? `${items}[]` : (type ?? 'any'), required: required.has(name) };
  });
  return fields.sort((a, b) => Number(b.required) - Number(a.required));
}

/** True when the example comes from the schema itself rather than from the generator. */
function hasDeclaredExample(schema: unknown): boolean {
  return isSchema(schema) && declaredExample(schema) !== null;
}

/** The fields line, the example payload and the schema of one event type. */
export function PayloadSchema({ name, schema }: { name: string; schema: Record<string, unknown> }) {
  const fields = schemaFields(schema);
  const declared = hasDeclaredExample(schema);
  return (
    <>
      {fields.length > 0 ? (
        <p class="ws-fields">
          <span class="muted">Fields: </span>
          {fields.map((f, i) => (
            <span key={f.name}>
              {i > 0 ? ', ' : null}
              <code>{f.name}</code>{' '}
              <span class="muted">
                ({f.type}
                {f.required ? ', required' : ''})
              </span>
            </span>
          ))}
        </p>
      ) : null}
      <details class="ws-details">
        {/* Focusable: a long block scrolls, and keyboard users must reach it. */}
        <summary>
          Example payload<span class="visually-hidden"> of {name}</span>
          {declared ? null : <span class="muted"> (generated from the schema)</span>}
        </summary>
        <pre tabIndex={0}>{JSON.stringify(exampleFromSchema(schema), null, 2)}</pre>
      </details>
      <details class="ws-details">
        <summary>
          Payload JSON Schema<span class="visually-hidden"> of {name}</span>
        </summary>
        <pre tabIndex={0}>{JSON.stringify(schema, null, 2)}</pre>
      </details>
    </>
  );
}
