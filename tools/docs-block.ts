import { readFileSync, writeFileSync } from 'node:fs';
import { format, resolveConfig } from 'prettier';

/**
 * Generated parts of the docs: a block between `<!-- <marker>:start -->` and `<!-- <marker>:end -->`
 * (e.g. `bench:context`, `config:env`) is rewritten whole by a script; the text around it is
 * written by hand. Used by `npm run docs:config` and the benches' `--write-docs`.
 */
export interface DocsBlock {
  /** `bench:context`, `config:env`, ...: letters, digits, `:`, `-`. */
  marker: string;
  /** Markdown put between the markers. */
  content: string;
}

export class DocsBlockError extends Error {}

const MARKER = /^[a-z0-9][a-z0-9:-]*$/;

const startOf = (marker: string) => `<!-- ${marker}:start -->`;
const endOf = (marker: string) => `<!-- ${marker}:end -->`;

function onlyOnce(text: string, tag: string, where: string): number {
  const at = text.indexOf(tag);
  if (at === -1) throw new DocsBlockError(`${where}: no ${tag} marker`);
  if (text.indexOf(tag, at + tag.length) !== -1) throw new DocsBlockError(`${where}: ${tag} appears more than once`);
  return at;
}

/** The text with the block's content replaced; the markers must each appear once, start before end. */
export function replaceBlock(text: string, block: DocsBlock, where = 'document'): string {
  if (!MARKER.test(block.marker)) throw new DocsBlockError(`bad marker name ${JSON.stringify(block.marker)}`);
  const start = startOf(block.marker);
  const end = endOf(block.marker);
  const from = onlyOnce(text, start, where) + start.length;
  const to = onlyOnce(text, end, where);
  if (to < from) throw new DocsBlockError(`${where}: ${end} comes before ${start}`);
  return `${text.slice(0, from)}\n\n${block.content.trim()}\n\n${text.slice(to)}`;
}

/** The content between a block's markers (trimmed), as the file holds it now. */
export function readBlock(text: string, marker: string, where = 'document'): string {
  const start = startOf(marker);
  const from = onlyOnce(text, start, where) + start.length;
  return text.slice(from, onlyOnce(text, endOf(marker), where)).trim();
}

/** The file's text with every block replaced, formatted by Prettier with the repository's settings (so `prettier --check` passes). */
export async function renderBlocks(file: string, text: string, blocks: readonly DocsBlock[]): Promise<string> {
  let next = text;
  for (const block of blocks) next = replaceBlock(next, block, file);
  const options = (await resolveConfig(file)) ?? {};
  return format(next, { ...options, filepath: file });
}

/** Rewrites the blocks in the file; returns whether its text changed. */
export async function writeBlocks(file: string, blocks: readonly DocsBlock[]): Promise<boolean> {
  const text = readFileSync(file, 'utf8');
  const next = await renderBlocks(file, text, blocks);
  if (next === text) return false;
  writeFileSync(file, next);
  return true;
}

/** A Markdown table; `|` in a cell is escaped. */
export function markdownTable(header: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  const cell = (c: string | number) => String(c).replace(/\|/g, '\\|');
  const line = (r: readonly (string | number)[]) => `| ${r.map(cell).join(' | ')} |`;
  return [line(header), `| ${header.map(() => '---').join(' | ')} |`, ...rows.map(line)].join('\n');
}
