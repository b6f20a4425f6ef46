import type { ErrorIssue } from '../../errors';
import type { WorldDocument } from '../../plugins-sdk';

/** The caps of an imported archive, checked from the zip's headers and again while inflating. */
export interface WorldArchiveLimits {
  /** Entries in the zip (folders included). */
  maxEntries: number;
  /** Uncompressed bytes of all entries together. */
  maxUncompressedBytes: number;
}

export const WORLD_ARCHIVE_LIMITS: WorldArchiveLimits = {
  maxEntries: 256,
  maxUncompressedBytes: 16 * 1024 * 1024,
};

/**
 * Why an archive was refused: `BAD_ARCHIVE` (not a zip, a damaged or unsupported one, an unsafe
 * entry name, no or several WORLD.md), `ARCHIVE_TOO_LARGE` (past a {@link WorldArchiveLimits} cap
 * or past `WORLD_LIMITS.documentBytes`: HTTP 413), `INVALID_WORLD` (the WORLD.md or the reply
 * book is not valid: each issue names the field's path).
 */
export type WorldArchiveErrorCode = 'BAD_ARCHIVE' | 'ARCHIVE_TOO_LARGE' | 'INVALID_WORLD';

export type ImportWorldArchiveResult =
  | {
      ok: true;
      /** The WORLD.md's `id`, else its folder's name when that is a world id, else null (a WORLD.md at the root without one). */
      id: string | null;
      document: WorldDocument;
      /** The parsed `emulator-replies.json` beside the WORLD.md, when there is one. */
      replyBook?: unknown;
    }
  | { ok: false; code: WorldArchiveErrorCode; category: 'invalid' | 'too-large'; issues: ErrorIssue[] };

export type ImportWorldArchiveFailure = Extract<ImportWorldArchiveResult, { ok: false }>;

export const failure = (code: WorldArchiveErrorCode, issues: ErrorIssue[]): ImportWorldArchiveFailure => ({
  ok: false,
  code,
  category: code === 'ARCHIVE_TOO_LARGE' ? 'too-large' : 'invalid',
  issues,
});
