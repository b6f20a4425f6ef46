import type { Zippable } from 'fflate';
import { fflate } from './fflate';
import type { WorldDocument } from '../../plugins-sdk';
import { REPLY_BOOK_FILE, WORLD_FILE } from './archive-files';
import { worldMarkdown } from './world-markdown';
import { assertWorldId } from './world-id';

/**
 * Every entry's modification time: 1980-01-01 12:00, the first day a zip can hold, given in local
 * time because a zip stores local time (fflate reads the date's local fields): the same bytes in
 * every time zone.
 */
const FIXED_MTIME = new Date(1980, 0, 1, 12, 0, 0);

export interface ExportWorldArchiveOptions {
  /** A valid world document. */
  document: WorldDocument;
  /** The world's id: the folder's name in the zip and the WORLD.md's `id`. */
  id: string;
  /** The offline emulator's reply book, written as `<id>/emulator-replies.json` (JSON, 2-space indent) when given. */
  replyBook?: unknown;
}

/**
 * The world folder as zip bytes: `<id>/WORLD.md` (see {@link worldMarkdown}, `id` in the front
 * matter) and `<id>/emulator-replies.json` when a reply book is given. Deterministic: the same
 * options give the same bytes (fixed times, fixed order, fixed compression level). An `id` that
 * is not a world id throws `INVALID_WORLD_ID`.
 */
export function exportWorldArchive(options: ExportWorldArchiveOptions): Uint8Array {
  const { document, id, replyBook } = options;
  assertWorldId(id);
  const { strToU8, zipSync } = fflate();
  const entry = (text: string): Zippable[string] => [strToU8(text), { mtime: FIXED_MTIME, level: 9 }];
  const files: Zippable = { [`${id}/${WORLD_FILE}`]: entry(worldMarkdown(document, { id })) };
  if (replyBook !== undefined) files[`${id}/${REPLY_BOOK_FILE}`] = entry(`${JSON.stringify(replyBook, null, 2)}\n`);
  return zipSync(files);
}
