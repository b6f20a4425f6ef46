/** A world as a card: JSON and PNG, V2 and V3, the card's own values restored, edits kept, a world that never was a card. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import extractChunks from 'png-chunks-extract';
import { decode as decodeText } from 'png-chunk-text';
import { parseWorldFile, WorldDocument, type WorldDocumentInput } from '../../../plugins-sdk';
import { cardToWorld, type CharacterCard, parseCard, V2_BACKFILL_NOTE, worldToCard, type WorldToCardOptions } from '../../index';
import { cardEntry, jsonBytes, plainPng, v2Card, v3Card } from './fixtures';

type Json = Record<string, unknown>;

function read(bytes: Uint8Array): CharacterCard {
  const result = parseCard(bytes);
  if (!result.ok) throw new Error(`${result.code}: ${JSON.stringify(result.issues)}`);
  return result.card;
}
function exported(world: WorldDocumentInput, options: WorldToCardOptions): Uint8Array {
  const result = worldToCard(world, options);
  if (!result.ok) throw new Error(`${result.code}: ${JSON.stringify(result.issues)}`);
  return result.bytes;
}
const textChunks = (png: Uint8Array) =>
  extractChunks(png)
    .filter((c) => c.name === 'tEXt')
    .map((c) => decodeText(c.data));
const chunkJson = (value: string) => JSON.parse(Buffer.from(value, 'base64').toString('utf8')) as { spec: string; data: Json };

describe('worldToCard', () => {
  test('JSON and PNG, with their content types', () => {
    const world = cardToWorld(read(jsonBytes(v2Card())));
    const json = worldToCard(world, { format: 'card-v2', container: 'json' });
    expect(json).toMatchObject({ ok: true, contentType: 'application/json', fileExtension: 'json' });
    const png = worldToCard(world, { format: 'card-v2', container: 'png' });
    expect(png).toMatchObject({ ok: true, contentType: 'image/png', fileExtension: 'png' });
    if (png.ok) expect(textChunks(png.bytes).map((t) => t.keyword)).toEqual(['chara']);
  });

  test('a V3 PNG carries a ccv3 chunk and a chara V2 backfill that says so in its creator notes', () => {
    const png = exported(cardToWorld(read(jsonBytes(v3Card()))), { format: 'card-v3', container: 'png' });
    const chunks = textChunks(png);
    expect(chunks.map((t) => t.keyword)).toEqual(['ccv3', 'chara']);
    const [v3, v2] = chunks.map((t) => chunkJson(t.text));
    expect([v3.spec, v2.spec]).toEqual(['chara_card_v3', 'chara_card_v2']);
    expect(v2.data.creator_notes).toBe(`${V2_BACKFILL_NOTE}\n\nA Tang-dynasty poet. Notes are never sent to the model.`);
    expect(v2.data).not.toHaveProperty('nickname');
    expect(v2.data).not.toHaveProperty('assets');
    expect(read(png).spec).toBe('chara_card_v3');
  });

  test('a base image keeps its pixels; its old card chunks are replaced', () => {
    const base = exported(cardToWorld(read(jsonBytes(v2Card({ name: 'Old' })))), { format: 'card-v3', container: 'png', basePng: plainPng() });
    const png = exported(cardToWorld(read(jsonBytes(v2Card({ name: 'New' })))), { format: 'card-v2', container: 'png', basePng: base });
    expect(extractChunks(png).find((c) => c.name === 'IDAT')).toEqual(extractChunks(plainPng()).find((c) => c.name === 'IDAT'));
    expect(textChunks(png).map((t) => t.keyword)).toEqual(['chara']);
    expect(read(png).data.name).toBe('New');
    expect(worldToCard(cardToWorld(read(jsonBytes(v2Card()))), { format: 'card-v2', container: 'png', basePng: jsonBytes('{}') })).toMatchObject({
      ok: false,
      code: 'BAD_PNG',
    });
  });

  test('an unedited world gives its card back: kept-aside entries in place, blank keys, absent fields, unknown fields', () => {
    const card = v2Card() as { data: Json & { character_book: { entries: Json[] } } };
    card.data.x_app = { keep: ['me'] };
    card.data.character_book.entries = [
      cardEntry(0, { enabled: false }),
      cardEntry(1, { keys: ['', 'moon'], selective: true, secondary_keys: ['wine'], id: 17, comment: 'c', probability: 40 }),
      cardEntry(2, { use_regex: true }),
      cardEntry(3, { constant: null, position: null }),
    ];
    const original = read(jsonBytes(card));
    for (const container of ['json', 'png'] as const) expect(read(exported(cardToWorld(original), { format: 'card-v2', container }))).toEqual(original);
  });

  test('edits to the world win over the bag: its order, its entries (lost ones left out), its values', () => {
    const world = WorldDocument.parse(cardToWorld(read(jsonBytes(v2Card({ entries: 3 })))));
    world.characters[0].name = '杜甫';
    world.openings = ['A new dawn.'];
    world.lorebook = [{ ...world.lorebook[2], keys: ['changed'], position: 'before-plugin', constant: true }, world.lorebook[0]];
    world.lorebook.push({ id: 'new', keys: ['fresh'], constant: false, content: 'New lore.', position: { depth: 1 }, order: 5, extra: { scanDepth: 7 } });
    const card = read(exported(world, { format: 'card-v2', container: 'json' }));
    expect(card.data).toMatchObject({ name: '杜甫', first_mes: 'A new dawn.', alternate_greetings: [] });
    expect(card.data.character_book?.entries).toEqual([
      expect.objectContaining({ keys: ['changed'], constant: true, position: 'before_char', extensions: { 'st/depth': 2, covel: { id: 'entry-3' } } }),
      // second in the world and in the card: its positional id is entry-2, so its own id goes in the covel extension
      expect.objectContaining({ keys: ['key0', '鍵0'], extensions: { 'st/depth': 0, covel: { id: 'entry-1' } } }),
      expect.objectContaining({ keys: ['fresh'], insertion_order: 5, extensions: { covel: { id: 'new', position: { depth: 1 }, scanDepth: 7 } } }),
    ]);
    // and reading it back gives the edited lorebook, ids included
    expect(WorldDocument.parse(cardToWorld(card)).lorebook).toEqual(world.lorebook);
  });

  test('a world that never was a card (Emberback): its first non-player character, and the fields a card has survive a round trip', () => {
    const file = join(__dirname, '../../../../worlds/emberback/WORLD.md');
    const { document } = parseWorldFile(readFileSync(file, 'utf8'), file, 'emberback');
    const card = read(exported(document, { format: 'card-v3', container: 'png' }));
    expect(card.data).toMatchObject({ name: 'Mira', nickname: 'the ferrywoman', creator_notes: document.description, scenario: document.lore });
    const back = WorldDocument.parse(cardToWorld(card));
    const mira = document.characters.find((c) => c.id === 'mira')!;
    expect(back).toMatchObject({ name: 'Mira', description: document.description, tags: document.tags, lore: document.lore, lorebook: document.lorebook });
    expect(back.characters).toEqual([
      {
        id: 'mira',
        name: 'Mira',
        aliases: ['the ferrywoman'],
        type: 'npc',
        description: mira.description,
        fields: {},
        blueprint: { personality: mira.blueprint!.personality, sampleLines: [mira.blueprint!.sampleLines!.join('\n')] },
      },
    ]);
  });

  test('a bag edited into nonsense is refused with the card path; an invalid world too', () => {
    const world = WorldDocument.parse(cardToWorld(read(jsonBytes(v3Card()))));
    (world.extensions!.card as { data: Json }).data.assets = 'not a list';
    expect(worldToCard(world, { format: 'card-v3', container: 'json' })).toMatchObject({ ok: false, code: 'INVALID_WORLD', issues: [{ path: 'data.assets' }] });
    // exported as V2, the V3-only field is not written
    expect(worldToCard(world, { format: 'card-v2', container: 'json' })).toMatchObject({ ok: true });
    expect(worldToCard({ name: '' }, { format: 'card-v2', container: 'json' })).toMatchObject({
      ok: false,
      code: 'INVALID_WORLD',
      issues: [{ path: '(world).name' }],
    });
    // a bag that is not a bag is ignored
    expect(worldToCard({ ...world, extensions: { card: 5 } }, { format: 'card-v2', container: 'json' })).toMatchObject({ ok: true });
  });
});
