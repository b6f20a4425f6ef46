/** What reading a card answers: the card, or a code and the issues (each with its path). */
import type { ErrorCategory } from '../../errors';
import type { CharacterCardV2, CharacterCardV3 } from './schema';

/**
 * Why a file is not an importable card. `TOO_LARGE` is the only one past a size (HTTP 413); every
 * other one is a bad file (HTTP 400).
 */
export type CardErrorCode =
  /** The body is empty (or only whitespace). */
  | 'EMPTY_FILE'
  /** More bytes than the caller's cap, or a world document past `WORLD_LIMITS.documentBytes`. */
  | 'TOO_LARGE'
  /** Neither a PNG nor JSON. */
  | 'NOT_A_CARD_FILE'
  /** A PNG whose chunks are truncated or corrupt (CRC), or that has no IHDR or IEND. */
  | 'BAD_PNG'
  /** A PNG without a `ccv3` or `chara` tEXt chunk. */
  | 'NO_CARD_CHUNK'
  /** The card chunk's value is not base64. */
  | 'BAD_BASE64'
  /** JSON bytes that are not UTF-8 (or UTF-16 after its byte order mark). */
  | 'BAD_TEXT_ENCODING'
  | 'BAD_JSON'
  /** JSON nested deeper than the cap, refused before it is parsed. */
  | 'TOO_DEEP'
  /** A string (or key) with a lone surrogate or U+0000. */
  | 'BAD_STRING'
  /** `spec` is not `chara_card_v2` or `chara_card_v3` (or a V3 `spec_version` is not a version). */
  | 'UNSUPPORTED_SPEC'
  /** The card does not match its spec's schema (the paths say where). */
  | 'INVALID_CARD'
  /** The card is valid but does not fit a world (`WORLD_LIMITS`: openings, entries, lore). */
  | 'LIMIT_EXCEEDED'
  /** Export only: the world document is not valid, or its `extensions.card` bag makes a card that is not. */
  | 'INVALID_WORLD';

/** Where a problem is: the card field's dotted path (`data.character_book.entries.3.keys`), or `(body)` for the file itself. */
export interface CardIssue {
  path: string;
  message: string;
}

export type ParseCardResult =
  | { ok: true; version: 'v2'; card: CharacterCardV2; container: 'png' | 'json' }
  | { ok: true; version: 'v3'; card: CharacterCardV3; container: 'png' | 'json' }
  | { ok: false; code: CardErrorCode; issues: CardIssue[] };

export type CardFailure = Extract<ParseCardResult, { ok: false }>;

/** The engine's error category of each code (`libs/errors`): what the API answers. */
export const CARD_ERROR_CATEGORY: Readonly<Record<CardErrorCode, ErrorCategory>> = {
  EMPTY_FILE: 'invalid',
  TOO_LARGE: 'too-large',
  NOT_A_CARD_FILE: 'invalid',
  BAD_PNG: 'invalid',
  NO_CARD_CHUNK: 'invalid',
  BAD_BASE64: 'invalid',
  BAD_TEXT_ENCODING: 'invalid',
  BAD_JSON: 'invalid',
  TOO_DEEP: 'invalid',
  BAD_STRING: 'invalid',
  UNSUPPORTED_SPEC: 'invalid',
  INVALID_CARD: 'invalid',
  LIMIT_EXCEEDED: 'invalid',
  INVALID_WORLD: 'invalid',
};

/** The path of the file as a whole. */
export const BODY = '(body)';

/** At most this many issues are reported. */
export const MAX_ISSUES = 50;

export function failure(code: CardErrorCode, issues: CardIssue | CardIssue[]): CardFailure {
  const list = Array.isArray(issues) ? issues : [issues];
  return { ok: false, code, issues: list.slice(0, MAX_ISSUES) };
}

/** A dotted path (`data.character_book.entries.3.keys`); the root is `(body)`. */
export function dottedPath(path: readonly PropertyKey[]): string {
  return path.length === 0 ? BODY : path.map(String).join('.');
}
