/** Hostile and broken files: each gives its code and a path and message naming the problem (never an exception). */
import encodeChunks from 'png-chunks-encode';
import extractChunks from 'png-chunks-extract';
import { CARD_ERROR_CATEGORY, CARD_LIMITS, type CardErrorCode, parseCard, type ParseCardOptions } from '../../index';
import { isWellFormedText } from '../../../text';
import { cardPng, jsonBytes, plainPng, pngWithChunks, v2Card, v3Card } from './fixtures';

type Json = Record<string, unknown>;
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const withData = (data: Json) => {
  const card = v2Card() as { data: Json };
  return { ...card, data: { ...card.data, ...data } };
};
const withEntry = (index: number, fields: Json) => {
  const card = v2Card({ entries: 5 }) as { data: { character_book: { entries: Json[] } } };
  card.data.character_book.entries[index] = { ...card.data.character_book.entries[index], ...fields };
  return card;
};
/** A valid V2 PNG card with its bytes changed by `f`. */
const mutated = (f: (bytes: Uint8Array) => Uint8Array) => f(new Uint8Array(cardPng(v2Card())));
/** Byte offset of the first chunk named `name` in a PNG. */
function chunkOffset(png: Uint8Array, name: string): number {
  const view = new DataView(png.buffer, png.byteOffset);
  for (let at = 8; at < png.length; at += 12 + view.getUint32(at)) if (String.fromCharCode(...png.subarray(at + 4, at + 8)) === name) return at;
  throw new Error(`no ${name}`);
}
const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

interface Case {
  name: string;
  bytes: () => Uint8Array;
  options?: ParseCardOptions;
  code: CardErrorCode;
  path: string;
  message: RegExp;
}

