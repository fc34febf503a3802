/**
 * The repository is self-contained: code comments cite the team's own
 * reference (docs/architecture.md, docs/behaviour.md), never a document that
 * lives outside it, and every section they cite exists.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const SOURCE_DIRS = ['lambdas', 'lib', 'bin', 'bench', 'test', 'docs'];

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return files(path);
    return /\.(ts|js|md|json)$/.test(name) ? [path] : [];
  });
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorsOf(doc: string): Set<string> {
  const text = readFileSync(join(ROOT, doc), 'utf8');
  return new Set(
    [...text.matchAll(/^#+\s+(.+)$/gm)].map((m) =>
      m[1]!
        .trim()
        .toLowerCase()
        .replace(/[^a-z0-9 -]/g, '')
        .replace(/ /g, '-'),
    ),
  );
}

const sources = [...SOURCE_DIRS.flatMap((d) => files(join(ROOT, d))), join(ROOT, 'README.md')];
const self = relative(ROOT, import.meta.filename);

describe('documentation links', () => {
  it('cite no document outside the repository (no SPEC or DESIGN section numbers)', () => {
    const offenders = sources
      .filter((f) => relative(ROOT, f) !== self)
      .flatMap((f) => (readFileSync(f, 'utf8').match(/\b(spec|SPEC|Spec|DESIGN)(\.md)? ?§\s?\d/g) ?? []).map((m) => `${relative(ROOT, f)}: ${m}`));
    expect(offenders).toEqual([]);
  });

  it('point at sections that exist in docs/', () => {
    const anchors: Record<string, Set<string>> = { 'docs/architecture.md': anchorsOf('docs/architecture.md'), 'docs/behaviour.md': anchorsOf('docs/behaviour.md') };
    const cited = sources.flatMap((f) =>
      [...readFileSync(f, 'utf8').matchAll(/docs\/(architecture|behaviour)\.md#([a-z0-9-]+)/g)].map((m) => ({ file: relative(ROOT, f), doc: `docs/${m[1]}.md`, anchor: m[2]! })),
    );
    expect(cited.length).toBeGreaterThan(40);
    expect(cited.filter((c) => !anchors[c.doc]?.has(c.anchor)).map((c) => `${c.file}: ${c.doc}#${c.anchor}`)).toEqual([]);
  });
});
