import encodeChunks from 'png-chunks-encode';
import extractChunks from 'png-chunks-extract';
import { decode as decodeText, encode as encodeText } from 'png-chunk-text';
import fc from 'fast-check';
import type { PlayClient } from '../../apps/play/play-client';
import { escapeXml } from '../../libs/data-boundary';
import { toLoadedWorld, WorldDocument } from '../../libs/plugins-sdk';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';
import { onePixelPng } from '../support/world-files';

/**
 * Issue 29, acceptance: a V2 PNG card and a V3 JSON card (non-Latin names, a lorebook of 200
 * entries) import through `POST /v1/worlds/import`, play three real turns (emulator); turn 0 is the
 * card's `first_mes`; the narrator's request holds the character and an entry fired by its key;
 * every turn audits identical; export → import gives the same world.
 */

/** A 1×1 opaque RGB PNG, built with the PNG chunk libraries (not with the code under test). */
const plainPng = (): Uint8Array => onePixelPng({ pixel: [0, 200, 120, 40] });

/** A PNG carrying `card` as base64 JSON in a `chara` tEXt chunk (before IEND). */
function cardPng(card: unknown, keyword = 'chara'): Uint8Array {
  const [ihdr, idat, iend] = extractChunks(plainPng());
  return encodeChunks([ihdr, idat, encodeText(keyword, Buffer.from(JSON.stringify(card), 'utf8').toString('base64')), iend]);
}

type Json = Record<string, unknown>;

/** 200 entries: `ward000` … `ward199` as keys (one CJK key too), mixed positions, orders and card-only fields. */
function book(prefix: 'v2' | 'v3'): Json {
  return {
    name: `${prefix} book`,
    scan_depth: 3,
    token_budget: 2048,
    recursive_scanning: false,
    extensions: { 'st/world': prefix },
    entries: Array.from({ length: 200 }, (_, i) => ({
      keys: i === 137 ? ['潮汐石', `${prefix}-ward137`] : [`${prefix}-ward${String(i).padStart(3, '0')}`],
      secondary_keys: i % 7 === 0 ? ['moon'] : [],
      selective: i % 7 === 0,
      content:
        i === 137 ? `The tide stone 潮汐石 remembers every drowned lamp (${prefix}).` : `Ward ${i} of ${prefix}: a sigil cut into the reef, number ${i}.`,
      extensions: { 'st/depth': i % 4 },
      enabled: true,
      insertion_order: 1000 - i,
      case_sensitive: i % 2 === 0 ? false : null,
      constant: false,
      comment: `entry ${i}`,
      id: i,
      priority: i % 10,
      position: i % 3 === 0 ? 'before_char' : 'after_char',
      ...(prefix === 'v3' ? { use_regex: false } : {}), // a V3 entry has it (a V3 export writes it)
    })),
  };
}

const v2Name = '灯守 美月 👩‍👩‍👧‍👦';
const v2 = {
  spec: 'chara_card_v2',
  spec_version: '2.0',
  data: {
    name: v2Name,
    description: 'The lamp-keeper of the reef, 灯台守, who writes every passing ship 🚢 into a wet ledger.',
    personality: 'Patient, dry, counts things aloud when nervous.',
    scenario: 'A lighthouse on a reef off a coast that is not on any chart. 潮 comes twice a night.',
    first_mes: '*{{char}} looks up from the ledger.* 「ようこそ」, {{user}}. The lamp has been waiting for you.',
    mes_example: '<START>\n{{user}}: Who are you?\n{{char}}: The one who counts the ships. 一、二、三。',
    creator_notes: 'Made for the acceptance test of issue 29.',
    system_prompt: 'You are {{char}}.',
    post_history_instructions: 'Stay in character.',
    alternate_greetings: ['*The lamp flickers.* Another visitor? 👀'],
    character_book: book('v2'),
    tags: ['lighthouse', '灯台'],
    creator: 'covel-tests',
    character_version: '1.0',
    extensions: { talkativeness: '0.5', fav: false, depth_prompt: { prompt: 'x', depth: 4 } },
  },
};

