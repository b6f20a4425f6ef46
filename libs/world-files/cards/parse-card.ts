/**
 * Reads a character card file, step by step: what the bytes are (sniff.ts), the card's text (a
 * PNG's tEXt chunk, base64, UTF-8: png-read.ts, base64.ts, text.ts; or the JSON file's text), the
 * JSON (json.ts: depth cap, then well-formed strings), the schema of its spec (validate.ts), and
 * whether it makes a valid world (fit.ts). The first failing step answers; a failure is a value.
 */
import { decodeBase64 } from './base64';
import { checkFitsWorld } from './fit';
import { checkStrings, parseJson } from './json';
import { readCardChunk } from './png-read';
import { BODY, type ParseCardResult } from './result';
import { sniffCard } from './sniff';
import { decodeText } from './text';
import { validateCard } from './validate';

/** Defaults of `parseCard`'s limits. */
export const CARD_LIMITS = {
  /** Bytes of the file (the API answers 413 past it). */
  maxBytes: 8 * 1024 * 1024,
  /** Nesting of the card's JSON (objects and arrays). */
  maxDepth: 64,
} as const;

export interface ParseCardOptions {
  /** The declared media type (`image/png`, `application/json`): only named in messages; the content decides. */
  contentType?: string;
  /** Default {@link CARD_LIMITS.maxBytes}. */
  maxBytes?: number;
  /** Default {@link CARD_LIMITS.maxDepth}. */
  maxDepth?: number;
}

export function parseCard(bytes: Uint8Array, options: ParseCardOptions = {}): ParseCardResult {
  const maxBytes = options.maxBytes ?? CARD_LIMITS.maxBytes;
  const maxDepth = options.maxDepth ?? CARD_LIMITS.maxDepth;
  const sniffed = sniffCard(bytes, { maxBytes, contentType: options.contentType });
  if ('ok' in sniffed) return sniffed;

  let text: string;
  let where: string = BODY;
  if (sniffed.kind === 'png') {
    const chunk = readCardChunk(bytes);
    if (!chunk.ok) return chunk;
    where = `tEXt ${chunk.chunk.keyword}`;
    const decoded = decodeBase64(chunk.chunk.value, where);
    if (!decoded.ok) return decoded;
    const utf8 = decodeText(decoded.bytes, 'utf-8', where);
    if (!utf8.ok) return utf8;
    text = utf8.text;
  } else {
    const decoded = decodeText(bytes, sniffed.encoding, BODY);
    if (!decoded.ok) return decoded;
    text = decoded.text;
  }

  const json = parseJson(text, { maxDepth, where });
  if (!json.ok) return json;
  const strings = checkStrings(json.value);
  if (!strings.ok) return strings;
  const card = validateCard(json.value);
  if (!card.ok) return card;
  const fits = checkFitsWorld(card.card);
  if (!fits.ok) return fits;
  return { ...card, container: sniffed.kind };
}
