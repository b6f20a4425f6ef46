import { join } from 'node:path';
import { createPluginHarness, type HarnessTurn, type PluginHarness, CACHEABLE_PREFIX_MIN, prefixReuse, sharedPrefixTokens } from '../../../libs/plugin-testing';

jest.setTimeout(120_000);

const PLUGINS = [join(__dirname, '..', '..', 'narrator'), join(__dirname, '..')];
const EMBERBACK = join(__dirname, '..', '..', '..', 'worlds', 'emberback');

const toolResults = (turn: HarnessTurn) =>
  turn.eventsOf('tool.completed@1').map((e) => ({ name: e.name, ok: e.ok, done: e.done, content: JSON.parse(e.content) as unknown }));
const outcomes = (turn: HarnessTurn) => toolResults(turn).map((r) => [r.name, r.ok, r.done]);
const keeper = (turn: HarnessTurn) => turn.request('memory', 'keeper');
const blocks = async (h: PluginHarness) => Object.fromEntries((await h.pluginData('memory', 'blocks')).map((r) => [r.key, r.value]));

const PROMISE = 'Promised Tomas to carry his letter down the river.';

describe('memory (contract, through the engine)', () => {
  describe('Emberback, en', () => {
    let h: PluginHarness;
    const turns: HarnessTurn[] = [];
    beforeAll(async () => {
      h = await createPluginHarness({
        plugins: PLUGINS,
        world: EMBERBACK,
        locale: 'en',
        replies: {
          'narrator/narrator': [
            'Mira pushes the ferry off. "They say the captain forges his ledger," she mutters.',
            'Tomas meets you on the landing and asks you to carry a letter down the river.',
            'At the bottom of the river you hand the letter to the bargeman.',
            'The village is small behind you.',
            'Snow falls on the landing.',
          ],
          'memory/keeper': [
            // turn 1: an edit, which ends the runtime (one request)
            { tool: 'memory-append', args: { block: 'village-rumours', line: 'The captain forges his ledger.' } },
            // turn 2: an edit over the limit is refused and changes nothing; the corrected edit is kept and ends the runtime
            { tool: 'memory-append', args: { block: 'village-rumours', line: 'x'.repeat(800) } },
            { tool: 'memory-append', args: { block: 'courier-notes', line: PROMISE } },
            // turn 3: replace
            { tool: 'memory-replace', args: { block: 'courier-notes', old: PROMISE, new: "Delivered Tomas's letter to the bargeman downriver." } },
            // turn 4: clear
            { tool: 'memory-clear', args: { block: 'village-rumours' } },
            // turn 5: nothing to keep is one runtime-done call
            { tool: 'runtime-done', args: {} },
          ],
        },
      });
      for (const text of ['I ask Mira to take me across.', 'I step onto the landing.', 'I go down the river.', 'I look back at the village.', 'I wait.'])
        turns.push(await h.turn(text));
    });
    afterAll(() => h.close());

    it('the story reads the blocks in its turn context and what they are in its system prompt; the keeper gets definitions (session) and usage (turn), maxTurns 0, tool choice required', async () => {
      const turn = turns[0];
      const story = turn.request('narrator');
      expect(story.segmentsOf('memory').map((s) => [s.id, s.placement, s.volatility])).toEqual([
        ['memory-blocks-intro', 'system-prompt', 'session'],
        ['memory-blocks', 'turn-context', 'turn'],
      ]);
      // spec §2 "Layout for bookkeeping runtimes": the constant line is in the system prompt, the turn context has only the blocks
      // the story's view leaves out the empty block (village-rumours): it tells the story nothing, and the turn context is sent uncached every turn
      expect(story.turnContext).toContain(
        '<memory-blocks>\n<block id="courier-notes" label="Courier\'s notes">\nArrived with the last caravan before the snows.\n</block>\n</memory-blocks>',
      );
      expect(story.turnContext).not.toContain('village-rumours');
      expect(story.turnContext).not.toContain('Notes kept across the story');
      expect(story.systemPrompt).toContain("<memory-blocks>, in the system message before the player's input, holds notes kept across the story.");
      expect(story.systemPrompt).not.toContain('memory-block-definitions');

      const request = keeper(turn);
      expect(request.segmentsOf('memory').map((s) => [s.id, s.placement, s.volatility])).toEqual([
        ['memory-block-definitions', 'system-prompt', 'session'],
        ['memory-blocks-usage', 'turn-context', 'turn'],
      ]);
      expect(request.systemPrompt).toContain("- courier-notes | Courier's notes | 1200 | What Ash has learned and promised, in short lines.");
      expect(request.turnContext).toContain('<block id="courier-notes" label="Courier\'s notes" used="47" limit="1200">');
      // the keeper, which writes it, sees the empty block
      expect(request.turnContext).toContain('<block id="village-rumours" label="Village rumours" used="0" limit="800">\n(empty)\n</block>');
      expect(request.body.tool_choice).toBe('required');
      expect(((request.body.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name)).toEqual([
        'runtime-done',
        'memory-append',
        'memory-replace',
        'memory-clear',
      ]);
      // this turn's story text reaches the keeper as a message; no earlier turn does
      expect(request.messages.some((m) => m.role === 'assistant' && m.content.includes('forges his ledger'))).toBe(true);
      expect(keeper(turns[1]).messages.filter((m) => m.section === 'history')).toEqual([]);
    });

    it('one request per turn: a successful edit ends the runtime (append, replace, clear); nothing to keep is one runtime-done', () => {
      expect(turns.map((t) => t.status)).toEqual(['committed', 'committed', 'committed', 'committed', 'committed']);
      expect(turns.map((t) => t.requestsOf('memory', 'keeper').length)).toEqual([1, 2, 1, 1, 1]);
      expect(outcomes(turns[0])).toEqual([['memory-append', true, true]]);
      expect(outcomes(turns[2])).toEqual([['memory-replace', true, true]]);
      expect(outcomes(turns[3])).toEqual([['memory-clear', true, true]]);
      expect(outcomes(turns[4])).toEqual([['runtime-done', true, true]]);
      expect(toolResults(turns[0])[0].content).toEqual({
        ok: true,
        data: { block: 'village-rumours', used: 30, limit: 800, summary: 'Village rumours: + The captain forges his ledger.' },
      });
    });

    it('each edit has a one-line summary for the player, naming the block by its label', () => {
      const summary = (turn: HarnessTurn) => toolResults(turn).map((r) => (r.content as { data?: { summary?: string } }).data?.summary);
      expect(summary(turns[1])).toEqual([undefined, `Courier's notes: + ${PROMISE}`]);
      expect(summary(turns[2])).toEqual([`Courier's notes: ${PROMISE.slice(0, 39)}… → Delivered Tomas's letter to the bargeman downriver.`]);
      expect(summary(turns[3])).toEqual(['Village rumours: cleared']);
    });

    it('an edit over the limit is a tool error naming the block: it changes nothing and does not end the runtime; the corrected edit is kept', async () => {
      expect(turns[1].request('narrator').turnContext).toContain(
        '<block id="village-rumours" label="Village rumours">\nThe captain forges his ledger.\n</block>',
      );
      const [over, corrected] = toolResults(turns[1]);
      expect([over.name, over.ok, over.done]).toEqual(['memory-append', false, undefined]);
      expect(JSON.stringify(over.content)).toContain(
        'block \\"village-rumours\\" would hold 831 characters, over its limit of 800 (it holds 30 now); nothing was changed',
      );
      expect([corrected.name, corrected.ok, corrected.done]).toEqual(['memory-append', true, true]);
      expect(keeper(turns[2]).turnContext).toContain(
        `<block id="courier-notes" label="Courier's notes" used="98" limit="1200">\nArrived with the last caravan before the snows.\n${PROMISE}\n</block>\n<block id="village-rumours" label="Village rumours" used="30" limit="800">\nThe captain forges his ledger.\n</block>`,
      );
    });

    it("a cleared block leaves the story's view; with every block empty the story gets no <memory-blocks> at all", async () => {
      expect(turns[4].request('narrator').turnContext).toContain('<block id="courier-notes"');
      expect(turns[4].request('narrator').turnContext).not.toContain('village-rumours');
      expect(keeper(turns[4]).turnContext).toContain('<block id="village-rumours" label="Village rumours" used="0" limit="800">\n(empty)\n</block>');
    });

    it('replace and clear; runtime-done changes no row', async () => {
      expect(await blocks(h)).toEqual({
        'village-rumours': { text: '' },
        'courier-notes': { text: "Arrived with the last caravan before the snows.\nDelivered Tomas's letter to the bargeman downriver." },
      });
    });

    it('the keeper and the narrator system prompts are byte-identical across all turns; every request rebuilds from the log', async () => {
      expect(new Set(turns.map((t) => keeper(t).systemPrompt)).size).toBe(1);
      expect(new Set(turns.map((t) => t.request('narrator').systemPrompt)).size).toBe(1);
      expect(await h.audit()).toMatchObject({ identical: true });
    });

    it('has a stable prefix (tool definitions + system prompt) of at least 1,280 emulator tokens, which the emulator reads from cache from turn 2', () => {
      for (const { sharedTokens, cachedTokens } of prefixReuse(turns, keeper)) {
        expect(sharedTokens).toBeGreaterThanOrEqual(CACHEABLE_PREFIX_MIN);
        expect(cachedTokens).toBeGreaterThanOrEqual(CACHEABLE_PREFIX_MIN);
      }
    });
  });

  describe('Emberback, zh-Hans', () => {
    let h: PluginHarness;
    beforeAll(async () => {
      h = await createPluginHarness({ plugins: PLUGINS, world: EMBERBACK, locale: 'zh-Hans', replies: { 'narrator/narrator': '米拉撑船离岸。' } });
    });
    afterAll(() => h.close());

    it('reads the Chinese body; its stable prefix is read from cache too; the emulator default (runtime-done) ends the runtime in one request', async () => {
      const first = await h.turn('我上了渡船');
      const second = await h.turn('我等着');
      expect(keeper(first).section('runtime-body')).toContain('你负责维护故事的记忆块');
      expect(sharedPrefixTokens(keeper(first), keeper(second))).toBeGreaterThanOrEqual(CACHEABLE_PREFIX_MIN);
      expect(second.cachedTokens(keeper(second))).toBeGreaterThanOrEqual(CACHEABLE_PREFIX_MIN);
      for (const turn of [first, second]) expect(outcomes(turn)).toEqual([['runtime-done', true, true]]);
    });
  });
});
