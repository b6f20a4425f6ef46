import type { Request } from 'express';
import { idempotencyKeyOf } from './idempotency-key';

/** A request with these `headers`; its `headersDistinct` is built only when read (counted). */
function requestWith(headers: Record<string, string>, distinct: Record<string, string[]>): { req: Request; built: () => number } {
  let built = 0;
  const req = {
    headers,
    get headersDistinct() {
      built++;
      return distinct;
    },
  } as unknown as Request;
  return { req, built: () => built };
}

describe('idempotencyKeyOf', () => {
  it('a request without the header is answered from `headers`, with no `headersDistinct` built (issue 33)', () => {
    const { req, built } = requestWith({ authorization: 'Bearer x' }, {});
    expect(idempotencyKeyOf(req)).toBeUndefined();
    expect(built()).toBe(0);
  });

  it('a key given once is the key; given twice, empty or with a control character, a 400 naming the header', () => {
    expect(idempotencyKeyOf(requestWith({ 'idempotency-key': 'k-1' }, { 'idempotency-key': ['k-1'] }).req)).toBe('k-1');
    const fails = (headers: Record<string, string>, distinct: Record<string, string[]>) => () => idempotencyKeyOf(requestWith(headers, distinct).req);
    expect(fails({ 'idempotency-key': 'a, b' }, { 'idempotency-key': ['a', 'b'] })).toThrow(expect.objectContaining({ code: 'INVALID_IDEMPOTENCY_KEY' }));
    expect(fails({ 'idempotency-key': '' }, { 'idempotency-key': [''] })).toThrow(expect.objectContaining({ code: 'INVALID_IDEMPOTENCY_KEY' }));
    expect(fails({ 'idempotency-key': 'a\u0085b' }, { 'idempotency-key': ['a\u0085b'] })).toThrow(expect.objectContaining({ code: 'INVALID_IDEMPOTENCY_KEY' }));
  });
});
