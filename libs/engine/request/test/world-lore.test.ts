import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadPlugin, loadWorld } from '../../../plugins-sdk';
import { RuntimeCatalog } from '../../catalog/runtime-catalog';
import { buildRuntimeRequest } from '../runtime-request';
import { bareRequestInputs, unsentProviders } from './bare-request';
import { worldLorebook } from '../../catalog/world-catalog';

/**
 * Spec §4: "The <world-lore> that the kernel writes itself only rewrites a </world-lore> that
 * appears in the body. World text is long Markdown. Quote markers >, comment markers, and & in it
 * enter the prompt unchanged." The body below holds Markdown, comments, entities, other tags, near
 * misses of the closing tag, emoji (ZWJ sequences, a flag, a skin tone), CJK, right-to-left text
 * with its marks, and a combining accent: only the two exact closing tags change.
 */
const LINES = [
  '# The Salt Archive 📜',
  '',
  '> "Write it down," said the archivist.',
  '>> A quote in a quote, and a list:',
  '- one & two; fish &amp; chips; &lt;already escaped&gt;; 3 < 4 > 2',
  '<!-- an author’s comment, kept as it is -->',
  'A <b>bold</b> claim, a <world-lore> opening tag, a <br/> and an <![CDATA[x]]>.',
  'The ledger ends here: </world-lore> and once more </world-lore>!',
  'Near misses stay: </World-Lore> </world-lore > </world-lores> <\\/world-lore> &lt;/world-lore&gt;',
  '墨水在码头上干了。「盐」与『灰』。 🧑‍🚀 👩🏽‍🔧 👨‍👩‍👧 🇯🇵',
  'عربي: الميناء هادئ الليلة. \u200fעברית: הנמל שקט.\u200e done',
  'Combining: e\u0301 (e + U+0301), not é; a tab:\there; trailing spaces   ',
  '```',
  'code </world-lore> in a fence',
  '```',
];
const BODY = LINES.join('\n');

/** The same body, byte for byte, but its exact closing tags (lines 8 and 14): every other line as it was. */
const REWRITTEN: Record<number, string> = {
  7: 'The ledger ends here: &lt;/world-lore> and once more &lt;/world-lore>!',
  13: 'code &lt;/world-lore> in a fence',
};
const EXPECTED = LINES.map((line, i) => REWRITTEN[i] ?? line).join('\n');

const bytes = (text: string) => Buffer.from(text, 'utf8').toString('hex');

describe('§4 the kernel’s <world-lore> rewrites only its closing tag', () => {
  const dir = mkdtempSync(join(tmpdir(), 'covel-world-lore-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'WORLD.md'), `---\nid: archive\nname: Salt Archive\n---\n${BODY}\n`);
  writeFileSync(
    join(dir, 'PLUGIN.md'),
    '---\nid: teller\nname: Teller\nversion: "1"\nruntime:\n  schedule: { stage: narrative }\n  outputKind: story\n---\nTell the story.',
  );
  const world = loadWorld(join(dir, 'WORLD.md'));
  const block = `<world-lore>\n${EXPECTED}\n</world-lore>`;

  it('one lorebook per loaded world and kind, frozen: a world loaded again (a changed file) has its own', () => {
    for (const story of [true, false]) {
      const lorebook = worldLorebook(world, { story });
      expect(worldLorebook(world, { story })).toBe(lorebook);
      expect(Object.isFrozen(lorebook) && Object.isFrozen(lorebook[0])).toBe(true);
    }
    expect(worldLorebook(world, { story: true })).not.toBe(worldLorebook(world, { story: false }));
    writeFileSync(join(dir, 'WORLD.md'), `---\nid: archive\nname: Salt Archive\n---\nThe archive burned.\n`);
    const changed = loadWorld(join(dir, 'WORLD.md'));
    writeFileSync(join(dir, 'WORLD.md'), `---\nid: archive\nname: Salt Archive\n---\n${BODY}\n`);
    expect(worldLorebook(changed, { story: true })[0].content).toBe('<world-lore>\nThe archive burned.\n</world-lore>');
    expect(worldLorebook(world, { story: true })[0].content).toBe(block);
  });

  it('the lorebook entry: the body byte for byte but the exact closing tags; the block closes once, at its end', () => {
    expect(world.lore).toBe(BODY);
    for (const story of [true, false]) {
      const [entry] = worldLorebook(world, { story });
      expect(entry.id).toBe('world-lore');
      expect(bytes(entry.content)).toBe(bytes(block));
      expect(entry.content.match(/<\/world-lore>/g)).toHaveLength(1);
    }
  });

  it('the request a story runtime sends: the same bytes under the world-rules title', async () => {
    const catalog = new RuntimeCatalog([loadPlugin(dir)]);
    const slot = { protocol: 'openai-chat', model: 'story-model', contextWindow: 128_000, maxOutputTokens: 1024, cacheBoundaries: true } as const;
    const providers = unsentProviders({ story: slot, fast: slot });
    const runtime = catalog.find('teller', 'teller')!;
    const request = await buildRuntimeRequest(
      bareRequestInputs(catalog, runtime, { playerInput: { messageId: 'u', text: 'Read the ledger' }, world }),
      providers,
    );
    const worldInfo = request.context.systemSections.find((s) => s.name === 'worldinfo-before')!.text;
    expect(bytes(worldInfo)).toBe(bytes(`World rules:\n\n${block}`));
  });
});

describe('§4 world content selected for the task: the entries a keyword fires go to story runtimes only', () => {
  const emberback = loadWorld(join(__dirname, '..', '..', '..', '..', 'worlds', 'emberback', 'WORLD.md'));
  const ids = (story: boolean, world = emberback) => worldLorebook(world, { story }).map((e) => e.id);

  it("a story runtime gets every entry; a runtime after the narrative gets the kernel's constant entries and the world's constant ones", () => {
    expect(ids(true)).toEqual(['world-lore', 'world-characters', 'ember-wardens', 'ash-river', 'the-vents']);
    expect(ids(false)).toEqual(['world-lore', 'world-characters']);
    const [first] = emberback.lorebook;
    const withConstant = { ...emberback, lorebook: [...emberback.lorebook, { ...first, id: 'always', keys: [], constant: true }] };
    expect(ids(false, withConstant)).toEqual(['world-lore', 'world-characters', 'always']);
    expect(ids(true, withConstant)).toEqual(['world-lore', 'world-characters', 'ember-wardens', 'ash-river', 'the-vents', 'always']);
  });
});
