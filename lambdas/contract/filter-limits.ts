/**
 * The bounds of a payload filter (docs/behaviour.md#payload-filters), named once: the validator in
 * lambdas/domain/payload-filter.ts applies them, the contract's prose and the docs quote them. They
 * keep a filter small enough that evaluating it against any payload costs a bounded amount of work.
 * Zod-free, so every function may import it.
 */

/** Largest filter, in bytes of its JSON (as `JSON.stringify` writes it, UTF-8). */
export const MAX_FILTER_BYTES = 4096;

/**
 * Deepest nesting of filters: a filter is level 1, and each filter inside `$and`, `$or` or `$not`
 * is one level deeper than the filter holding it.
 */
export const MAX_FILTER_DEPTH = 8;

/**
 * Most conditions in one filter: each test of a path (an equality, or each operator of an operator
 * object) and each `$and`, `$or` and `$not` counts one.
 */
export const MAX_FILTER_CONDITIONS = 64;

/** Longest path, in characters (`data.order.warehouse` is 20). */
export const MAX_FILTER_PATH_CHARS = 256;

/** Most segments of a path (`data.order.warehouse` has 3). */
export const MAX_FILTER_PATH_SEGMENTS = 16;

/** Most values of one `$in` list. */
export const MAX_FILTER_IN_VALUES = 100;

/**
 * Longest `reason` an evaluation answers, in characters: past it the reason is cut and ends in `…`.
 * Values quoted in a reason are cut at {@link MAX_REASON_VALUE_CHARS} characters, lists at
 * {@link MAX_REASON_LIST_ITEMS} values.
 */
export const MAX_REASON_CHARS = 1024;

/** Longest string value quoted in a reason, in characters, before it is cut with `…`. */
export const MAX_REASON_VALUE_CHARS = 64;

/** Most values of an `$in` list quoted in a reason; the rest are counted (`… 3 more`). */
export const MAX_REASON_LIST_ITEMS = 10;
