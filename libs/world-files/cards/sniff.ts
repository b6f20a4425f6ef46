/**
 * Step 1 of reading a card: what the bytes are. Decided by content, never by the declared content
 * type (which only makes the message clearer): the PNG signature, else JSON (an object or array
 * after an optional byte order mark and whitespace), else not a card file.
 */
import { BODY, type CardFailure, failure } from './result';

export const PNG_SIGNATURE: readonly number[] = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

export type TextEncoding = 'utf-8' | 'utf-16le' | 'utf-16be';

export type Sniffed = { kind: 'png' } | { kind: 'json'; encoding: TextEncoding } | CardFailure;

/** Formats people upload by mistake, named in the message (by their magic bytes). */
const KNOWN_FORMATS: readonly { name: string; magic: readonly (number | null)[] }[] = [
  { name: 'a JPEG image', magic: [0xff, 0xd8, 0xff] },
  { name: 'a GIF image', magic: [0x47, 0x49, 0x46, 0x38] },
  { name: 'a WebP image', magic: [0x52, 0x49, 0x46, 0x46, null, null, null, null, 0x57, 0x45, 0x42, 0x50] },
  { name: 'a zip archive (a CHARX card or a world export?)', magic: [0x50, 0x4b, 0x03, 0x04] },
];

const startsWith = (bytes: Uint8Array, magic: readonly (number | null)[]) =>
  bytes.length >= magic.length && magic.every((b, i) => b === null || bytes[i] === b);

const isJsonSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

/** The encoding its byte order mark names (UTF-8 without one), and where the text starts. */
function byteOrder(bytes: Uint8Array): { encoding: TextEncoding; start: number } {
  if (startsWith(bytes, [0xef, 0xbb, 0xbf])) return { encoding: 'utf-8', start: 3 };
  if (startsWith(bytes, [0xff, 0xfe])) return { encoding: 'utf-16le', start: 2 };
  if (startsWith(bytes, [0xfe, 0xff])) return { encoding: 'utf-16be', start: 2 };
  return { encoding: 'utf-8', start: 0 };
}

/** The first code unit that is not JSON whitespace (UTF-8 byte, or UTF-16 unit), or null. */
function firstSignificant(bytes: Uint8Array, encoding: TextEncoding, start: number): number | null {
  const width = encoding === 'utf-8' ? 1 : 2;
  for (let i = start; i + width <= bytes.length; i += width) {
    const unit = encoding === 'utf-8' ? bytes[i] : encoding === 'utf-16le' ? bytes[i] | (bytes[i + 1] << 8) : (bytes[i] << 8) | bytes[i + 1];
    if (!isJsonSpace(unit)) return unit;
  }
  return null;
}

export function sniffCard(bytes: Uint8Array, options: { maxBytes: number; contentType?: string }): Sniffed {
  const declared = options.contentType ? ` (sent as ${options.contentType.slice(0, 100)})` : '';
  if (bytes.length === 0) return failure('EMPTY_FILE', { path: BODY, message: 'the file is empty' });
  if (bytes.length > options.maxBytes)
    return failure('TOO_LARGE', { path: BODY, message: `the file is ${bytes.length} bytes; a card may be at most ${options.maxBytes} bytes` });
  if (startsWith(bytes, PNG_SIGNATURE)) return { kind: 'png' };
  if (startsWith(bytes, PNG_SIGNATURE.slice(0, 4)))
    return failure('BAD_PNG', { path: BODY, message: 'the PNG signature is damaged (were its line endings converted?)' });
  const { encoding, start } = byteOrder(bytes);
  const first = firstSignificant(bytes, encoding, start);
  if (first === null) return failure('EMPTY_FILE', { path: BODY, message: 'the file holds only whitespace' });
  if (first === 0x7b || first === 0x5b) return { kind: 'json', encoding };
  const known = KNOWN_FORMATS.find((f) => startsWith(bytes, f.magic));
  return failure('NOT_A_CARD_FILE', {
    path: BODY,
    message: `${known ? `${known.name}, ` : ''}neither a PNG card nor a JSON card${declared}: a card is a PNG with a "ccv3" or "chara" text chunk, or a JSON object`,
  });
}
