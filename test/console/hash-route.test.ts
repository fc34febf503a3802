/** The console's hash routes (console/src/hash-route.ts): every hash parses, whatever its encoding. */
import { describe, expect, it } from 'vitest';
import { parseHash } from '../../console/src/hash-route';

describe('parseHash', () => {
  it('decodes the path segments and keeps the query', () => {
    const route = parseHash('#/deliveries/whd_1%2F2?status=failed');
    expect(route.segments).toEqual(['deliveries', 'whd_1/2']);
    expect(route.query.get('status')).toBe('failed');
    expect(route.malformed).toBeUndefined();
  });

  it.each(['#/deliveries/%ZZ', '#/%', '#/endpoints/%E0%A4%A', '#/deliveries/%ZZ?status=failed'])(
    'makes %s a malformed route, not a URIError',
    (hash) => {
      const route = parseHash(hash);
      expect(route.malformed).toBe(true);
      expect(route.segments).toEqual([]);
    },
  );
});
