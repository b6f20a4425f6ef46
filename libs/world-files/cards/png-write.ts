/**
 * A PNG that carries a card: the card's tEXt chunks put before IEND (`png-chunks-encode` writes
 * the chunks and their CRCs, `png-chunk-text` the tEXt data) in a given PNG, whose own `ccv3` and
 * `chara` chunks are removed first, or in a 1×1 transparent PNG built once.
 */
import { deflateSync } from 'node:zlib';
import encodeChunks from 'png-chunks-encode';
import extractChunks from 'png-chunks-extract';
import { encode as encodeText } from 'png-chunk-text';
import { CARD_KEYWORDS, readCardChunk } from './png-read';
import { BODY, type CardFailure, failure } from './result';
import { PNG_SIGNATURE } from './sniff';

let blank: Uint8Array | null = null;

/** A 1×1 transparent RGBA PNG. */
export function blankPng(): Uint8Array {
  if (!blank) {
    const header = new Uint8Array(13);
    const view = new DataView(header.buffer);
    view.setUint32(0, 1); // width
    view.setUint32(4, 1); // height
    header.set([8, 6, 0, 0, 0], 8); // 8 bits, RGBA, deflate, adaptive filtering, no interlace
    const pixels = new Uint8Array(deflateSync(Uint8Array.of(0, 0, 0, 0, 0))); // filter byte, one transparent pixel
    blank = encodeChunks([
      { name: 'IHDR', data: header },
      { name: 'IDAT', data: pixels },
      { name: 'IEND', data: new Uint8Array(0) },
    ]);
  }
  return blank;
}

const isCardChunk = (chunk: { name: string; data: Uint8Array }) => {
  if (chunk.name !== 'tEXt') return false;
  const end = chunk.data.indexOf(0);
  const keyword = String.fromCharCode(...chunk.data.subarray(0, end < 0 ? Math.min(chunk.data.length, 80) : end)).toLowerCase();
  return keyword === CARD_KEYWORDS.v3 || keyword === CARD_KEYWORDS.v2;
};

/** `base` (default: a blank PNG) with these tEXt chunks (Latin-1 values: base64) before its IEND. */
export function pngWithText(texts: readonly { keyword: string; value: string }[], base?: Uint8Array): { ok: true; bytes: Uint8Array } | CardFailure {
  const png = base ?? blankPng();
  const signature = png.length >= PNG_SIGNATURE.length && PNG_SIGNATURE.every((b, i) => png[i] === b);
  if (!signature) return failure('BAD_PNG', { path: BODY, message: 'the base image is not a PNG' });
  const framing = readCardChunk(png); // the same checks as reading (framing, CRCs); a base without a card is fine
  if (!framing.ok && framing.code !== 'NO_CARD_CHUNK') return framing;
  const chunks = extractChunks(png).filter((c) => !isCardChunk(c));
  const end = chunks.findIndex((c) => c.name === 'IEND');
  chunks.splice(end, 0, ...texts.map((t) => encodeText(t.keyword, t.value)));
  return { ok: true, bytes: encodeChunks(chunks) };
}
