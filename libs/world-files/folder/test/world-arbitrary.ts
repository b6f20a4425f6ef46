/** Generated valid world documents for the round-trip properties: hostile text in every string, JSON of every shape. */
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { NARRATOR_ONLY_CLOSE, NARRATOR_ONLY_OPEN, WorldDocument } from '../../../plugins-sdk';
import { isWellFormedText } from '../../../text';

/** Pieces that YAML, the front matter fence, the templates or the lore markers could misread. */
const PIECES = [
  '---',
  '--- ',
  '...',
  '\n',
  '\n\n',
  ' ',
  '  ',
  '\t',
  '\r\n',
  '\r',
  'yes',
  'No',
  'on',
  '~',
  'null',
  'true',
  '1e3',
  '-0',
  '0x1F',
  '.inf',
  '.nan',
  '1.0',
  '007',
  '2001-12-14',
  '</world-lore>',
  '<world-lore>',
  '{{ world.name }}',
  '{{',
  '}}',
  '#',
  ' #',
  ': ',
  ':',
  '- ',
  '? ',
  '"',
  "'",
  '|',
  '>',
  '|-',
  '&a',
  '*a',
  '!!str',
  '%YAML',
  '@',
  '`',
  '\\',
  '\\n',
  '<<',
  '😀',
  '👨‍👩‍👧',
  '🇫🇷',
  'é',
  'e\u0301',
  'مرحبا',
  'שלום',
  '\u200f',
  '龙背',
  '日本語',
  '\u2028',
  '\u2029',
  '\u0085',
  '\ufeff',
  '\u00a0',
  '\u3000',
  '\u001b',
  'a',
  'Z',
  'x y',
];
const MARKERS = [NARRATOR_ONLY_OPEN, NARRATOR_ONLY_CLOSE, ` ${NARRATOR_ONLY_OPEN}`];

const joined = (pieces: readonly string[], maxLength: number) => fc.array(fc.constantFrom(...pieces), { maxLength }).map((p) => p.join(''));
const clean = (s: string) => isWellFormedText(s) && !s.includes('\u0000');

/** Text as people, models and attackers write it. */
export const text = fc.oneof(
  joined([...PIECES, ...MARKERS], 6),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 8 }).filter(clean),
);
const text1 = text.filter((s) => s.length > 0);
const key = fc.oneof(
  text,
  fc.constantFrom('__proto__', 'constructor', 'toString', '<<', '', '-', '?', '1', '01', 'null', 'yes', 'a: b', '---', 'x'.repeat(1100)),
);

const number = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(-0, 1e21, 2 ** 53 + 2, 2 ** 64, Number.MAX_SAFE_INTEGER, Number.MAX_VALUE, Number.MIN_VALUE, 1.5e-7, 0.1, 123456789012345680000),
);
/** Any value a front matter or a JSON body can hold (YAML adds NaN and the infinities, which `fc.double` gives). */
export const json: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    text,
    number,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(key, tie('value'), { maxKeys: 3, noNullPrototype: true }),
  ),
})).value;
const jsonObject = fc.dictionary(key, json, { maxKeys: 3, noNullPrototype: true });

const loreEntry = fc.record(
  {
    id: text1,
    keys: fc.array(text1, { maxLength: 3 }),
    constant: fc.boolean(),
    content: text1,
    position: fc.oneof(fc.constantFrom('before-plugin', 'after-plugin'), fc.record({ depth: fc.nat(40) })),
    order: fc.integer({ min: -1000, max: 1000 }),
    extra: fc.record({ scanDepth: fc.integer({ min: 0, max: 20 }) }),
  },
  { requiredKeys: ['id', 'content'] },
);

const blueprint = fc.record(
  {
    tone: text1,
    manner: text1,
    personality: text1,
    goals: fc.array(text1, { maxLength: 2 }),
    fears: fc.array(text1, { maxLength: 2 }),
    secrets: fc.array(text1, { maxLength: 2 }),
    relationships: fc.dictionary(key, text1, { maxKeys: 2, noNullPrototype: true }),
    rules: fc.array(text1, { maxLength: 2 }),
    sampleLines: fc.array(text1, { maxLength: 2 }),
  },
  { requiredKeys: [] },
);

