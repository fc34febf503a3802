/**
 * The generated input schemas answer exactly as zod does (lambdas/contract/input-validation.ts):
 * for every operation's path, query and body, the Idempotency-Key header and every built-in
 * event payload, the same success, the same parsed value, and the same issues (path and message,
 * in order) on values inside the schema, values that break it one place at a time, and anything.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BUILT_IN_EVENT_TYPES } from '../../lambdas/contract/events';
import { IdempotencyKeySchema } from '../../lambdas/contract/idempotency';
import { ISO_DATE, ISO_DATETIME_OFFSET } from '../../lambdas/contract/input-rules';
import { validateInput, type InputNode } from '../../lambdas/contract/input-validation';
import { OPERATIONS, type OperationDef } from '../../lambdas/contract/operations';
import { inputNodeOf } from '../../lib/generate/contract-code';
import {
  anyJsonEdge,
  hostileString,
  invalidArbitrary,
  jsonSchemaOf,
  mutatedObjectArbitrary,
  validArbitrary,
} from '../fuzz/schema-arbitrary';

const RUNS = Number(process.env.INPUT_VALIDATION_RUNS ?? 300);

/** zod's answer in the shape of {@link validateInput}'s. */
function viaZod(schema: z.ZodType, value: unknown) {
  const r = schema.safeParse(value);
  return r.success
    ? { success: true, data: r.data }
    : { success: false, issues: r.error.issues.map((i) => ({ path: i.path, message: i.message })) };
}

function arbitrariesOf(schema: z.ZodType): fc.Arbitrary<unknown> {
  const json = jsonSchemaOf(schema);
  return fc.oneof(
    validArbitrary(json),
    invalidArbitrary(json),
    json.type === 'object' ? mutatedObjectArbitrary(json) : validArbitrary(json),
    fc.anything(),
    anyJsonEdge,
    hostileString(),
    fc.dictionary(
      fc.constantFrom(...Object.keys((json.properties as object | undefined) ?? { x: 1 }), 'extra', '__proto__'),
      fc.oneof(anyJsonEdge, hostileString(80), fc.integer()),
    ),
  );
}

function sameAsZod(name: string, schema: z.ZodType, node: InputNode = inputNodeOf(schema, name, 'live')): void {
  fc.assert(
    fc.property(arbitrariesOf(schema), (value) => {
      // Each side gets its own copy: a parse must not change what it was given.
      const copy = structuredClone(value);
      expect(validateInput(node, copy)).toEqual(viaZod(schema, structuredClone(value)));
      expect(copy).toEqual(value);
    }),
    { numRuns: RUNS },
  );
}

const INPUTS = (OPERATIONS as readonly OperationDef[]).flatMap((def) =>
  [
    ['params', def.params],
    ['query', def.query],
    ['body', def.body],
  ]
    .filter((e): e is [string, z.ZodType] => e[1] !== undefined)
    .map(([part, schema]) => ({ name: `${def.operationId}.${part}`, schema })),
);

describe('generated input schemas answer as zod', () => {
  it.each(INPUTS)('$name', ({ name, schema }) => sameAsZod(name, schema));

  it('the Idempotency-Key header', () => sameAsZod('IdempotencyKeySchema', IdempotencyKeySchema));

  it.each(Object.entries(BUILT_IN_EVENT_TYPES).map(([name, t]) => ({ name, schema: t.payload as z.ZodType })))(
    'the $name payload',
    ({ name, schema }) => sameAsZod(name, schema),
  );

  it('on the boundaries that matter: code points, safe integers, dates, strict keys, defaults', () => {
    const cases: [z.ZodType, unknown][] = [];
    const create = OPERATIONS.find((o) => o.operationId === 'createWebhook')!.body;
    const log = OPERATIONS.find((o) => o.operationId === 'listDeliveries')!.query;
    const health = OPERATIONS.find((o) => o.operationId === 'getWebhookHealth')!.query;
    const recover = OPERATIONS.find((o) => o.operationId === 'recoverWebhookDeliveries')!.body;
    cases.push(
      [create, { url: '😀'.repeat(1024), eventTypes: ['a'] }],
      [create, { url: '😀'.repeat(1025), eventTypes: ['a', 'a'], extra: 1, other: 2 }],
      [create, { url: 1, eventTypes: [] }],
      [create, { url: 'https://a.example', eventTypes: [`a.${'b'.repeat(126)}`] }],
      [create, { url: 'https://a.example', eventTypes: [`a.${'b'.repeat(127)}`] }],
      [create, null],
      [log, { limit: '1e400', since: '2026-11-26', until: '2026-11-25' }],
      [log, { since: 'nope', until: '2026-11-25', status: 'failed,nope' }],
      [log, { limit: String(2 ** 60), eventType: 'order.*' }],
      [health, {}],
      [health, { window: '30d' }],
      [recover, { since: '2026-11-26T00:00:00+01:00', until: '2026-11-25T23:30:00Z', statuses: [] }],
      [recover, { since: '2026-11-26', dryRun: 'yes' }],
    );
    for (const [schema, value] of cases) expect(validateInput(inputNodeOf(schema, 'case', 'live'), value)).toEqual(viaZod(schema, value));
  });
});

describe('the copied patterns', () => {
  it("are zod's own", () => {
    expect(ISO_DATETIME_OFFSET.source).toBe(z.iso.datetime({ offset: true })._zod.def.pattern!.source);
    expect(ISO_DATE.source).toBe(z.iso.date()._zod.def.pattern!.source);
  });
});
