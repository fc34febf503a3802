/** Page sizes (docs/behaviour.md#pagination): 50 by default, clamped into [1, 200], never an error. */
import { describe, expect, it } from 'vitest';
import { clampLimit, PAGE_LIMIT } from '../../lambdas/contract/pagination';

describe('clampLimit', () => {
  it('publishes its bounds', () => {
    expect(PAGE_LIMIT).toEqual({ default: 50, min: 1, max: 200 });
  });

  it.each([
    [1, 1],
    ['1', 1],
    [2, 2],
    [199, 199],
    [200, 200],
    ['200', 200],
    [0, 1],
    [-5, 1],
    ['-0.5', 1],
    [0.9, 1],
    [201, 200],
    [1e9, 200],
    ['1e3', 200],
    [199.9, 199],
    [' 42 ', 42],
    ['0x10', 16],
  ])('clamps %j to %d', (raw, expected) => expect(clampLimit(raw)).toBe(expected));

  it.each([undefined, null, '', '   ', 'abc', '12abc', NaN, Infinity, -Infinity, {}, [], true, [7]])('takes the default for %j', (raw) =>
    expect(clampLimit(raw)).toBe(PAGE_LIMIT.default),
  );
});
