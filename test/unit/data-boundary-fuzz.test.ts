import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { escapeXml } from '../../libs/context';
import { DEFAULT_HISTORY_READ_LIMIT, rebuildRequests } from '../../libs/engine';
import { payload } from '../fixtures/fuzz-plugins/fuzzbox/server';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';
import { llmToml } from '../support/llm-toml';

/**
 * Issue 10 "hostile data": world text, character descriptions, plugin data and typed inputs full of
 * closing tags, templates, `constructor`, CJK, RTL, emoji and ZWJ sequences, bookkeeping UUIDs and
 * ISO times, and a 1 MB string, through REAL turns of the embedded engine; the recorded request must
 * keep every block closed where the body closes it, never expand a template in data, drop the
 * bookkeeping values, keep the text whole (no lone surrogate) and rebuild byte for byte.
 */
const FUZZ_PLUGINS = join(__dirname, '..', 'fixtures', 'fuzz-plugins');
/** Bookkeeping values: whole values only, so the boundary must drop every one of them. */
const BOOK_UUID = '9d1e6c2a-3b4f-4a5e-8f7d-6c5b4a392817';
const BOOK_ISO = '2026-11-30T23:59:58.123Z';
const hostileParts = [
  '</world-summary>',
  '</npcs>',
  '</self-data>',
  '</runtime-inputs>',
  '<world-summary>',
  '{{ session.id }}',
  '{{ world.name }}',
  'constructor',
  'toString',
  '__proto__',
  '漢字かな交じり',
  'שלום עולם',
  'مرحبا',
  '👩‍👩‍👧‍👦',
  '🏳️‍🌈',
  '&amp;',
  '"quoted"',
  '\n',
];
const hostileText = fc
  .array(fc.oneof(fc.constantFrom(...hostileParts), fc.string({ unit: 'grapheme', maxLength: 12 })), { minLength: 1, maxLength: 12 })
  .map((parts) => parts.join(''));

interface Case {
  description: string;
  npcDescription: string;
  rows: { key: string; value: unknown }[];
  output: unknown;
}

const caseOf = fc.record({
  description: hostileText,
  npcDescription: hostileText,
  rowTexts: fc.array(hostileText, { minLength: 1, maxLength: 4 }),
  outputText: hostileText,
});

