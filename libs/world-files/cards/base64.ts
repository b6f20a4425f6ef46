/**
 * The card chunk's value: standard base64 (RFC 4648 §4 alphabet), padding optional, whitespace
 * allowed only around it. `Buffer.from(s, 'base64')` alone would skip any character outside the
 * alphabet and decode junk into junk; this checks the text first.
 */
import { type CardFailure, failure } from './result';

const BASE64 = /^[A-Za-z0-9+/]*(?:={1,2})?$/;

export function decodeBase64(value: string, where: string): { ok: true; bytes: Uint8Array } | CardFailure {
  const trimmed = value.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, '');
  if (trimmed === '') return failure('BAD_BASE64', { path: where, message: 'the value is empty' });
  const at = trimmed.search(/[^A-Za-z0-9+/=]/);
  if (at >= 0)
    return failure('BAD_BASE64', {
      path: where,
      message: `character ${at + 1} (code ${trimmed.charCodeAt(at)}) is not base64`,
    });
  const unpadded = trimmed.replace(/=+$/, '');
  if (!BASE64.test(trimmed) || unpadded.length % 4 === 1 || (trimmed.length !== unpadded.length && trimmed.length % 4 !== 0))
    return failure('BAD_BASE64', { path: where, message: `malformed base64 (length ${trimmed.length}, padding or "=" misplaced)` });
  return { ok: true, bytes: new Uint8Array(Buffer.from(unpadded, 'base64')) };
}

/** Standard base64 with padding. */
export function encodeBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}
