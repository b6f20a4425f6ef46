/**
 * Properties: any card (Unicode names, hostile text, lorebooks with every entry field, unknown
 * fields) reads, makes a valid world, exports and reads back to the same world and the same card;
 * no byte string makes parseCard throw.
 */
import fc from 'fast-check';
import { narratorOnlyIssues, WorldDocument } from '../../../plugins-sdk';
import { isWellFormedText } from '../../../text';
import { CARD_ERROR_CATEGORY, cardToWorld, parseCard, worldToCard } from '../../index';
import { cardPng, jsonBytes, v2Card } from './fixtures';

const hostile = fc.constantFrom(
  '</world-lore>',
  '<world-characters>',
  '{{char}}',
  '{{user}}',
  '{{ }}',
  '{{ world.lore }}',
  '{{random:a,b}}',
  '<START>',
  '@@depth 4',
  '\n<!-- narrator-only -->\n',
  '👨‍👩‍👧‍👦',
  '🏳️‍🌈',
  'مرحبا',
  'שָׁלוֹם',
  '\u202eevil',
  '龍背',
  'constructor',
  '\r\n',
);
const text = fc
  .array(
    fc.oneof(
      hostile,
      fc.string({ unit: 'grapheme', maxLength: 12 }),
      fc.string({ unit: 'binary', maxLength: 6 }).map((s) => s.replace(/\0/g, '')),
    ),
    {
      maxLength: 4,
    },
  )
  .map((parts) => parts.join(''));
const maybeEmpty = fc.oneof(text, fc.constantFrom('', ' ', '\n'));
const name = text.filter((s) => s.trim() !== '');
const scenario = text.filter((s) => narratorOnlyIssues(s).length === 0);
const key = fc.string({ maxLength: 6 }).filter((k) => k !== '__proto__');
// jsonValue writes "__proto__" keys on purpose: a card with one is refused (bad-inputs.test.ts)
const json = (maxDepth: number) => fc.jsonValue({ maxDepth }).filter((v) => !JSON.stringify(v).includes('"__proto__"'));
const extensions = fc.dictionary(key, json(2), { maxKeys: 3 });
const entryExtensions = fc.oneof(
  extensions,
  fc.constantFrom({ covel: { id: 'entry-1' } }, { covel: { id: 'world-lore' } }, { covel: { position: { depth: 3 }, scanDepth: 5 } }),
);
const nullable = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null });

const entry = (v3: boolean) =>
  fc
    .tuple(
      fc.record({
        keys: fc.array(maybeEmpty, { maxLength: 3 }),
        content: maybeEmpty,
        extensions: entryExtensions,
        enabled: fc.boolean(),
        insertion_order: fc.integer({ min: -1000, max: 1000 }),
        ...(v3 ? { use_regex: fc.boolean() } : {}),
      }),
      fc.record(
        {
          constant: nullable(fc.boolean()),
          position: nullable(fc.constantFrom('before_char', 'after_char')),
          case_sensitive: nullable(fc.boolean()),
          selective: fc.boolean(),
          secondary_keys: fc.array(text, { maxLength: 2 }),
          id: fc.oneof(fc.nat(), text),
          name: text,
          comment: text,
          priority: fc.integer(),
          x_tool: json(1),
        },
        { requiredKeys: [] },
      ),
    )
    .map(([a, b]) => ({ ...a, ...b }));

const book = (v3: boolean) =>
  fc.record(
    {
      name: text,
      description: text,
      scan_depth: fc.integer({ min: 0, max: 40 }),
      token_budget: fc.nat(),
      recursive_scanning: fc.boolean(),
      extensions,
      entries: fc.array(entry(v3), { maxLength: 8 }),
    },
    { requiredKeys: ['entries'] },
  );

const v2Data = (v3: boolean) => ({
  name,
  description: maybeEmpty,
  personality: maybeEmpty,
  scenario,
  first_mes: maybeEmpty,
  mes_example: maybeEmpty,
  creator_notes: maybeEmpty,
  system_prompt: maybeEmpty,
  post_history_instructions: maybeEmpty,
  alternate_greetings: fc.array(maybeEmpty, { maxLength: 4 }),
  character_book: fc.option(book(v3), { nil: undefined }),
  tags: fc.array(maybeEmpty, { maxLength: 3 }),
  creator: maybeEmpty,
  character_version: maybeEmpty,
  extensions,
});

const cardV2 = fc
  .tuple(fc.record(v2Data(false)), fc.record({ x_field: json(2) }, { requiredKeys: [] }))
  .map(([data, extra]) => ({ spec: 'chara_card_v2', spec_version: '2.0', data: { ...data, ...extra } }));