const v3Name = 'ليلى בַּת־הַיָּם';
const v3 = {
  spec: 'chara_card_v3',
  spec_version: '3.0',
  data: {
    name: v3Name,
    nickname: 'لولو',
    description: 'A cartographer of the salt desert, مرسومة بالحبر, who maps wells that move.',
    personality: 'Curious, blunt, keeps every promise to the letter.',
    scenario: 'The caravan camps at the edge of the desert. ‏The wells drift by night.‏',
    first_mes: 'مرحبا — {{user}}. *{{char}} unrolls a map that is still wet.*',
    mes_example: '{{char}}: The well was here yesterday.',
    creator_notes: 'RTL name, V3 JSON.',
    system_prompt: '',
    post_history_instructions: '',
    alternate_greetings: [],
    group_only_greetings: ['(group) The caravan halts.'],
    character_book: book('v3'),
    tags: ['desert'],
    creator: 'covel-tests',
    character_version: '3.1',
    extensions: { 'risu/utilityBot': false },
    assets: [{ type: 'icon', uri: 'ccdefault:', name: 'main', ext: 'png' }],
    source: ['https://example.invalid/card'],
    creation_date: 1_700_000_000,
    modification_date: 1_700_000_100,
  },
};

/** Every string of a JSON value (the request's messages), one per line: what the model reads. */
function texts(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(texts).join('\n');
  if (value !== null && typeof value === 'object') return Object.values(value).map(texts).join('\n');
  return '';
}

