/** The branding rules (docs/behaviour.md#branding): WCAG contrast of the accent in the console, the display name's bounds. */
import { describe, expect, it } from 'vitest';
import { accentContrast, brandingIssues, contrastRatio, CONSOLE_COLOURS, MIN_CONTRAST } from '../../lambdas/domain/branding';

describe('contrast', () => {
  it('computes WCAG ratios: black on white is 21:1, a colour on itself 1:1', () => {
    expect(contrastRatio('#000000', '#ffffff')).toBeCloseTo(21, 5);
    expect(contrastRatio('#ffffff', '#000000')).toBeCloseTo(21, 5);
    expect(contrastRatio('#1f5fbf', '#1f5fbf')).toBe(1);
    // A reference pair: #767676 on white is the classic 4.54:1.
    expect(contrastRatio('#767676', '#ffffff')).toBeCloseTo(4.54, 2);
  });

  it("accepts the console's own accent, which its stylesheet already uses for links and buttons", () => {
    expect(accentContrast('#1f5fbf')).toBeGreaterThanOrEqual(MIN_CONTRAST);
    expect(brandingIssues({ accentColor: '#1f5fbf' })).toEqual([]);
  });

  it('measures the lower contrast: against the page background, which is darker than white', () => {
    // #767676 passes on white (4.54) but not on the console background #f6f7f9.
    expect(contrastRatio('#767676', CONSOLE_COLOURS.surface)).toBeGreaterThanOrEqual(MIN_CONTRAST);
    expect(contrastRatio('#767676', CONSOLE_COLOURS.background)).toBeLessThan(MIN_CONTRAST);
    const [issue] = brandingIssues({ accentColor: '#767676' });
    expect(issue?.path).toBe('accentColor');
    expect(issue?.message).toMatch(/contrast of 4\.\d\d:1 .*at least 4\.5:1/);
  });

  it('refuses a light accent, naming the ratio found and the one needed', () => {
    const issues = brandingIssues({ accentColor: '#ffcc00' });
    expect(issues).toHaveLength(1);
    expect(issues[0]!.message).toContain(`${(Math.floor(accentContrast('#ffcc00') * 100) / 100).toFixed(2)}:1`);
    expect(issues[0]!.message).toContain('at least 4.5:1');
  });

  it('refuses what is not #rrggbb', () => {
    for (const bad of ['1f5fbf', '#1f5fb', '#1f5fbfz', 'blue', '#GGGGGG', 'rgb(0,0,0)'])
      expect([bad, brandingIssues({ accentColor: bad }).map((i) => i.message)]).toEqual([bad, ['must be a colour written #rrggbb']]);
  });
});

describe('display name', () => {
  it('takes up to 64 characters, counted as characters, not UTF-16 units', () => {
    expect(brandingIssues({ displayName: 'Acme Webhooks' })).toEqual([]);
    expect(brandingIssues({ displayName: '🙂'.repeat(64) })).toEqual([]);
    expect(brandingIssues({ displayName: 'x'.repeat(65) })[0]?.message).toBe('must be at most 64 characters');
  });

  it('refuses a blank name, control characters and bidirectional overrides', () => {
    expect(brandingIssues({ displayName: '   ' })[0]?.message).toBe('must not be blank');
    for (const bad of ['Acme\nWebhooks', 'Acme\u0000', 'Acme\u202egnp.exe', 'Acme\u0085'])
      expect(brandingIssues({ displayName: bad })[0]?.message).toMatch(/control characters/);
  });

  it('accepts an empty branding', () => {
    expect(brandingIssues({})).toEqual([]);
  });
});
