/**
 * The documents a reader follows from the README lead somewhere: in README.md, CONTRIBUTING.md
 * and every docs/*.md, each relative link and each `docs/<file>.md#<section>` named in the text
 * leads to a file and a heading that exist, and each repository path they name in a code span
 * is there; a section of docs/ that code cites exists. A list of the code is written in one
 * place: the stage settings only in docs/deploy.md.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_KEYS } from '../../lib/config';
import { anchorsOf, codeSpan, markdownDocs, read, ROOT, tables, withoutCode } from './markdown';

const DOCS = markdownDocs();

/** A reference from a document to a file of the repository, with the section it names, if any. */
interface Reference {
  readonly doc: string;
  readonly target: string;
  readonly file: string;
  readonly anchor: string | undefined;
}

/** The repository path a target written in `doc` leads to (`''` is the document itself). */
const resolveIn = (doc: string, path: string) => (path === '' ? doc : normalize(relative(ROOT, join(ROOT, dirname(doc), path))));

/**
 * Every reference of a document, outside code blocks: its Markdown links and images that stay in
 * the repository (`[…](#anchor)`, `[…](deploy.md#settings)`, `![…](docs/images/…)`), and the
 * sections it names in prose or a code span (`docs/behaviour.md#pagination`, `operations.md#smoke-test`).
 */
function referencesOf(doc: string): Reference[] {
  const text = withoutCode(read(doc));
  const links = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((target) => !/^[a-z]+:/.test(target));
  const named = [...text.replace(/\]\([^)]*\)/g, ']').matchAll(/(?<![\w/.-])((?:docs\/)?[a-z-]+\.md#[a-z0-9-]+)/g)].map((m) => m[1]!);
  return [
    ...links.map((target) => {
      const [path, anchor] = target.split('#') as [string, string | undefined];
      return { doc, target, file: resolveIn(doc, path), anchor };
    }),
    ...named.map((target) => {
      const [path, anchor] = target.split('#') as [string, string];
      // `docs/x.md#…` is named from the repository root; a bare `x.md#…` from the document's folder.
      return { doc, target, file: path.startsWith('docs/') ? path : resolveIn(doc, path), anchor };
    }),
  ];
}

const references = DOCS.flatMap(referencesOf);

describe('references in the README, CONTRIBUTING.md and docs/', () => {
  it('lead to files that exist', () => {
    for (const doc of ['README.md', 'CONTRIBUTING.md']) expect(references.filter((r) => r.doc === doc).length, doc).toBeGreaterThan(10);
    expect(references.filter((r) => !existsSync(join(ROOT, r.file))).map((r) => `${r.doc}: ${r.target}`)).toEqual([]);
  });

  it('lead to sections that exist', () => {
    const anchors = new Map<string, Set<string>>();
    const anchorsIn = (file: string) => anchors.get(file) ?? anchors.set(file, anchorsOf(read(file))).get(file)!;
    const broken = references.filter(
      (r) => r.anchor !== undefined && r.file.endsWith('.md') && existsSync(join(ROOT, r.file)) && !anchorsIn(r.file).has(r.anchor),
    );
    expect(broken.map((r) => `${r.doc}: ${r.target}`)).toEqual([]);
  });

  it('name repository paths that exist', () => {
    // A code span that is a path under a top-level folder, without a placeholder (`<operation>`, `{id}`, `*`, `…`).
    const PATH = /^(?:bin|lib|lambdas|test|bench|docs|console|config|\.ci)\/[\w./-]*$/;
    const named = DOCS.flatMap((doc) =>
      [...withoutCode(read(doc)).matchAll(/`([^`\n]+)`/g)]
        .map((m) => m[1]!.replace(/#.*$/, ''))
        .filter((span) => PATH.test(span))
        .map((path) => ({ doc, path })),
    );
    expect(named.length).toBeGreaterThan(50);
    expect(named.filter(({ path }) => !existsSync(join(ROOT, path))).map(({ doc, path }) => `${doc}: ${path}`)).toEqual([]);
  });
});

/** The source files under a folder of the repository (TypeScript, TSX, JavaScript, CSS, HTML). */
function sources(dir: string): string[] {
  if (!existsSync(join(ROOT, dir))) return [];
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = `${dir}/${name}`;
    if (name === 'node_modules' || name === 'generated') return [];
    if (statSync(join(ROOT, path)).isDirectory()) return sources(path);
    return /\.(ts|tsx|js|css|html)$/.test(name) ? [path] : [];
  });
}

describe('sections of docs/ cited in code', () => {
  it('exist', () => {
    const files = ['lambdas', 'lib', 'bin', 'bench', 'test', 'console'].flatMap(sources);
    const cited = files.flatMap((file) =>
      [...read(file).matchAll(/docs\/([a-z-]+)\.md#([a-z0-9-]+)/g)].map((m) => ({ file, doc: `docs/${m[1]}.md`, anchor: m[2]! })),
    );
    expect(cited.length).toBeGreaterThan(40);
    const anchors = new Map(DOCS.map((doc) => [doc, anchorsOf(read(doc))]));
    const broken = cited.filter(({ doc, anchor }) => !anchors.get(doc)?.has(anchor));
    expect(broken.map(({ file, doc, anchor }) => `${file}: ${doc}#${anchor}`)).toEqual([]);
  });
});

describe('the stage settings', () => {
  it('are listed in one table, in docs/deploy.md, which the README links to', () => {
    const settingsTables = DOCS.flatMap((doc) =>
      tables(read(doc))
        .filter((t) => t.rows.filter((row) => (CONFIG_KEYS as string[]).includes(codeSpan(row[0] ?? '') ?? '')).length >= 3)
        .map(() => doc),
    );
    expect(settingsTables).toEqual(['docs/deploy.md']);
    expect(references.some((r) => r.doc === 'README.md' && r.file === 'docs/deploy.md' && r.anchor === 'settings')).toBe(true);
  });
});