const character = fc.record(
  {
    id: text1,
    name: text1,
    aliases: fc.array(text1, { maxLength: 2 }),
    type: fc.oneof(fc.constantFrom('npc', 'player'), text1),
    description: text,
    fields: fc.dictionary(key, json, { maxKeys: 3, noNullPrototype: true }),
    blueprint,
  },
  { requiredKeys: ['id', 'name'] },
);

/** Characters with unique ids, and seats naming some of them (at most one primary). */
const people = fc.uniqueArray(character, { selector: (c) => c.id, maxLength: 3 }).chain((characters) =>
  fc
    .uniqueArray(
      fc.record(
        {
          id: text1,
          label: text,
          // a key holding undefined cannot come from JSON or YAML: without characters, no characterId key at all
          ...(characters.length > 0 ? { characterId: fc.constantFrom(...characters.map((c) => c.id)) } : {}),
          primary: fc.boolean(),
        },
        { requiredKeys: ['id'] },
      ),
      { selector: (s) => s.id, maxLength: 3 },
    )
    .map((seats) => ({ characters, seats: seats.map((s, i) => (i > 0 && s.primary ? { ...s, primary: false } : s)) })),
);

const range = fc.oneof(
  fc.constant({}),
  fc.tuple(fc.integer({ min: -10, max: 10 }), fc.nat(10)).map(([minimum, span]) => ({ minimum, maximum: minimum + span })),
);
const characterSchema = fc.record(
  {
    type: fc.constant('object' as const),
    description: text,
    properties: fc.dictionary(
      key,
      fc
        .tuple(fc.record({ type: fc.oneof(text, fc.array(text, { maxLength: 2 })), description: text }, { requiredKeys: [] }), range)
        .map(([p, r]) => ({ ...p, ...r })),
      { maxKeys: 3, noNullPrototype: true },
    ),
    required: fc.array(text, { maxLength: 2 }),
  },
  { requiredKeys: [] },
);

const dimension = fc.record(
  { name: text1, description: text, schema: jsonObject, value: json, version: fc.nat(5), updateRule: text1 },
  { requiredKeys: ['name', 'value'] },
);

/** A lore body: paragraphs of hostile text, some between narrator-only markers. */
const lore = fc
  .array(fc.tuple(joined(PIECES, 8), fc.boolean()), { maxLength: 4 })
  .map((parts) => parts.map(([t, secret]) => (secret ? `${NARRATOR_ONLY_OPEN}\n${t}\n${NARRATOR_ONLY_CLOSE}` : t)).join('\n'));

const pluginId = fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/);

/** The input of a world document, most of them valid. */
export const worldInput = fc
  .tuple(
    fc.record(
      {
        name: text1,
        description: text,
        tags: fc.array(text1, { maxLength: 3 }),
        schema: jsonObject,
        entries: fc.array(jsonObject, { maxLength: 2 }),
        dimensions: fc.dictionary(fc.stringMatching(/^[A-Za-z][A-Za-z0-9_-]{0,8}$/), dimension, { maxKeys: 2, noNullPrototype: true }),
        characterSchema,
        lorebook: fc.array(loreEntry, { maxLength: 3 }),
        plugins: fc.array(pluginId, { maxLength: 3 }),
        pluginConfig: fc.dictionary(key, jsonObject, { maxKeys: 2, noNullPrototype: true }),
        openings: fc.array(text1, { maxLength: 3 }),
        extensions: jsonObject,
        lore,
      },
      { requiredKeys: ['name'] },
    ),
    fc.option(people, { nil: undefined }),
  )
  .map(([world, who]) => ({ ...world, ...who }));

/** Valid world documents, as the schema gives them (defaults filled in, `lore` normalised). */
export const worldDocument: fc.Arbitrary<WorldDocument> = worldInput
  .map((input) => WorldDocument.safeParse(input))
  .filter((parsed) => parsed.success)
  .map((parsed) => parsed.data!);

/**
 * `actual` is `expected`: the same JSON (same keys in the same order: the diff shows where), and
 * deeply equal with `-0`, NaN and prototypes told apart (`util.isDeepStrictEqual`; Jest's
 * `toStrictEqual` takes an own key named `constructor` for the object's class).
 */
export function expectSameDocument(actual: unknown, expected: unknown): void {
  expect(JSON.stringify(actual, null, 1)).toBe(JSON.stringify(expected, null, 1));
  expect(isDeepStrictEqual(actual, expected)).toBe(true);
}
