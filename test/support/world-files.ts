import { deflateSync } from 'node:zlib';
import type { Kysely } from 'kysely';
import encodeChunks from 'png-chunks-encode';
import { encode as encodeText } from 'png-chunk-text';
import type { Database } from '../../libs/events';

/**
 * A 1×1 RGB PNG built with the PNG chunk libraries (not with the code under test), with `texts` as
 * tEXt chunks before IEND (a card's `chara` / `ccv3`); `pixel` is its one row as stored (filter byte, R, G, B).
 */
export function onePixelPng(options: { texts?: { keyword: string; value: string }[]; pixel?: readonly number[] } = {}): Uint8Array {
  const header = new Uint8Array(13);
  new DataView(header.buffer).setUint32(0, 1);
  new DataView(header.buffer).setUint32(4, 1);
  header.set([8, 2, 0, 0, 0], 8);
  return encodeChunks([
    { name: 'IHDR', data: header },
    { name: 'IDAT', data: new Uint8Array(deflateSync(Uint8Array.from(options.pixel ?? [0, 1, 2, 3]))) },
    ...(options.texts ?? []).map((t) => encodeText(t.keyword, t.value)),
    { name: 'IEND', data: new Uint8Array(0) },
  ]);
}

/** The rows of the event log, every tenant's (a refused request appends none). */
export async function countEvents(db: Kysely<Database>): Promise<number> {
  return Number(
    (
      await db
        .selectFrom('events')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
}
