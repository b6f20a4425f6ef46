/** Reading good cards: PNG (V2, V3 with its V2 backfill) and JSON (UTF-8, with a byte order mark, UTF-16), lenient where real cards are. */
import { parseCard } from '../../index';
import { cardPng, jsonBytes, NAMES, pngWithChunks, v2Card, v3Card } from './fixtures';

type Json = Record<string, unknown>;
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64');

describe('parseCard', () => {
  test('a V2 PNG card with a CJK name and a lorebook of 200 entries', () => {
    const result = parseCard(cardPng(v2Card({ entries: 200 })), { contentType: 'image/png' });
    expect(result).toMatchObject({ ok: true, version: 'v2', container: 'png' });
    if (!result.ok) return;
    expect(result.card.data.name).toBe('李白');
    expect(result.card.data.character_book?.entries).toHaveLength(200);
    expect(result.card.data.character_book?.entries[199]).toMatchObject({ keys: ['key199', '鍵199'], insertion_order: 299 });
  });

  test('a V3 JSON card with an Arabic name and its V3 fields', () => {
    const result = parseCard(jsonBytes(v3Card()), { contentType: 'application/json' });
    expect(result).toMatchObject({ ok: true, version: 'v3', container: 'json' });
    if (!result.ok || result.version !== 'v3') return;
    expect(result.card.data).toMatchObject({
      name: 'ليلى',
      nickname: 'ليلى الصغيرة',
      group_only_greetings: ['مرحبا بالجميع'],
      assets: [{ type: 'icon', uri: 'ccdefault:', name: 'main', ext: 'png' }],
      creation_date: 1_700_000_000,
    });
  });

  test.each(Object.entries(NAMES))('a %s name reads as written', (_kind, name) => {
    const result = parseCard(cardPng(v2Card({ name })));
    expect(result.ok && result.card.data.name).toBe(name);
  });

  test('the ccv3 chunk wins over the chara backfill, in either order; keywords are compared without case', () => {
    const v3 = { keyword: 'ccv3', value: b64(v3Card({ name: 'V3 name' })) };
    const v2 = { keyword: 'chara', value: b64(v2Card({ name: 'V2 name' })) };
    for (const chunks of [
      [v2, v3],
      [v3, v2],
    ]) {
      const result = parseCard(pngWithChunks(chunks));
      expect(result.ok && [result.version, result.card.data.name]).toEqual(['v3', 'V3 name']);
    }
    expect(parseCard(pngWithChunks([{ keyword: 'Chara', value: v2.value }]))).toMatchObject({ ok: true, version: 'v2' });
  });

  test('the spec field decides the version, whatever chunk holds the card', () => {
    expect(parseCard(cardPng(v3Card(), 'chara'))).toMatchObject({ ok: true, version: 'v3' });
  });

  test('JSON with a UTF-8 byte order mark, or in UTF-16 after its byte order mark', () => {
    const text = JSON.stringify(v2Card({ name: NAMES.zwj }));
    const utf16le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    const utf16be = Buffer.from(utf16le.subarray(2)).swap16();
    for (const bytes of [
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`\n  ${text}`)]),
      utf16le,
      Buffer.concat([Buffer.from([0xfe, 0xff]), utf16be]),
    ])
      expect(parseCard(new Uint8Array(bytes))).toMatchObject({ ok: true, card: { data: { name: NAMES.zwj } } });
  });

  test('lenient where real cards are: missing or null fields take their defaults, no spec_version on V2, a newer V3 version', () => {
    const minimal = parseCard(
      jsonBytes({ spec: 'chara_card_v2', data: { name: 'Min', description: null, character_book: { entries: [{ keys: ['a'], content: 'A' }] } } }),
    );
    expect(minimal).toMatchObject({
      ok: true,
      card: {
        data: {
          name: 'Min',
          description: '',
          first_mes: '',
          alternate_greetings: [],
          tags: [],
          extensions: {},
          character_book: { extensions: {}, entries: [{ keys: ['a'], content: 'A', extensions: {}, enabled: true, insertion_order: 0 }] },
        },
      },
    });
    expect(parseCard(jsonBytes({ ...v3Card(), spec_version: '3.1' }))).toMatchObject({ ok: true, version: 'v3' });
  });

  test("fields the spec does not name are kept (the data's, the book's, each entry's); top-level V1 mirrors are dropped", () => {
    const card = v2Card() as { data: Json & { character_book: { entries: Json[] } } };
    card.data.x_app = { a: [1] };
    card.data.character_book.entries[0].probability = 50;
    const result = parseCard(jsonBytes({ ...card, name: 'mirror', chat: 'x' }));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.card.data.x_app).toEqual({ a: [1] });
    expect(result.card.data.character_book?.entries[0].probability).toBe(50);
    expect(result.card).not.toHaveProperty('chat');
  });

  test('a JSON card sent with a wrong content type is still read (the content decides)', () => {
    expect(parseCard(jsonBytes(v2Card()), { contentType: 'image/png' })).toMatchObject({ ok: true, container: 'json' });
  });
});
