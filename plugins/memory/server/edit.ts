import { codePoints, type DefinedBlock } from './definitions';

/** A refused edit: the tool fails with this message and nothing is written. */
export class MemoryEditError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MemoryEditError';
  }
}

export type MemoryEdit = { kind: 'append'; line: string } | { kind: 'replace'; old: string; new: string } | { kind: 'clear' };

/** Occurrences of `needle` in `text` (non-overlapping), up to 2. */
function occurrences(text: string, needle: string): number {
  let n = 0;
  for (let i = text.indexOf(needle); i !== -1 && n < 2; i = text.indexOf(needle, i + needle.length)) n += 1;
  return n;
}

/**
 * The block's text after an edit, or a `MemoryEditError` saying why not: an append is one non-empty
 * line; a replaced passage occurs exactly once; the result holds at most `limit` characters
 * (Unicode code points).
 */
export function applyEdit(block: DefinedBlock, current: string, edit: MemoryEdit): string {
  let next: string;
  if (edit.kind === 'clear') return '';
  if (edit.kind === 'append') {
    const line = edit.line.trim();
    if (line.length === 0) throw new MemoryEditError('line is empty: give the text to append');
    if (/[\r\n\u2028\u2029]/.test(line)) throw new MemoryEditError('line must be a single line (no line breaks): append each line with its own call');
    next = current.length > 0 ? `${current}\n${line}` : line;
  } else {
    if (edit.old.length === 0) throw new MemoryEditError('old is empty: give the exact text to replace');
    const found = occurrences(current, edit.old);
    if (found === 0) throw new MemoryEditError(`block "${block.id}" does not contain the text given as old: copy it exactly from <memory-blocks>`);
    if (found > 1) throw new MemoryEditError(`the text given as old occurs more than once in block "${block.id}": give a longer passage that occurs once`);
    next = current.replace(edit.old, () => edit.new);
  }
  const used = codePoints(next);
  if (used > block.limit)
    throw new MemoryEditError(
      `block "${block.id}" would hold ${used} characters, over its limit of ${block.limit} (it holds ${codePoints(current)} now); nothing was changed: shorten or remove old text first`,
    );
  return next;
}