const cases: Case[] = [
  { name: 'an empty body', bytes: () => new Uint8Array(0), code: 'EMPTY_FILE', path: '(body)', message: /empty/ },
  { name: 'only whitespace', bytes: () => jsonBytes(' \n\t '), code: 'EMPTY_FILE', path: '(body)', message: /whitespace/ },
  {
    name: 'more bytes than the caller allows',
    bytes: () => jsonBytes(v2Card()),
    options: { maxBytes: 100 },
    code: 'TOO_LARGE',
    path: '(body)',
    message: /at most 100 bytes/,
  },
  {
    name: 'more than the default 8 MiB',
    bytes: () => new Uint8Array(CARD_LIMITS.maxBytes + 1).fill(0x20),
    code: 'TOO_LARGE',
    path: '(body)',
    message: new RegExp(`${CARD_LIMITS.maxBytes + 1} bytes`),
  },
  { name: 'plain text', bytes: () => jsonBytes('hello, I am a card'), code: 'NOT_A_CARD_FILE', path: '(body)', message: /neither a PNG card nor a JSON card/ },
  {
    name: 'a JPEG sent as image/png',
    bytes: () => Uint8Array.of(0xff, 0xd8, 0xff, 0xe0, 0, 0x10),
    options: { contentType: 'image/png' },
    code: 'NOT_A_CARD_FILE',
    path: '(body)',
    message: /JPEG.*sent as image\/png/,
  },
  { name: 'a zip (CHARX)', bytes: () => Uint8Array.of(0x50, 0x4b, 0x03, 0x04, 1, 2), code: 'NOT_A_CARD_FILE', path: '(body)', message: /zip/ },
  {
    name: 'a PNG signature mangled by line-ending conversion',
    bytes: () => mutated((b) => Uint8Array.from([...b.subarray(0, 4), 0x0a, ...b.subarray(6)])),
    code: 'BAD_PNG',
    path: '(body)',
    message: /signature is damaged/,
  },
  { name: 'a PNG without a card chunk', bytes: () => plainPng(), code: 'NO_CARD_CHUNK', path: '(body)', message: /no "ccv3" or "chara" tEXt chunk/ },
  {
    name: 'a PNG with other text chunks only',
    bytes: () => pngWithChunks([{ keyword: 'Comment', value: 'made with love' }]),
    code: 'NO_CARD_CHUNK',
    path: '(body)',
    message: /not a character card/,
  },
  {
    name: 'a card in an iTXt chunk',
    bytes: () => pngWithChunks([], [{ name: 'iTXt', data: new TextEncoder().encode(`chara\0\0\0\0\0${b64('{}')}`) }]),
    code: 'NO_CARD_CHUNK',
    path: '(body)',
    message: /found iTXt "chara": only tEXt is read/,
  },
  {
    name: 'a PNG truncated inside the card chunk',
    bytes: () => mutated((b) => b.subarray(0, chunkOffset(b, 'tEXt') + 40)),
    code: 'BAD_PNG',
    path: '(body)',
    message: /chunk "tEXt" at byte \d+ declares \d+ bytes but the file ends \d+ bytes later \(truncated\)/,
  },
  {
    name: 'a PNG cut before IEND',
    bytes: () => mutated((b) => b.subarray(0, chunkOffset(b, 'IEND'))),
    code: 'BAD_PNG',
    path: '(body)',
    message: /no IEND chunk/,
  },
  {
    name: 'a PNG cut inside a chunk header',
    bytes: () => mutated((b) => b.subarray(0, chunkOffset(b, 'IEND') + 5)),
    code: 'BAD_PNG',
    path: '(body)',
    message: /ends inside a chunk header/,
  },
  {
    name: 'a card chunk with a bad CRC',
    bytes: () =>
      mutated((b) => {
        b[chunkOffset(b, 'tEXt') + 20] ^= 0x01;
        return b;
      }),
    code: 'BAD_PNG',
    path: '(body)',
    message: /CRC values for tEXt/,
  },
  {
    name: 'a chunk that declares 2 GiB (forged length)',
    bytes: () =>
      mutated((b) => {
        new DataView(b.buffer, b.byteOffset).setUint32(chunkOffset(b, 'tEXt'), 0x7fff0000);
        return b;
      }),
    code: 'BAD_PNG',
    path: '(body)',
    message: /declares 2147418112 bytes/,
  },
  {
    name: 'a PNG whose first chunk is not IHDR',
    bytes: () => {
      const chunks = extractChunks(cardPng(v2Card()));
      return encodeChunks(chunks.filter((c) => c.name !== 'IHDR'));
    },
    code: 'BAD_PNG',
    path: '(body)',
    message: /IHDR header missing/,
  },
  {
    name: 'a tEXt card chunk with a NUL in its value',
    bytes: () => pngWithChunks([], [{ name: 'tEXt', data: Uint8Array.from([...new TextEncoder().encode('chara\0abc'), 0, 0x41]) }]),
    code: 'BAD_PNG',
    path: 'tEXt chara',
    message: /NULL character/,
  },
  {
    name: 'base64 with junk characters',
    bytes: () => pngWithChunks([{ keyword: 'chara', value: `${b64(JSON.stringify(v2Card()))}@@!` }]),
    code: 'BAD_BASE64',
    path: 'tEXt chara',
    message: /character \d+ \(code 64\) is not base64/,
  },
  {
    name: 'base64 of an impossible length',
    bytes: () => pngWithChunks([{ keyword: 'chara', value: 'QUJDRAQUJ' }]),
    code: 'BAD_BASE64',
    path: 'tEXt chara',
    message: /malformed base64/,
  },
  {
    name: 'base64 with padding in the middle',
    bytes: () => pngWithChunks([{ keyword: 'ccv3', value: 'QQ==QUJD' }]),
    code: 'BAD_BASE64',
    path: 'tEXt ccv3',
    message: /malformed base64/,
  },
  { name: 'an empty card chunk', bytes: () => pngWithChunks([{ keyword: 'chara', value: ' ' }]), code: 'BAD_BASE64', path: 'tEXt chara', message: /empty/ },
  {
    name: 'base64 of bytes that are not UTF-8',
    bytes: () => pngWithChunks([{ keyword: 'chara', value: Buffer.from([0x7b, 0xff, 0xfe, 0x7d]).toString('base64') }]),
    code: 'BAD_TEXT_ENCODING',
    path: 'tEXt chara',
    message: /not valid UTF-8/,
  },
  {
    name: 'a JSON file that is not UTF-8 (Latin-1 é, no byte order mark)',
    bytes: () => Uint8Array.from([...jsonBytes('{"spec":"chara_card_v2","data":{"name":"Ren'), 0xe9, ...jsonBytes('"}}')]),
    code: 'BAD_TEXT_ENCODING',
    path: '(body)',
    message: /must be UTF-8/,
  },
  { name: 'broken JSON', bytes: () => jsonBytes('{"spec": "chara_card_v2", "data": }'), code: 'BAD_JSON', path: '(body)', message: /not valid JSON/ },
  { name: 'broken JSON in a PNG', bytes: () => cardPng('{"spec": "chara_card_v2",'), code: 'BAD_JSON', path: 'tEXt chara', message: /not valid JSON/ },
  {
    name: 'JSON nested 65 deep in extensions',
    bytes: () => jsonBytes(JSON.stringify(withData({})).replace('"extensions":{', `"extensions":{"deep":${nested(62)},`)),
    code: 'TOO_DEEP',
    path: '(body)',
    message: /deeper than 64 levels/,
  },
  { name: 'a million opening brackets', bytes: () => jsonBytes('['.repeat(1_000_000)), code: 'TOO_DEEP', path: '(body)', message: /deeper than 64/ },
  {
    name: 'a depth under a lower cap',
    bytes: () => jsonBytes(v2Card()),
    options: { maxDepth: 3 },
    code: 'TOO_DEEP',
    path: '(body)',
    message: /deeper than 3 levels/,
  },
  {
    name: 'a NUL in the description',
    bytes: () => jsonBytes(withData({ description: 'before\u0000after' })),
    code: 'BAD_STRING',
    path: 'data.description',
    message: /U\+0000/,
  },
  {
    name: 'a lone surrogate escaped in JSON',
    bytes: () => jsonBytes(JSON.stringify(withEntry(1, {})).replace('"Entry 1 content', '"\\ud800Entry 1 content')),
    code: 'BAD_STRING',
    path: 'data.character_book.entries.1.content',
    message: /lone surrogate/,
  },
  {
    name: 'a lone low surrogate in a key',
    bytes: () => jsonBytes(JSON.stringify(withData({})).replace('"extensions":{', '"extensions":{"a\\udc00":1,')),
    code: 'BAD_STRING',
    path: 'data.character_book.extensions."a\\udc00"',
    message: /the key holds a lone surrogate/,
  },
  {
    name: 'a __proto__ key',
    bytes: () => jsonBytes(JSON.stringify(withData({})).replace('"extensions":{', '"extensions":{"__proto__":{"polluted":true},')),
    code: 'BAD_STRING',
    path: 'data.character_book.extensions."__proto__"',
    message: /__proto__/,
  },
  { name: 'a JSON array', bytes: () => jsonBytes([v2Card()]), code: 'INVALID_CARD', path: '(body)', message: /expected a JSON object, got an array/ },
  {
    name: 'an unknown spec',
    bytes: () => jsonBytes({ ...v2Card(), spec: 'chara_card_v4' }),
    code: 'UNSUPPORTED_SPEC',
    path: 'spec',
    message: /"chara_card_v4"/,
  },
  {
    name: 'a V1 card',
    bytes: () => jsonBytes({ name: 'Old', description: '', personality: '', scenario: '', first_mes: 'Hi', mes_example: '' }),
    code: 'UNSUPPORTED_SPEC',
    path: 'spec',
    message: /Character Card V1/,
  },
  { name: 'a JSON object that is no card', bytes: () => jsonBytes({ hello: 'world' }), code: 'UNSUPPORTED_SPEC', path: 'spec', message: /got no spec/ },
  {
    name: 'a V2 card with spec_version 1.0',
    bytes: () => jsonBytes({ ...v2Card(), spec_version: '1.0' }),
    code: 'UNSUPPORTED_SPEC',
    path: 'spec_version',
    message: /"2.0"/,
  },
  {
    name: 'a V3 card with spec_version "three"',
    bytes: () => jsonBytes({ ...v3Card(), spec_version: 'three' }),
    code: 'UNSUPPORTED_SPEC',
    path: 'spec_version',
    message: /"3.0" or later/,
  },
  {
    name: 'keys as one string',
    bytes: () => cardPng(withEntry(3, { keys: 'dragon, wyrm' })),
    code: 'INVALID_CARD',
    path: 'data.character_book.entries.3.keys',
    message: /expected array/,
  },
  { name: 'no name', bytes: () => jsonBytes(withData({ name: undefined })), code: 'INVALID_CARD', path: 'data.name', message: /expected string/ },
  {
    name: 'a fractional insertion_order',
    bytes: () => jsonBytes(withEntry(0, { insertion_order: 1.5 })),
    code: 'INVALID_CARD',
    path: 'data.character_book.entries.0.insertion_order',
    message: /expected int/,
  },
  {
    name: 'an unknown position',
    bytes: () => jsonBytes(withEntry(2, { position: 'middle' })),
    code: 'INVALID_CARD',
    path: 'data.character_book.entries.2.position',
    message: /before_char/,
  },
  {
    name: 'a number for a greeting',
    bytes: () => jsonBytes(withData({ alternate_greetings: ['hi', 7] })),
    code: 'INVALID_CARD',
    path: 'data.alternate_greetings.1',
    message: /expected string/,
  },
  {
    name: 'a V3 asset without a uri',
    bytes: () => jsonBytes({ ...v3Card(), data: { ...(v3Card().data as Json), assets: [{ type: 'icon', name: 'main', ext: 'png' }] } }),
    code: 'INVALID_CARD',
    path: 'data.assets.0.uri',
    message: /expected string/,
  },
  { name: 'a blank name', bytes: () => jsonBytes(withData({ name: ' \u3000 ' })), code: 'INVALID_CARD', path: 'data.name', message: /must not be blank/ },
  {
    name: 'an unclosed narrator-only marker in the scenario',
    bytes: () => jsonBytes(withData({ scenario: 'A river.\n<!-- narrator-only -->\nThe secret.' })),
    code: 'INVALID_CARD',
    path: 'data.scenario',
    message: /line 2: .*never closed/,
  },
  {
    name: "an entry's covel extension of another shape",
    bytes: () => jsonBytes(withEntry(4, { extensions: { covel: { id: '' } } })),
    code: 'INVALID_CARD',
    path: 'data.character_book.entries.4.extensions.covel',
    message: /reserved for Covel/,
  },
  {
    name: 'more greetings than a world has openings',
    bytes: () => jsonBytes(withData({ alternate_greetings: Array.from({ length: 40 }, (_, i) => `Greeting ${i}`) })),
    code: 'LIMIT_EXCEEDED',
    path: 'data.alternate_greetings',
    message: /41 greetings; a world has at most 32 openings/,
  },
  {
    name: 'a scenario past the lore limit',
    bytes: () => jsonBytes(withData({ scenario: '龍'.repeat(200_001) })),
    code: 'LIMIT_EXCEEDED',
    path: 'data.scenario',
    message: /longer than 200000 characters/,
  },
  {
    name: 'a greeting past the opening limit',
    bytes: () => jsonBytes(withData({ alternate_greetings: ['short', '😀'.repeat(20_001)] })),
    code: 'LIMIT_EXCEEDED',
    path: 'data.alternate_greetings.1',
    message: /longer than 20000 characters/,
  },
  {
    name: 'more active entries than a lorebook holds',
    bytes: () => jsonBytes(v2Card({ entries: 5001 })),
    code: 'LIMIT_EXCEEDED',
    path: 'data.character_book.entries',
    message: /5001 entries/,
  },
  {
    name: 'a world document past 4 MiB',
    bytes: () => jsonBytes(withData({ system_prompt: 'x'.repeat(4 * 1024 * 1024) })),
    code: 'TOO_LARGE',
    path: '(body)',
    message: /at most 4194304/,
  },
];

