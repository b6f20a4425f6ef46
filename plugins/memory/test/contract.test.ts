import { join } from 'node:path';
import { createPluginHarness, type PluginHarness } from '../../../libs/plugins-sdk/testing';

jest.setTimeout(120_000);

const PLUGINS = [join(__dirname, '..', '..', 'narrator'), join(__dirname, '..')];
const EMBERBACK = join(__dirname, '..', '..', '..', 'worlds', 'emberback');

const toolResults = (turn: { eventsOf(type: 'tool.completed@1'): { name: string; ok: boolean; content: string }[] }) =>
  turn.eventsOf('tool.completed@1').map((e) => ({ name: e.name, ok: e.ok, content: JSON.parse(e.content) as unknown }));

describe('memory (contract, through the engine)', () => {
  describe('Emberback, en', () => {
    let h: PluginHarness;
    beforeAll(async () => {
      h = await createPluginHarness({
        plugins: PLUGINS,
        world: EMBERBACK,
        locale: 'en',
        replies: {
          'narrator/narrator': 'Mira pushes the ferry off. "They say the captain forges his ledger," she mutters.',
          'memory/keeper': [
            { tool: 'memory-append', args: { block: 'village-rumours', line: 'The captain forges his ledger.' } },
            { tool: 'runtime-done', args: {} },
            // turn 2: an edit over the limit fails and changes nothing; then a replace
            { tool: 'memory-append', args: { block: 'village-rumours', line: 'x'.repeat(800) } },
            { tool: 'memory-replace', args: { block: 'courier-notes', old: 'last caravan', new: 'final caravan' } },
            { tool: 'runtime-done', args: {} },
            // turn 3: clear
            { tool: 'memory-clear', args: { block: 'village-rumours' } },
            { tool: 'runtime-done', args: {} },
            // turn 4: nothing to keep is one runtime-done call
            { tool: 'runtime-done', args: {} },
          ],
        },
      });
    });
    afterAll(() => h.close());

    it('turn 1: the story reads the blocks in its turn context; the keeper gets definitions (session) and usage (turn), maxTurns 0, tool choice required', async () => {
      const turn = await h.turn('I ask Mira to take me across.');
      const story = turn.request('narrator');
      expect(story.segmentsOf('memory').map((s) => [s.id, s.placement, s.volatility])).toEqual([['memory-blocks', 'turn-context', 'turn']]);
      expect(story.turnContext).toContain(
        '<block id="courier-notes" label="Courier\'s notes">\nArrived with the last caravan before the snows.\n</block>\n<block id="village-rumours" label="Village rumours">\n(empty)\n</block>',
      );
      expect(story.systemPrompt).not.toContain('memory-block');

      const keeper = turn.request('memory', 'keeper');
      expect(keeper.segmentsOf('memory').map((s) => [s.id, s.placement, s.volatility])).toEqual([
        ['memory-block-definitions', 'system-prompt', 'session'],
        ['memory-blocks-usage', 'turn-context', 'turn'],
      ]);
      expect(keeper.systemPrompt).toContain("- courier-notes | Courier's notes | 1200 | What Ash has learned and promised, in short lines.");
      expect(keeper.turnContext).toContain('<block id="courier-notes" label="Courier\'s notes" used="47" limit="1200">');
      expect(keeper.body.tool_choice).toBe('required');
      expect((keeper.body.tools as { function: { name: string } }[]).map((t) => t.function.name).sort()).toEqual([
        'memory-append',
        'memory-clear',
        'memory-replace',
        'runtime-done',
      ]);
      // this turn's story text reaches the keeper as a message
      expect(keeper.messages.some((m) => m.role === 'assistant' && m.content.includes('forges his ledger'))).toBe(true);

      expect(toolResults(turn)).toEqual([
        { name: 'memory-append', ok: true, content: { ok: true, data: { block: 'village-rumours', used: 30, limit: 800 } } },
        { name: 'runtime-done', ok: true, content: expect.anything() },
      ]);
      expect(await h.pluginData('memory', 'blocks')).toEqual([
        expect.objectContaining({ key: 'village-rumours', value: { text: 'The captain forges his ledger.' } }),
      ]);
    });

    it('turn 2: the story sees the kept line; an edit over the limit is a tool error naming the block and nothing changes; the keeper has no earlier turns', async () => {
      const turn = await h.turn('I step onto the landing.');
      expect(turn.request('narrator').turnContext).toContain('<block id="village-rumours" label="Village rumours">\nThe captain forges his ledger.\n</block>');
      const keeper = turn.request('memory', 'keeper');
      expect(keeper.messages.filter((m) => m.section === 'history')).toEqual([]);
      const [over, replaced] = toolResults(turn);
      expect(over).toMatchObject({ name: 'memory-append', ok: false });
      expect(JSON.stringify(over.content)).toContain(
        'block \\"village-rumours\\" would hold 831 characters, over its limit of 800 (it holds 30 now); nothing was changed',
      );
      expect(replaced).toMatchObject({ name: 'memory-replace', ok: true });
      const rows = Object.fromEntries((await h.pluginData('memory', 'blocks')).map((r) => [r.key, r.value]));
      expect(rows).toEqual({
        'village-rumours': { text: 'The captain forges his ledger.' },
        'courier-notes': { text: 'Arrived with the final caravan before the snows.' },
      });
    });

    it('turn 3: clear; the keeper system prompt is byte-identical across turns; every request rebuilds from the log', async () => {
      const turn = await h.turn('I look back at the village.');
      expect(toolResults(turn)[0]).toMatchObject({ name: 'memory-clear', ok: true });
      expect(Object.fromEntries((await h.pluginData('memory', 'blocks')).map((r) => [r.key, r.value]))['village-rumours']).toEqual({ text: '' });
      const events = await h.events();
      const prompts = new Set(
        events
          .filter((e) => e.type === 'llm.calling@1' && (e.data as { runtimeId: string }).runtimeId === 'keeper')
          .map((e) => (JSON.parse((e.data as { body: string }).body) as { messages: { role: string; content: unknown }[] }).messages[0].content)
          .map((c) => JSON.stringify(c)),
      );
      expect(prompts.size).toBe(1);
      expect(await h.audit()).toMatchObject({ identical: true });
    });

    it('turn 4: nothing to keep is a single runtime-done (required allows it); no row changes; the narrator system prompt never changed', async () => {
      const before = await h.pluginData('memory', 'blocks');
      const turn = await h.turn('I wait.');
      expect(turn.requestsOf('memory', 'keeper')).toHaveLength(1);
      expect(turn.eventsOf('tool.completed@1').map((e) => [e.name, e.ok])).toEqual([['runtime-done', true]]);
      expect(await h.pluginData('memory', 'blocks')).toEqual(before);
      const narratorPrompts = new Set(
        (await h.events())
          .filter((e) => e.type === 'llm.calling@1' && (e.data as { runtimeId: string }).runtimeId === 'narrator')
          .map((e) => JSON.stringify((JSON.parse((e.data as { body: string }).body) as { messages: { content: unknown }[] }).messages[0].content)),
      );
      expect(narratorPrompts.size).toBe(1);
    });
  });
});
