/**
 * The repository is self-contained: code comments (the console's too) cite the team's own
 * reference (docs/architecture.md, docs/behaviour.md, and for running it docs/operations.md,
 * docs/deploy.md, docs/scaling.md), never a document that lives outside it nor an issue of the
 * tracker (the code and the docs say the thing itself), and every section they cite exists; the
 * links between the docs lead somewhere too.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const SOURCE_DIRS = ['lambdas', 'lib', 'bin', 'bench', 'test', 'docs', 'console'];

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return files(path);
    return /\.(tsx?|js|md|json|css|html)$/.test(name) ? [path] : [];
  });
}

/** The reference documents, whose sections code and docs cite as `docs/<name>.md#<anchor>`. */
const DOCS = ['architecture', 'behaviour', 'operations', 'deploy', 'scaling'] as const;

/** A markdown text without its fenced code blocks (a `# comment` in a shell example is no heading). */
const withoutCode = (text: string) => text.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '');

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorsOf(doc: string): Set<string> {
  const text = withoutCode(readFileSync(join(ROOT, doc), 'utf8'));
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

const anchors: Record<string, Set<string>> = Object.fromEntries(DOCS.map((d) => [`docs/${d}.md`, anchorsOf(`docs/${d}.md`)]));

const sources = [
  ...SOURCE_DIRS.flatMap((d) => files(join(ROOT, d))),
  ...['README.md', 'CONTRIBUTING.md'].filter((f) => existsSync(join(ROOT, f))).map((f) => join(ROOT, f)),
];
const self = relative(ROOT, import.meta.filename);

/** Every match of `pattern` in the sources but this file, as `file:line: match`, so a failure says where each one is. */
function occurrences(pattern: RegExp): string[] {
  return sources
    .filter((f) => relative(ROOT, f) !== self)
    .flatMap((f) =>
      readFileSync(f, 'utf8')
        .split('\n')
        .flatMap((line, i) => [...line.matchAll(pattern)].map((m) => `${relative(ROOT, f)}:${i + 1}: ${m[0]}`)),
    );
}

/** A design document's section number: `SPEC §4`, `spec.md §2`, `DESIGN §7b`. */
const OUTSIDE_DOCUMENT = /\b(spec|SPEC|Spec|DESIGN)(\.md)? ?§\s?\d/g;

/**
 * A citation of the issue tracker: `issue 9`, `Issue #10`, `issues 8`, or a bare number as
 * GitHub writes one (`(#12)`, `see #12`, `fixes #12`); not a colour (`#555`) nor a key (`SUB#…#1`).
 */
const ISSUE_CITATION =
  /\bissues? #?\d+\b|(?:\(|\b(?:see|fixes|fixed|closes|closed|resolves|resolved|per|PR|pull request) )#\d{1,5}\b(?![\w-])/gi;

describe('documentation links', () => {
  it('cite no document outside the repository (no SPEC or DESIGN section numbers)', () => {
    const offenders = occurrences(OUTSIDE_DOCUMENT);
    expect(offenders, `Cite docs/ or say the thing itself:\n${offenders.join('\n')}\n`).toEqual([]);
  });

  it('cite no issue of the tracker ("issue 9", "#12"): the code and the docs say the thing itself', () => {
    const offenders = occurrences(ISSUE_CITATION);
    expect(offenders, `Say what the issue asked for instead of its number:\n${offenders.join('\n')}\n`).toEqual([]);
  });

  it('point at sections that exist in docs/', () => {
    const cited = sources.flatMap((f) =>
      [...readFileSync(f, 'utf8').matchAll(new RegExp(`docs/(${DOCS.join('|')})\\.md#([a-z0-9-]+)`, 'g'))].map((m) => ({
        file: relative(ROOT, f),
        doc: `docs/${m[1]}.md`,
        anchor: m[2]!,
      })),
    );
    expect(cited.length).toBeGreaterThan(40);
    for (const doc of ['docs/operations.md', 'docs/deploy.md', 'docs/scaling.md'])
      expect(
        cited.some((c) => c.doc === doc),
        `a citation of ${doc}`,
      ).toBe(true);
    expect(cited.filter((c) => !anchors[c.doc]!.has(c.anchor)).map((c) => `${c.file}: ${c.doc}#${c.anchor}`)).toEqual([]);
  });
});

describe('links in docs/', () => {
  /**
   * Every reference a doc makes, outside code blocks: its markdown links that stay in the
   * repository (`[…](#anchor)`, `[…](deploy.md#settings)`, `[…](../README.md)`), and the
   * sections it names in prose (`operations.md#delivery-success-rate`, `docs/scaling.md#…`).
   */
  const references = DOCS.flatMap((name) => {
    const doc = `docs/${name}.md`;
    const text = withoutCode(readFileSync(join(ROOT, doc), 'utf8'));
    const links = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((target) => !/^[a-z]+:/.test(target));
    const prose = [...text.replace(/\]\([^)]*\)/g, ']').matchAll(/(?<![\w/.-])((?:docs\/)?[a-z]+\.md#[a-z0-9-]+)/g)].map((m) =>
      m[1]!.replace(/^docs\//, ''),
    );
    return [...links, ...prose].map((target) => {
      const [path, anchor] = target.split('#') as [string, string | undefined];
      return { doc, target, file: path === '' ? doc : relative(ROOT, join(ROOT, dirname(doc), path)), anchor };
    });
  });

  it('lead to files that exist', () => {
    expect(references.length).toBeGreaterThan(50);
    expect(references.filter((r) => !existsSync(join(ROOT, r.file))).map((r) => `${r.doc}: ${r.target}`)).toEqual([]);
  });

  it('lead to sections that exist', () => {
    const broken = references.filter((r) => r.anchor !== undefined && !(anchors[r.file] ?? anchorsOf(r.file)).has(r.anchor));
    expect(broken.map((r) => `${r.doc}: ${r.target}`)).toEqual([]);
  });

  it('name sections of operations.md, deploy.md and scaling.md that are there', () => {
    for (const doc of ['docs/operations.md', 'docs/deploy.md', 'docs/scaling.md']) {
      expect(
        references.some((r) => r.file === doc && r.anchor !== undefined),
        `a section link into ${doc}`,
      ).toBe(true);
    }
  });
});
