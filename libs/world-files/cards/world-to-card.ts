/**
 * A world document as a card (V2 or V3; JSON, or a PNG with the card in tEXt). A world made from a
 * card gives that card back: the fields the world holds come from the world (edits included), the
 * others from its `extensions.card` bag, and where the world kept a field only in part (blank keys,
 * empty greetings) and still agrees with the card's value, the card's value is written. A world
 * that never was a card exports its first non-player character (or none: the world's name) and
 * loses what a card cannot say (other characters, seats, schemas, dimensions, plugins).
 *
 * A V3 PNG also carries a `chara` chunk with the card as V2, whose `creator_notes` start with the
 * warning the V3 spec asks a V2 backfill to carry; V3 readers take `ccv3`.
 */
import { type WorldCharacter, WorldDocument, type WorldDocumentInput } from '../../plugins-sdk';
import { encodeBase64 } from './base64';
import { CARD_EXTENSION_KEY, CardBag } from './bag';
import { greetingsOf } from './card-to-world';
import { normalLore } from './card-to-world';
import { lorebookToCardBook } from './entries';
import { CARD_KEYWORDS } from './png-read';
import { pngWithText } from './png-write';
import { type CardFailure, type CardIssue, dottedPath, failure } from './result';
import { CharacterCardV2, CharacterCardV3 } from './schema';

export type CardFormat = 'card-v2' | 'card-v3';

export interface WorldToCardOptions {
  format: CardFormat;
  container: 'json' | 'png';
  /** The image of a PNG card (default: a 1×1 transparent PNG); its own card chunks are replaced. */
  basePng?: Uint8Array;
}

export type WorldToCardResult = { ok: true; bytes: Uint8Array; contentType: 'application/json' | 'image/png'; fileExtension: 'json' | 'png' } | CardFailure;

/** The `creator_notes` warning of a V2 backfill in a V3 PNG (V3 spec, "Embedding Methods"). */
export const V2_BACKFILL_NOTE =
  'This character card is Character Card V3, but it is loaded as a Character Card V2. Please use a Character Card V3 compatible application to use this character card properly.';

/** V3 data fields a V2 card does not have. */
const V3_ONLY_FIELDS = ['assets', 'nickname', 'creator_notes_multilingual', 'source', 'group_only_greetings', 'creation_date', 'modification_date'];

type Json = Record<string, unknown>;
const isBlank = (s: string) => s.trim() === '';
const sameStrings = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((s, i) => s === b[i]);
const str = (v: unknown) => (typeof v === 'string' ? v : '');
const obj = (v: unknown): Json => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});

/** The card's character: the bag's, else the first that is not a player's, else the first. */
function cardCharacter(world: WorldDocument, bag: CardBag | undefined): WorldCharacter | undefined {
  const seated = new Set(world.seats.map((s) => s.characterId));
  return (
    world.characters.find((c) => c.id === bag?.characterId) ?? world.characters.find((c) => c.type !== 'player' && !seated.has(c.id)) ?? world.characters[0]
  );
}

/** The card object (not yet checked) of a valid world. */
function cardObject(world: WorldDocument, version: 'v2' | 'v3'): Json {
  const bagged = CardBag.safeParse(world.extensions?.[CARD_EXTENSION_KEY]);
  const bag = bagged.success ? bagged.data : undefined;
  const raw = bag?.raw ?? {};
  const data = { ...(bag?.data ?? {}) };
  if (version === 'v2') for (const key of V3_ONLY_FIELDS) delete data[key];
  const character = cardCharacter(world, bag);

  const openings = world.openings ?? [];
  const rawGreetings = raw.first_mes !== undefined && raw.alternate_greetings !== undefined;
  const [firstMes, alternates] =
    rawGreetings && sameStrings(greetingsOf(raw.first_mes!, raw.alternate_greetings!), openings)
      ? [raw.first_mes!, raw.alternate_greetings!]
      : [openings[0] ?? '', openings.slice(1)];
  const tags =
    raw.tags &&
    sameStrings(
      raw.tags.filter((t) => !isBlank(t)),
      world.tags,
    )
      ? raw.tags
      : world.tags;

  const book = bag?.book;
  const entries = lorebookToCardBook(world.lorebook, bag?.entries ?? [], { bookScanDepth: book?.scan_depth, version });
  const out: Json = {
    ...data,
    name: character?.name ?? world.name,
    description: character?.description ?? '',
    personality: character?.blueprint?.personality ?? '',
    // the scenario as the card wrote it, unless the lore was edited since
    scenario: raw.scenario !== undefined && normalLore(raw.scenario) === world.lore ? raw.scenario : world.lore,
    first_mes: firstMes,
    mes_example: character?.blueprint?.sampleLines?.join('\n') ?? '',
    creator_notes: world.description,
    system_prompt: str(data.system_prompt),
    post_history_instructions: str(data.post_history_instructions),
    alternate_greetings: alternates,
    tags,
    creator: str(data.creator),
    character_version: str(data.character_version),
    extensions: obj(data.extensions),
  };
  if (book || entries.length) out.character_book = { ...book, extensions: obj(book?.extensions), entries };
  if (version === 'v3') {
    const alias = character?.aliases[0];
    if (alias !== undefined) out.nickname = alias;
    else if (raw.nickname !== undefined) out.nickname = raw.nickname;
    if (!Array.isArray(out.group_only_greetings)) out.group_only_greetings = [];
    return { spec: 'chara_card_v3', spec_version: '3.0', data: out };
  }
  return { spec: 'chara_card_v2', spec_version: '2.0', data: out };
}

const utf8 = (text: string) => new TextEncoder().encode(text);

export function worldToCard(document: WorldDocumentInput, options: WorldToCardOptions): WorldToCardResult {
  const world = WorldDocument.safeParse(document);
  if (!world.success)
    return failure(
      'INVALID_WORLD',
      world.error.issues.map((i) => ({ path: `(world).${dottedPath(i.path)}`, message: i.message })),
    );
  const version = options.format === 'card-v3' ? 'v3' : 'v2';
  const card = cardObject(world.data, version);
  // a bag edited by hand could hold a wrongly typed field: the card is checked against its own schema before it leaves
  const checked = (version === 'v3' ? CharacterCardV3 : CharacterCardV2).safeParse(card);
  if (!checked.success) {
    const issues: CardIssue[] = checked.error.issues.map((i) => ({ path: dottedPath(i.path), message: i.message }));
    return failure('INVALID_WORLD', issues);
  }
  if (options.container === 'json')
    return { ok: true, bytes: utf8(`${JSON.stringify(card, null, 2)}\n`), contentType: 'application/json', fileExtension: 'json' };

  const chunk = (value: Json) => encodeBase64(utf8(JSON.stringify(value)));
  const texts = [{ keyword: version === 'v3' ? CARD_KEYWORDS.v3 : CARD_KEYWORDS.v2, value: chunk(card) }];
  if (version === 'v3') {
    const backfill = cardObject(world.data, 'v2');
    const data = backfill.data as Json;
    data.creator_notes = data.creator_notes ? `${V2_BACKFILL_NOTE}\n\n${String(data.creator_notes)}` : V2_BACKFILL_NOTE;
    texts.push({ keyword: CARD_KEYWORDS.v2, value: chunk(backfill) });
  }
  const png = pngWithText(texts, options.basePng);
  return png.ok ? { ok: true, bytes: png.bytes, contentType: 'image/png', fileExtension: 'png' } : png;
}
