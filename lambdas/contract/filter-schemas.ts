/**
 * The zod schemas of payload filters and the filter test (docs/behaviour.md#payload-filters), for
 * the contract's OpenAPI document and MCP tool. A filter is validated by
 * lambdas/domain/payload-filter.ts, which names the place of each problem inside it, so its schema
 * here only describes it; the bounds are lambdas/contract/filter-limits.ts's.
 */
import { z } from 'zod';
import {
  MAX_FILTER_BYTES,
  MAX_FILTER_CONDITIONS,
  MAX_FILTER_DEPTH,
  MAX_FILTER_IN_VALUES,
  MAX_FILTER_PATH_CHARS,
  MAX_FILTER_PATH_SEGMENTS,
  MAX_REASON_CHARS,
} from './filter-limits';
import { MAX_PAYLOAD_BYTES, MAX_PAYLOAD_DEPTH } from './limits';

/** The filter of the examples: shipped orders of two warehouses, worth at least 100. */
const EXAMPLE_FILTER = {
  'data.order.warehouse': { $in: ['ams-1', 'fra-1'] },
  'data.order.total': { $gte: 100 },
};

/** The language in short, with its bounds. */
const FILTER_DESCRIPTION = [
  'A payload filter: a JSON object whose keys are dotted paths into the payload (`data.order.warehouse`; a segment of digits indexes a list: `items.0.sku`) or `$and`, `$or` (non-empty lists of filters) and `$not` (one filter); all its keys must hold.',
  'A path is compared with a JSON scalar (equality: same type and value) or an operator object of `$in` (list of scalars), `$exists` (boolean), `$gt`, `$gte`, `$lt`, `$lte` (numbers) and `$prefix` (string).',
  'A missing path, or a value of another type than the test expects, is no match. Paths reach own properties only. Objects and lists are never compared whole.',
  `Bounds: ${MAX_FILTER_BYTES} bytes of JSON, ${MAX_FILTER_DEPTH} levels of nesting, ${MAX_FILTER_CONDITIONS} conditions, paths of ${MAX_FILTER_PATH_CHARS} characters and ${MAX_FILTER_PATH_SEGMENTS} segments, ${MAX_FILTER_IN_VALUES} values per \`$in\`.`,
].join(' ');

/** A payload filter (validated by the domain; described here). */
export const PayloadFilterSchema = z.unknown().meta({
  id: 'WebhookFilter',
  type: 'object',
  description: FILTER_DESCRIPTION,
  examples: [
    EXAMPLE_FILTER,
    { $or: [{ type: 'order.shipped' }, { 'data.order.priority': { $exists: true } }], $not: { 'data.test': true } },
  ],
});

/**
 * The examples of the filter test, request and answer in pairs (test/domain/payload-filter.test.ts
 * checks that the evaluator answers exactly these): a payload that matches, and one that does not.
 */
export const FILTER_TEST_EXAMPLES = [
  {
    request: { filter: EXAMPLE_FILTER, payload: { data: { order: { id: 'o-1001', warehouse: 'ams-1', total: 250 } } } },
    response: { matches: true },
  },
  {
    request: { filter: EXAMPLE_FILTER, payload: { data: { order: { id: 'o-1002', warehouse: 'ber-1', total: 250 } } } },
    response: { matches: false, reason: 'data.order.warehouse is "ber-1", not one of ["ams-1", "fra-1"]' },
  },
] as const;

/** The filter test's description in the reference and its MCP tool. */
export const FILTER_TEST_DESCRIPTION = `Answers whether \`payload\` matches \`filter\` and, when it does not, \`reason\`: the first condition that failed, in words. Changes nothing. An invalid filter is 400 \`InvalidFilter\` whose \`issues\` name each problem's place in the filter (\`body.filter.$and[0]["data.order.id"].$in\`); a payload over ${MAX_PAYLOAD_BYTES} bytes of JSON is 413 \`PayloadTooLarge\`, one nested over ${MAX_PAYLOAD_DEPTH} levels 400, as for a published event. The language, its bounds and its semantics are in the \`WebhookFilter\` schema and docs/behaviour.md#payload-filters.`;

/** Body of the filter test. */
export const FilterTestBodySchema = z
  .strictObject({
    filter: PayloadFilterSchema,
    payload: z.unknown().meta({
      description: `The payload to test, as an event would carry it: at most ${MAX_PAYLOAD_BYTES} bytes of JSON and ${MAX_PAYLOAD_DEPTH} levels of nesting.`,
    }),
  })
  .meta({
    id: 'WebhookFilterTest',
    // Both are required (zod's unknown would let the document call them optional).
    required: ['filter', 'payload'],
    examples: FILTER_TEST_EXAMPLES.map((e) => e.request),
  });

/** Answer of the filter test. */
export const FilterTestResultSchema = z
  .object({
    matches: z.boolean(),
    reason: z
      .string()
      .optional()
      .meta({
        description: `Only when it does not match: the first condition that failed, in words (cut at ${MAX_REASON_CHARS} characters).`,
      }),
  })
  .meta({ id: 'WebhookFilterTestResult', examples: FILTER_TEST_EXAMPLES.map((e) => e.response) });
