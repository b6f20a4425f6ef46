/**
 * Bytes to text, refusing what is not text: JSON is UTF-8 (RFC 8259), its byte order mark
 * allowed; a UTF-16 file is read only after its byte order mark. A malformed sequence is an error,
 * never a U+FFFD put in its place.
 */
import { type CardFailure, type CardIssue, failure } from './result';
import type { TextEncoding } from './sniff';

export function decodeText(bytes: Uint8Array, encoding: TextEncoding, where: CardIssue['path']): { ok: true; text: string } | CardFailure {
  try {
    // a byte order mark matching the encoding is dropped (ignoreBOM: false)
    return { ok: true, text: new TextDecoder(encoding, { fatal: true, ignoreBOM: false }).decode(bytes) };
  } catch {
    const expected = encoding === 'utf-8' ? 'UTF-8 (a JSON card must be UTF-8)' : `${encoding.toUpperCase()} as its byte order mark says`;
    return failure('BAD_TEXT_ENCODING', { path: where, message: `the text is not valid ${expected}` });
  }
}
