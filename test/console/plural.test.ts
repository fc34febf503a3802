/** The console's counted nouns (console/src/plural.ts): one is singular, thousands are grouped. */
import { describe, expect, it } from 'vitest';
import { plural } from '../../console/src/plural';

describe('plural', () => {
  it.each([
    [0, 'delivery', 'deliveries', '0 deliveries'],
    [1, 'delivery', 'deliveries', '1 delivery'],
    [2, 'attempt', undefined, '2 attempts'],
    [1200, 'attempt', undefined, '1,200 attempts'],
  ])('%i %s', (n, one, many, text) => expect(plural(n, one, many)).toBe(text));
});