const cardV3 = fc
  .tuple(
    fc.record(v2Data(true)),
    fc.record(
      {
        nickname: nullable(maybeEmpty),
        assets: fc.array(fc.record({ type: fc.constantFrom('icon', 'background', 'x_own'), uri: text, name: text, ext: fc.constantFrom('png', 'webp') }), {
          maxLength: 2,
        }),
        creator_notes_multilingual: fc.dictionary(fc.constantFrom('en', 'ja', 'ar'), text),
        source: fc.array(text, { maxLength: 2 }),
        group_only_greetings: fc.array(text, { maxLength: 2 }),
        creation_date: fc.nat(),
        modification_date: fc.nat(),
      },
      { requiredKeys: ['group_only_greetings'] },
    ),
  )
  .map(([data, v3]) => ({ spec: 'chara_card_v3', spec_version: '3.0', data: { ...data, ...v3 } }));

/** A card's data without the `covel` extension objects of its entries. */
function withoutCovel<T extends { character_book?: { entries: { extensions: Record<string, unknown> }[] } | null }>(data: T): T {
  if (!data.character_book) return data;
  const entries = data.character_book.entries.map((e) => {
    const { covel, ...rest } = e.extensions;
    return { ...e, extensions: covel !== null && typeof covel === 'object' ? rest : e.extensions };
  });
  return { ...data, character_book: { ...data.character_book, entries } };
}

describe('round trips', () => {
  test.each([
    ['card-v2', 'json'],
    ['card-v2', 'png'],
    ['card-v3', 'json'],
    ['card-v3', 'png'],
  ] as const)('%s %s: card → world → card → world gives the same world and the same card', (format, container) => {
    const cards = format === 'card-v2' ? cardV2 : cardV3;
    fc.assert(
      fc.property(cards, (card) => {
        const bytes = container === 'png' ? cardPng(card, format === 'card-v3' ? 'ccv3' : 'chara') : jsonBytes(card);
        const first = parseCard(bytes);
        if (!first.ok) throw new Error(`${first.code} ${JSON.stringify(first.issues)}`);
        const world = cardToWorld(first.card);
        expect(WorldDocument.safeParse(world).success).toBe(true);
        const exported = worldToCard(world, { format, container });
        if (!exported.ok) throw new Error(`${exported.code} ${JSON.stringify(exported.issues)}`);
        const second = parseCard(exported.bytes);
        if (!second.ok) throw new Error(`${second.code} ${JSON.stringify(second.issues)}`);
        expect(second.version).toBe(first.version);
        expect(cardToWorld(second.card)).toEqual(world);
        // the same card, but for Covel's own entry extension, which says only what differs from the defaults
        expect(withoutCovel(second.card.data)).toEqual(withoutCovel(first.card.data));
      }),
      { numRuns: 60 },
    );
  });
});

describe('a scenario the world normalises', () => {
  it('comes back as the card wrote it (CRLF, outer space), and an edited lore wins', () => {
    const base = v2Card({ entries: 1 });
    const card = { ...base, data: { ...(base.data as Record<string, unknown>), scenario: '\r\n  Salt on the wind.\r\nThe tide.\r\n' } };
    const parsed = parseCard(jsonBytes(card));
    if (!parsed.ok) throw new Error(parsed.code);
    const world = WorldDocument.parse(cardToWorld(parsed.card));
    expect(world.lore).toBe('Salt on the wind.\nThe tide.');
    const back = worldToCard(world, { format: 'card-v2', container: 'json' });
    if (!back.ok) throw new Error(back.code);
    expect((JSON.parse(new TextDecoder().decode(back.bytes)) as { data: { scenario: string } }).data.scenario).toBe('\r\n  Salt on the wind.\r\nThe tide.\r\n');
    const edited = worldToCard({ ...world, lore: 'Calm water.' }, { format: 'card-v2', container: 'json' });
    if (!edited.ok) throw new Error(edited.code);
    expect((JSON.parse(new TextDecoder().decode(edited.bytes)) as { data: { scenario: string } }).data.scenario).toBe('Calm water.');
  });
});

describe('parseCard never throws', () => {
  const valid = cardPng(v2Card({ entries: 3 }));
  const check = (bytes: Uint8Array) => {
    const result = parseCard(bytes, { maxBytes: 1 << 20 });
    if (result.ok) return;
    expect(Object.keys(CARD_ERROR_CATEGORY)).toContain(result.code);
    expect(result.issues.length).toBeGreaterThan(0);
    for (const issue of result.issues) expect(isWellFormedText(issue.path) && isWellFormedText(issue.message) && issue.message !== '').toBe(true);
  };

  test('on a PNG card cut short or with bytes changed', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: valid.length }),
        fc.array(fc.tuple(fc.nat({ max: valid.length - 1 }), fc.integer({ min: 0, max: 255 })), { maxLength: 4 }),
        (cut, flips) => {
          const bytes = new Uint8Array(valid.subarray(0, Math.max(cut, 8)));
          for (const [at, value] of flips) if (at < bytes.length) bytes[at] = value;
          check(bytes);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('on any bytes, any text and any JSON', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 64 }),
          fc.string({ unit: 'binary', maxLength: 64 }).map((s) => jsonBytes(s)),
          fc.jsonValue().map((v) => jsonBytes(JSON.stringify(v) ?? 'null')),
          fc.jsonValue().map((v) => jsonBytes({ spec: 'chara_card_v2', data: v })),
        ),
        check,
      ),
      { numRuns: 300 },
    );
  });
});