describe('parseCard refuses bad files with a code, a path and a message', () => {
  test('the table has at least 40 distinct inputs', () => {
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
    expect(cases.length).toBeGreaterThanOrEqual(40);
  });

  test.each(cases)('$name → $code at $path', ({ bytes, options, code, path, message }) => {
    const result = parseCard(bytes(), options);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.code).toBe(code);
    expect(result.issues.length).toBeGreaterThan(0);
    expect(result.issues[0].path).toBe(path);
    expect(result.issues[0].message).toMatch(message);
    // the answer itself is well-formed text (it goes into a JSON error body)
    for (const issue of result.issues) expect(isWellFormedText(issue.path) && isWellFormedText(issue.message)).toBe(true);
    expect(CARD_ERROR_CATEGORY[code]).toBe(code === 'TOO_LARGE' ? 'too-large' : 'invalid');
  });

  test('each problem of a card is named (several schema errors at once)', () => {
    const result = parseCard(jsonBytes(withData({ description: 1, tags: 'a', creator: false })));
    expect(result).toMatchObject({ ok: false, code: 'INVALID_CARD' });
    if (!result.ok) expect(result.issues.map((i) => i.path).sort()).toEqual(['data.creator', 'data.description', 'data.tags']);
  });

  test('a V3 card with a valid ccv3 chunk is read even when its chara backfill is broken; a broken ccv3 is reported, not skipped', () => {
    const v3 = { keyword: 'ccv3', value: b64(JSON.stringify(v3Card())) };
    expect(parseCard(pngWithChunks([{ keyword: 'chara', value: '@@@' }, v3]))).toMatchObject({ ok: true, version: 'v3' });
    expect(
      parseCard(
        pngWithChunks([
          { keyword: 'ccv3', value: '@@@' },
          { keyword: 'chara', value: b64(JSON.stringify(v2Card())) },
        ]),
      ),
    ).toMatchObject({
      ok: false,
      code: 'BAD_BASE64',
      issues: [{ path: 'tEXt ccv3' }],
    });
  });
});