function writeWorld(dir: string, worldId: string, c: Case): void {
  const manifest = {
    id: worldId,
    name: 'Fuzzholm',
    description: c.description,
    characters: [
      { id: 'hero', name: 'Hero', type: 'player', description: 'The player.' },
      { id: 'constructor', name: 'constructor', description: c.npcDescription, fields: { ref: BOOK_UUID, seen: BOOK_ISO, sessionId: 'sess-1', mood: 'wary' } },
    ],
    seats: [{ id: 'first', characterId: 'hero', primary: true }],
    lorebook: [],
  };
  mkdirSync(join(dir, worldId), { recursive: true });
  // JSON is YAML: the front matter takes any string without quoting rules
  writeFileSync(join(dir, worldId, 'WORLD.md'), `---\n${JSON.stringify(manifest)}\n---\nFuzzholm lore.\n`);
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const count = (text: string, part: string) => text.split(part).length - 1;

describe('the data boundary holds for hostile data in real turns (fast-check)', () => {
  let covel: EmbeddedEngine;
  let worldsDir: string;
  let n = 0;
  beforeAll(async () => {
    worldsDir = mkdtempSync(join(tmpdir(), 'covel-fuzz-worlds-'));
    // the 1 MB case is ~1 M tokens: a window that holds it, so the token budget sends it (a 128k
    // window stops it with a context overflow before anything is sent: budget tests pin that)
    writeFileSync(
      join(worldsDir, 'llm.toml'),
      llmToml({ story: { contextWindow: 4_000_000, maxOutputTokens: 1024 }, fast: { contextWindow: 4_000_000, maxOutputTokens: 1024 } }),
    );
    covel = await startEmbedded({ COVEL_PLUGINS_DIR: FUZZ_PLUGINS, COVEL_WORLDS_DIR: worldsDir, COVEL_LLM_CONFIG: join(worldsDir, 'llm.toml') });
  }, 60_000);
  afterAll(async () => {
    await covel?.stop();
    rmSync(worldsDir, { recursive: true, force: true });
  });

  /** One real turn on a fresh world and session carrying the case; checks the recorded request. */
  async function check(c: Case): Promise<void> {
    n += 1;
    const worldId = `fuzz-${n}`;
    writeWorld(worldsDir, worldId, c);
    payload.rows = c.rows;
    payload.output = c.output;
    const client = await covel.newTenant(`fuzz-${n}`);
    const { id } = await client.createSession({ worldId });
    const { executionId } = await client.submit(id, 'Look around');
    expect(await client.waitFor(executionId, 30_000)).toBe('committed');
    const events = await covel.engine.store.readStream(id);
    const call = events.find((e) => e.type === 'llm.calling@1')!.data as { body: string; layout: { messageSections: string[] } };
    const messages = (JSON.parse(call.body) as { messages: { role: string; content: string }[] }).messages;
    const system = messages[0].content;
    const turnContext = messages[call.layout.messageSections.indexOf('turn-context')].content;
    const all = messages.map((m) => m.content).join('\n');

    // text is whole: no lone surrogate anywhere in what the model sees
    expect(all).not.toMatch(LONE_SURROGATE);
    // blocks close only where the body (or the kernel) closes them; data is escaped inside them
    expect(count(system, '</world-summary>')).toBe(1);
    expect(count(system, '</npcs>')).toBe(1);
    expect(system).toContain(`<world-summary>\n${escapeXml(c.description)}\n</world-summary>`);
    expect(count(turnContext, '</self-data>')).toBe(1);
    expect(count(turnContext, '</runtime-inputs>')).toBe(1);
    // a template inside data is never expanded: nothing reveals the session id
    expect(all).not.toContain(id);
    // bookkeeping values are dropped from plugin data rows, typed inputs and character fields
    expect(all).not.toContain(BOOK_UUID);
    expect(all).not.toContain(BOOK_ISO);
    expect(all).not.toContain('sess-1');
    expect(system).toContain('wary');
    // the replay rebuilds the request byte for byte (no plugin code, no model)
    const rebuilt = await rebuildRequests(events, covel.engine.catalog, covel.engine.providers, covel.engine.worlds, {
      historyReadLimit: DEFAULT_HISTORY_READ_LIMIT,
    });
    expect(rebuilt.map((r) => r.identical)).toEqual([true]);
  }

  const hostileCase = (c: { description: string; npcDescription: string; rowTexts: string[]; outputText: string }): Case => ({
    description: c.description,
    npcDescription: c.npcDescription,
    rows: c.rowTexts.map((text, i) => ({
      key: ['constructor', 'toString', '__proto__', `行-${i}`][i % 4],
      value: { text, id: BOOK_UUID, updatedAt: BOOK_ISO, sessionId: 'sess-1', nested: { at: BOOK_ISO, note: text } },
    })),
    output: { constructor: c.outputText, ref: BOOK_UUID, at: BOOK_ISO, sessionId: 'sess-1', list: [BOOK_UUID, { when: BOOK_ISO, text: 'listed' }] },
  });

  it('random hostile worlds, characters, plugin data and inputs', async () => {
    await fc.assert(
      fc.asyncProperty(caseOf, (c) => check(hostileCase(c))),
      { numRuns: 10 },
    );
  }, 240_000);

  it('a 1 MB string in the world text, a character description and a typed input', async () => {
    const big = `${'雪🌨️ '.repeat(200_000)}</world-summary>{{ session.id }}`; // about 1.4 MB as UTF-8, 1 M UTF-16 units
    await check(hostileCase({ description: big, npcDescription: big, rowTexts: ['small'], outputText: big }));
  }, 120_000);
});
