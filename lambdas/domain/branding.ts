/**
 * Workspace branding rules (docs/behaviour.md#branding): a display name and one accent colour for
 * the console. The accent colours links on the console's background and fills buttons whose text is
 * white (console/src/styles.css: `--bg`, `--surface`, the primary button), so it must meet WCAG AA's
 * 4.5:1 contrast against both, or the embedded console would fail its accessibility checks.
 */

/** The console's page background (`--bg`) and card background (`--surface`), and the text on an accent-filled button. */
export const CONSOLE_COLOURS = { background: '#f6f7f9', surface: '#ffffff', textOnAccent: '#ffffff' } as const;

/** WCAG AA's minimum contrast for normal text. */
export const MIN_CONTRAST = 4.5;

/** Most characters of a display name. */
const DISPLAY_NAME_MAX_CHARS = 64;

/** An accent colour as it is written: `#rrggbb`. */
const ACCENT_COLOR_PATTERN = /^#[0-9a-fA-F]{6}$/;

/** Control characters and the bidirectional overrides that could make a name read as something else. */
const FORBIDDEN_IN_NAME = /[\p{Cc}\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

/** WCAG 2 relative luminance of a `#rrggbb` colour. */
function relativeLuminance(hex: string): number {
  const channel = (offset: number) => {
    const c = parseInt(hex.slice(offset, offset + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

/** WCAG 2 contrast ratio of two `#rrggbb` colours (1 to 21). */
export function contrastRatio(a: string, b: string): number {
  const [hi, lo] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

/** The lowest contrast of `accent` in the console: against its backgrounds, and of the button text on it. */
export function accentContrast(accent: string): number {
  return Math.min(
    contrastRatio(accent, CONSOLE_COLOURS.background),
    contrastRatio(accent, CONSOLE_COLOURS.surface),
    contrastRatio(accent, CONSOLE_COLOURS.textOnAccent),
  );
}

/** One refused branding field: where and why. */
export interface BrandingIssue {
  readonly path: 'displayName' | 'accentColor';
  readonly message: string;
}

/** The issues of a branding (empty: valid). */
export function brandingIssues(branding: { readonly displayName?: string; readonly accentColor?: string }): BrandingIssue[] {
  const issues: BrandingIssue[] = [];
  const { displayName, accentColor } = branding;
  if (displayName !== undefined) {
    if (displayName.trim() === '') issues.push({ path: 'displayName', message: 'must not be blank' });
    else if ([...displayName].length > DISPLAY_NAME_MAX_CHARS)
      issues.push({ path: 'displayName', message: `must be at most ${DISPLAY_NAME_MAX_CHARS} characters` });
    else if (FORBIDDEN_IN_NAME.test(displayName))
      issues.push({ path: 'displayName', message: 'must not contain control characters or bidirectional overrides' });
  }
  if (accentColor !== undefined) {
    if (!ACCENT_COLOR_PATTERN.test(accentColor)) issues.push({ path: 'accentColor', message: 'must be a colour written #rrggbb' });
    else {
      const ratio = accentContrast(accentColor);
      if (ratio < MIN_CONTRAST)
        issues.push({
          path: 'accentColor',
          message: `has a contrast of ${floor2(ratio)}:1 in the console (against its background ${CONSOLE_COLOURS.background} and its white button text); at least ${MIN_CONTRAST}:1 is needed (WCAG AA): choose a darker colour`,
        });
    }
  }
  return issues;
}

/** Rounded down, so a ratio just under the bar never reads as meeting it. */
function floor2(n: number): string {
  return (Math.floor(n * 100) / 100).toFixed(2);
}