describe('issue 29 acceptance: character cards import, play and export', () => {
  let covel: EmbeddedEngine;
  let client: PlayClient;

  beforeAll(async () => {
    covel = await startEmbedded();
    client = await covel.newTenant('cards-acceptance');
  }, 60_000);
  afterAll(async () => {
    await covel?.stop();
  });

  type World = { id: string; revision: number; document: Json; provenance: unknown };
  const importFile = async (bytes: Uint8Array, contentType: string) => {
    const res = await fetch(`${covel.baseUrl}/v1/worlds/import`, {
      method: 'POST',
      headers: { ...client.authHeaders(), 'content-type': contentType },
      body: bytes,
    });
    return { status: res.status, json: (await res.json()) as World & { code?: string; issues?: unknown } };
  };
  const exportFile = async (id: string, query: string) => {
    const res = await fetch(`${covel.baseUrl}/v1/worlds/${id}/export?${query}`, { headers: client.authHeaders() });
    return { status: res.status, contentType: res.headers.get('content-type'), bytes: new Uint8Array(await res.arrayBuffer()) };
  };

  /** Imports, opens a session, plays three turns and checks what the narrator read; answers the world. */
  async function importAndPlay(options: {
    bytes: Uint8Array;
    contentType: string;
    card: typeof v2 | typeof v3;
    prefix: string;
    format: string;
  }): Promise<World> {
    const { card, prefix } = options;
    const imported = await importFile(options.bytes, options.contentType);
    expect([imported.status, imported.json.provenance]).toEqual([201, { kind: 'imported', format: options.format }]);
    const world = imported.json;
    const character = (world.document.characters as Json[])[0];
    expect(character).toMatchObject({ name: card.data.name, description: card.data.description, type: 'npc' });
    expect(world.document.lorebook as unknown[]).toHaveLength(200);

    // the card's character reaches the narrator through the kernel's <world-characters>; its personality through character-blueprint
    const session = await client.createSession({ worldId: world.id, plugins: ['narrator', 'character-blueprint'] });
    const messages = await client.messages(session.id);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({ role: 'assistant', outputKind: 'story', text: card.data.first_mes });

    const inputs = [`I read the ledger entry marked ${prefix}-ward042 aloud.`, 'I pick up the 潮汐石 from the sand.', 'I wait for the dawn.'];
    const turnIds: string[] = [];
    for (const text of inputs) {
      const { executionId, turnId } = await client.submit(session.id, text);
      await client.waitFor(executionId, 60_000);
      turnIds.push(turnId);
    }
    const calls = await client.request<{ turnId: string; pluginId: string; requestText: string }[]>('GET', `/v1/sessions/${session.id}/llm-calls`);
    const narrator = (turnId: string) => {
      const call = calls.filter((c) => c.turnId === turnId && c.pluginId === 'narrator').at(-1);
      expect(call).toBeDefined();
      return texts(JSON.parse(call!.requestText));
    };
    const [first, second, third] = turnIds.map(narrator);
    for (const prompt of [first, second, third]) {
      expect(prompt).toContain(card.data.name);
      expect(prompt).toContain(card.data.description);
      expect(prompt).toContain(card.data.personality);
      expect(prompt).toContain(card.data.first_mes); // turn 0 is in every turn's history
    }
    const ward42 = `Ward 42 of ${prefix}: a sigil cut into the reef, number 42.`;
    const tideStone = `The tide stone 潮汐石 remembers every drowned lamp (${prefix}).`;
    expect(first).toContain(ward42);
    expect(first).not.toContain(`Ward 43 of ${prefix}`);
    expect(first).not.toContain(tideStone);
    expect(second).toContain(tideStone); // a CJK key, fired by containment
    // the book's scan_depth 3 (the current message and the two before it): the tide stone still fires a turn later, the ward two turns later not
    expect(third).toContain(tideStone);
    expect(third).not.toContain(ward42);
    expect(third).not.toContain(`Ward 1 of ${prefix}:`);

    for (const turnId of turnIds) {
      const audit = await client.request<{ identical: boolean }>('GET', `/v1/sessions/${session.id}/turns/${turnId}/audit`);
      expect(audit.identical).toBe(true);
    }
    return world;
  }

  /** What a card has: the data fields both specs name, compared on the cards themselves. */
  const cardOf = (bytes: Uint8Array, png: boolean): Json => {
    if (!png) return JSON.parse(new TextDecoder().decode(bytes)) as Json;
    const chunks = extractChunks(bytes)
      .filter((c) => c.name === 'tEXt')
      .map((c) => decodeText(c.data));
    const chunk = chunks.find((c) => c.keyword === 'ccv3') ?? chunks.find((c) => c.keyword === 'chara');
    return JSON.parse(Buffer.from(chunk!.text, 'base64').toString('utf8')) as Json;
  };

  it('a V2 PNG card (CJK + emoji ZWJ name, 200 entries) imports, plays three turns and round-trips', async () => {
    const png = cardPng(v2);
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const world = await importAndPlay({ bytes: png, contentType: 'image/png', card: v2, prefix: 'v2', format: 'card-v2' });

    for (const [query, png] of [
      ['format=card-v2&container=png', true],
      ['format=card-v2', false],
    ] as const) {
      const exported = await exportFile(world.id, query);
      expect([exported.status, exported.contentType]).toEqual([200, png ? 'image/png' : 'application/json']);
      // the card exported is the card imported (its V1 mirror aside, which it never had)
      expect(cardOf(exported.bytes, png)).toEqual(v2);
      const again = await importFile(exported.bytes, png ? 'image/png' : 'application/json');
      expect(again.status).toBe(201);
      expect(again.json.id).not.toBe(world.id);
      expect(again.json.document).toEqual(world.document);
    }
  }, 180_000);

  it('a V3 JSON card (Arabic + Hebrew name, 200 entries) imports, plays three turns and round-trips', async () => {
    const world = await importAndPlay({
      bytes: new TextEncoder().encode(JSON.stringify(v3)),
      contentType: 'application/json',
      card: v3,
      prefix: 'v3',
      format: 'card-v3',
    });
    expect((world.document.characters as Json[])[0]).toMatchObject({ aliases: ['لولو'] });

    for (const [query, png] of [
      ['format=card-v3', false],
      ['format=card-v3&container=png', true],
    ] as const) {
      const exported = await exportFile(world.id, query);
      expect(exported.status).toBe(200);
      expect(cardOf(exported.bytes, png)).toEqual(v3);
      const again = await importFile(exported.bytes, 'application/octet-stream');
      expect([again.status, again.json.provenance]).toEqual([201, { kind: 'imported', format: 'card-v3' }]);
      expect(again.json.document).toEqual(world.document);
    }
    // a V2 export of a V3 card: the fields V2 has round-trip; the V3-only ones are gone
    const asV2 = cardOf((await exportFile(world.id, 'format=card-v2')).bytes, false);
    const { assets: _a, nickname: _n, source: _s, group_only_greetings: _g, creation_date: _c, modification_date: _m, ...v2Fields } = v3.data;
    expect(asV2).toEqual({ spec: 'chara_card_v2', spec_version: '2.0', data: v2Fields });
  }, 180_000);

  /** Text a card may carry that looks like the prompt's own structure, template syntax or bidi/joiner tricks. */
  const hostileParts = [
    '</world-lore>',
    '<world-lore>',
    '</world-characters>',
    '{{ world.lore }}',
    '{{world.lore}}',
    '{{char}}',
    '{{user}}',
    '{% if x %}',
    '<!-- narrator-only -->',
    '\n<!-- narrator-only -->\n',
    '\n<!-- /narrator-only -->\n',
    '\u200f', // RLM
    '\u202e', // RLO
    '\u2066', // LRI
    '\u200d', // ZWJ
    '👩‍👩‍👧‍👦',
    'مرحبا',
    'שָׁלוֹם',
    '灯台',
    '&lt;',
    '\r\n',
    '\ud800', // a lone surrogate: refused with its path
    '\u0000', // NUL: refused with its path
  ];
  const hostileText = fc
    .array(fc.oneof(fc.constantFrom(...hostileParts), fc.string({ unit: 'grapheme', maxLength: 8 })), { minLength: 1, maxLength: 8 })
    .map((parts) => parts.join(''));
  const count = (text: string, part: string) => text.split(part).length - 1;

  it('hostile text in a card is refused with its path, or reaches the narrator as data (spec §4: only </world-lore> in the lore is rewritten)', async () => {
    let imported = 0;
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(hostileText, hostileText, hostileText, hostileText, async (name, description, scenario, entry) => {
        const card = {
          spec: 'chara_card_v2',
          spec_version: '2.0',
          data: {
            name,
            description,
            scenario,
            first_mes: 'The beacon is cold.',
            character_book: { entries: [{ keys: ['beacon'], content: `Beacon: ${entry}`, extensions: {}, enabled: true, insertion_order: 1 }] },
          },
        };
        const res = await importFile(cardPng(card), 'image/png');
        if (res.status !== 201) {
          refused++;
          expect(res.status).toBe(400);
          expect(res.json.code).toMatch(/^(BAD_STRING|INVALID_CARD)$/);
          expect((res.json.issues as { path: string }[]).map((i) => i.path)).toEqual(
            expect.arrayContaining([expect.stringMatching(/^data\.(name|description|scenario|character_book\.entries\.0\.content)$/)]),
          );
          return;
        }
        imported++;
        const world = res.json;
        const session = await client.createSession({ worldId: world.id, plugins: ['narrator'] });
        const { executionId, turnId } = await client.submit(session.id, 'I light the beacon.');
        await client.waitFor(executionId, 60_000);
        const calls = await client.request<{ turnId: string; pluginId: string; requestText: string }[]>('GET', `/v1/sessions/${session.id}/llm-calls`);
        const prompt = texts(JSON.parse(calls.filter((c) => c.turnId === turnId && c.pluginId === 'narrator').at(-1)!.requestText));

        // the lore block: the lore as written (marker lines out), `</world-lore>` rewritten as `&lt;/world-lore>` and nothing else
        const lore = toLoadedWorld('w', WorldDocument.parse(world.document)).lore;
        expect(prompt).toContain(`<world-lore>\n${lore.replace(/<\/world-lore>/g, '&lt;/world-lore>')}\n</world-lore>`);
        // the character: XML-escaped data in <world-characters>
        expect(prompt).toContain(
          escapeXml(`- ${world.document.name as string} [npc] | ${(world.document.characters as { description: string }[])[0].description}`),
        );
        // the entry, fired by its key: its text as written (spaces around it trimmed, as every entry's), `{{ … }}` never rendered
        const content = `Beacon: ${entry}`.trim();
        expect(prompt).toContain(content);
        // so the only </world-lore> the model reads as a tag is the block's own (an entry's is the entry's text)
        expect(count(prompt, '</world-lore>')).toBe(1 + count(content, '</world-lore>'));
      }),
      { numRuns: 25 },
    );
    expect(imported).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
  }, 180_000);
});
