/**
 * Step 2 for a PNG: the card's text chunk. The chunks are read by `png-chunks-extract` (which
 * checks each CRC and the IHDR/IEND order) and the text by `png-chunk-text`. Before that, the chunk
 * framing is walked once to check that each declared length fits in the file: the library trusts
 * the length field and would allocate what it says (up to 4 GiB) for a truncated or forged chunk.
 *
 * The card is the tEXt chunk `ccv3` (V3), else `chara` (V2); keywords are compared without case.
 * When both are present, `ccv3` is read (V3 spec: the `chara` chunk is a V2 backfill).
 */
import extractChunks from 'png-chunks-extract';
import { decode as decodeText } from 'png-chunk-text';
import { BODY, type CardFailure, failure } from './result';
import { PNG_SIGNATURE } from './sniff';

export const CARD_KEYWORDS = { v3: 'ccv3', v2: 'chara' } as const;

/** PNG lengths are at most 2^31 - 1 (PNG spec §5.3). */
const MAX_CHUNK_LENGTH = 0x7fffffff;

export interface CardChunk {
  keyword: 'ccv3' | 'chara';
  /** The chunk's text (Latin-1, as tEXt is): the base64 of the card's JSON. */
  value: string;
}

/** Where the framing breaks (a chunk running past the end, no IEND), or null when every chunk fits. */
function framingProblem(bytes: Uint8Array): string | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = PNG_SIGNATURE.length;
  while (at < bytes.length) {
    if (at + 8 > bytes.length) return `the file ends inside a chunk header at byte ${at}`;
    const length = view.getUint32(at);
    const type = String.fromCharCode(...bytes.subarray(at + 4, at + 8));
    if (length > MAX_CHUNK_LENGTH) return `chunk "${printable(type)}" at byte ${at} declares ${length} bytes, more than PNG allows`;
    if (at + 12 + length > bytes.length)
      return `chunk "${printable(type)}" at byte ${at} declares ${length} bytes but the file ends ${bytes.length - at - 8} bytes later (truncated)`;
    if (type === 'IEND') return null;
    at += 12 + length;
  }
  return 'the file has no IEND chunk (truncated)';
}

const printable = (s: string) => s.replace(/[^\x20-\x7e]/g, '?');

const keywordOf = (data: Uint8Array) => {
  const end = data.indexOf(0);
  return String.fromCharCode(...data.subarray(0, Math.min(end < 0 ? data.length : end, 80)));
};

export function readCardChunk(bytes: Uint8Array): { ok: true; chunk: CardChunk } | CardFailure {
  const problem = framingProblem(bytes);
  if (problem) return failure('BAD_PNG', { path: BODY, message: problem });
  let chunks: { name: string; data: Uint8Array }[];
  try {
    chunks = extractChunks(bytes);
  } catch (error) {
    return failure('BAD_PNG', { path: BODY, message: error instanceof Error ? error.message : 'unreadable PNG chunks' });
  }
  const found = new Map<string, CardChunk>();
  const elsewhere: string[] = [];
  for (const chunk of chunks) {
    const keyword = keywordOf(chunk.data).toLowerCase();
    if (keyword !== CARD_KEYWORDS.v3 && keyword !== CARD_KEYWORDS.v2) continue;
    if (chunk.name !== 'tEXt') {
      elsewhere.push(`${chunk.name} "${keyword}"`);
      continue;
    }
    if (found.has(keyword)) continue; // the first one counts
    try {
      found.set(keyword, { keyword, value: decodeText(chunk.data).text });
    } catch (error) {
      return failure('BAD_PNG', { path: `tEXt ${keyword}`, message: error instanceof Error ? error.message : 'unreadable tEXt chunk' });
    }
  }
  const chunk = found.get(CARD_KEYWORDS.v3) ?? found.get(CARD_KEYWORDS.v2);
  if (chunk) return { ok: true, chunk };
  return failure('NO_CARD_CHUNK', {
    path: BODY,
    message: `the PNG has no "ccv3" or "chara" tEXt chunk${elsewhere.length ? ` (found ${elsewhere.join(', ')}: only tEXt is read)` : ''}: it is not a character card`,
  });
}
