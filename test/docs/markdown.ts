/**
 * Reading the repository's Markdown as the doc tests need it: sections under a heading, the rows
 * of a table, code spans, GitHub's heading anchors, and the text outside fenced code blocks.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The repository root. */
export const ROOT = join(import.meta.dirname, '..', '..');

/** A file of the repository as text. */
export const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

/** The Markdown documents a reader meets: the README, CONTRIBUTING.md and every `docs/*.md`. */
export function markdownDocs(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);
  return ['README.md', 'CONTRIBUTING.md', ...docs.sort()];
}

/** A Markdown text without its fenced code blocks (a `# comment` in a shell example is no heading). */
export const withoutCode = (text: string): string => text.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '');

/** GitHub's anchor of a heading text: lower case, punctuation dropped, spaces as hyphens. */
const anchorOf = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, '')
    .replace(/ /g, '-');

/** The anchors of every heading of a Markdown text. */
export const anchorsOf = (text: string): Set<string> =>
  new Set([...withoutCode(text).matchAll(/^#+\s+(.+)$/gm)].map((m) => anchorOf(m[1]!)));

/**
 * The text under a heading (given with its `#`s), up to the next heading of the same or a higher
 * level; undefined when the heading is not there.
 */
export function section(text: string, heading: string): string | undefined {
  const lines = text.split('\n');
  const level = /^#+/.exec(heading)![0].length;
  const start = lines.indexOf(heading);
  if (start < 0) return undefined;
  let inCode = false;
  let end = lines.length;
  for (let i = start + 1; i < lines.length; i++) {
    if (lines[i]!.startsWith('```')) inCode = !inCode;
    const m = inCode ? null : /^(#+)\s/.exec(lines[i]!);
    if (m && m[1]!.length <= level) {
      end = i;
      break;
    }
  }
  return lines.slice(start + 1, end).join('\n');
}

/** One Markdown table: its header cells and its body rows, as trimmed cells. */
export interface Table {
  readonly header: string[];
  readonly rows: string[][];
}

const cells = (row: string): string[] =>
  row
    .trim()
    .slice(1, -1)
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim());

/** Every table of a Markdown text, in order (outside code blocks). */
export function tables(text: string): Table[] {
  const out: Table[] = [];
  let block: string[] = [];
  const flush = () => {
    if (block.length >= 2 && /^\|[\s|:-]+\|$/.test(block[1]!.trim()))
      out.push({ header: cells(block[0]!), rows: block.slice(2).map(cells) });
    block = [];
  };
  for (const line of withoutCode(text).split('\n')) {
    if (line.trim().startsWith('|')) block.push(line);
    else flush();
  }
  flush();
  return out;
}

/** The content of a cell that is exactly one code span (`` `name` `` → `name`); undefined otherwise. */
export const codeSpan = (cell: string): string | undefined => /^`([^`]+)`$/.exec(cell)?.[1];
