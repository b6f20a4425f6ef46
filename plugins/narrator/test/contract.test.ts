import { join } from 'node:path';
import { createPluginHarness, type PluginHarness } from '../../../libs/plugin-testing';

jest.setTimeout(60_000);

const PLUGIN = join(__dirname, '..');
const EMBERBACK = join(__dirname, '..', '..', '..', 'worlds', 'emberback');

const placements = (segments: readonly { id: string; placement: string; volatility: string }[]) => segments.map((s) => [s.id, s.placement, s.volatility]);

describe('narrator (contract, through the engine)', () => {
  describe('Emberback, en: the character sheets are turn segments', () => {
    let h: PluginHarness;
    beforeAll(async () => {
      h = await createPluginHarness({
        plugins: [PLUGIN],
        world: EMBERBACK,
        replies: { 'narrator/narrator': ['You climb onto the landing.', 'Mira looks up from her net.', 'The bell rings three times.'] },
      });
    });
    afterAll(() => h.close());

    it('gives <player-character> and <character-profiles> to the turn context, never to the system prompt; the system prompt is byte-identical turn to turn', async () => {
      const turns = [await h.turn('I climb down to the landing'), await h.turn('Ask Mira about the ferry'), await h.turn('I wait for the bell')];
      const requests = turns.map((t) => t.request('narrator'));
      for (const request of requests) {
        expect(placements(request.segmentsOf('narrator'))).toEqual([
          ['narrative-style', 'system-prompt', 'stable'],
          ['character-profiles', 'turn-context', 'turn'],
          ['player-character', 'turn-context', 'turn'],
        ]);
        // the primary seat's character (Ash), ranges from the schema
        expect(request.turnContext).toMatch(
          /<player-character>\n\{"id":"ash","name":"Ash","type":"player",.*"health":"8\/10","warmth":"3\/5","trust":"0\/5","status":"tired from the climb"\}\}\n<\/player-character>/,
        );
        // every other character, one profile line each, without the current one
        expect(request.turnContext).toContain('Mira (aka the ferrywoman) [npc] | The ferrywoman of the ash river; hears everything, says little. |');
        expect(request.turnContext).toContain('Tomas Vell (aka the captain) [npc]');
        expect(request.turnContext).not.toMatch(/^Ash .*\[player\]/m);
        // the fields are data of the turn: not in the system prompt (the body only names the blocks)
        expect(request.systemPrompt).not.toContain('mending a net');
        expect(request.systemPrompt).not.toContain('"health"');
        expect(request.section('runtime-body')).toContain('in the <player-character> block');
        expect(request.section('runtime-body')).toContain('in the <character-profiles> block');
        expect(request.section('runtime-body')).not.toMatch(/\{\{|\}\}/);
        expect(request.systemPrompt).not.toContain('/help');
        // the turn context comes after the history, before the player's input (spec §2)
        const sections = request.messages.map((m) => m.section);
        expect(sections.indexOf('turn-context')).toBe(sections.indexOf('player-input') - 1);
      }
      expect(new Set(requests.map((r) => r.systemPrompt)).size).toBe(1);
      // what the provider was sent: the system message is the same bytes in all three turns
      const systemOf = (body: Record<string, unknown>) => JSON.stringify((body.messages as { role: string }[]).filter((m) => m.role === 'system')[0]);
      expect(new Set(requests.map((r) => systemOf(r.body))).size).toBe(1);
      expect(turns.map((t) => t.story)).toEqual(['You climb onto the landing.', 'Mira looks up from her net.', 'The bell rings three times.']);
      expect(await h.audit()).toMatchObject({ identical: true });
    });
  });

  it('zh-Hans: the Chinese body; the profiles that do not fit the budget are named on a Chinese line', async () => {
    const characters = Array.from({ length: 30 }, (_, i) => ({
      id: `villager-${String(i).padStart(2, '0')}`,
      name: `村民${i}`,
      description: `住在第${i % 3}层台地的村民，`.repeat(30),
    }));
    const h = await createPluginHarness({
      plugins: [PLUGIN],
      world: { name: '龙背村', characters: [{ id: 'ash', name: '阿什', type: 'player' }, ...characters], seats: [{ id: 'courier', characterId: 'ash' }] },
      locale: 'zh-CN',
      replies: { 'narrator/narrator': '你推开了门。' },
    });
    try {
      const turn = await h.turn('我推开门');
      const request = turn.request('narrator');
      expect(request.section('runtime-body')).toMatch(/你是一个互动故事的叙述者/);
      expect(request.section('runtime-body')).toContain('<player-character> 块');
      expect(request.section('segments')).toContain('保持叙述者视角一致。');
      expect(request.turnContext).toContain('"name":"阿什"');
      expect(request.turnContext).toMatch(/未列出档案的角色（用 get-character 按名字或别名查询）：.*村民29/);
      expect(request.systemPrompt).not.toContain('未列出档案的角色（');
      expect(turn.story).toBe('你推开了门。');
      expect(await h.audit()).toMatchObject({ identical: true });
    } finally {
      await h.close();
    }
  });

  it("a character's fields do not reach the system prompt: two sessions whose characters differ only in their fields send the same system prompt", async () => {
    // the engine has no way yet to change a character within a session; two sessions stand in for two turns
    const world = (health: number, status: string) => ({
      name: 'Ward',
      characterSchema: { properties: { health: { type: 'integer', minimum: 0, maximum: 10 } } },
      characters: [
        { id: 'ash', name: 'Ash', type: 'player', description: 'A courier.', fields: { health, status } },
        { id: 'mira', name: 'Mira', description: 'The ferrywoman.', fields: { health: 10 - health, status: `watching: ${status}` } },
      ],
      seats: [{ id: 'courier', characterId: 'ash', primary: true }],
    });
    const requests = [];
    for (const [health, status] of [
      [8, 'rested'],
      [2, 'bleeding from a cut'],
    ] as const) {
      const h = await createPluginHarness({ plugins: [PLUGIN], world: world(health, status), replies: { 'narrator/narrator': 'Time passes.' } });
      try {
        requests.push((await h.turn('I wait')).request('narrator'));
      } finally {
        await h.close();
      }
    }
    expect(requests[0].turnContext).toContain('"health":"8/10","status":"rested"');
    expect(requests[1].turnContext).toContain('"health":"2/10","status":"bleeding from a cut"');
    expect(requests[1].turnContext).toContain('watching: bleeding from a cut');
    expect(requests[0].systemPrompt).toBe(requests[1].systemPrompt);
  });

  it.each([
    ['no world at all', undefined],
    ['a world without characters or seats', { name: 'Empty Moor' }],
  ])('%s: no character segments, and the turn runs', async (_label, world) => {
    const h = await createPluginHarness({ plugins: [PLUGIN], ...(world ? { world } : {}), replies: { 'narrator/narrator': 'Fog.' } });
    try {
      const turn = await h.turn('I look around');
      const request = turn.request('narrator');
      expect(placements(request.segmentsOf('narrator'))).toEqual([['narrative-style', 'system-prompt', 'stable']]);
      expect(request.turnContext).not.toContain('<player-character>');
      expect(request.turnContext).not.toContain('<character-profiles>');
      expect(turn.story).toBe('Fog.');
    } finally {
      await h.close();
    }
  });

  it('characters without seats: no <player-character>, every character in <character-profiles> (a player-type one tagged)', async () => {
    const h = await createPluginHarness({
      plugins: [PLUGIN],
      world: {
        name: 'Seatless',
        characters: [
          { id: 'wren', name: 'Wren', type: 'player', description: 'A wanderer.' },
          { id: 'oda', name: 'Oda', description: 'The innkeeper.', fields: { mood: 'busy' } },
        ],
      },
      replies: { 'narrator/narrator': 'The inn is loud.' },
    });
    try {
      const request = (await h.turn('I enter the inn')).request('narrator');
      expect(placements(request.segmentsOf('narrator'))).toEqual([
        ['narrative-style', 'system-prompt', 'stable'],
        ['character-profiles', 'turn-context', 'turn'],
      ]);
      expect(request.turnContext).toContain(
        '<character-profiles>\nWren [player] | A wanderer.\nOda [npc] | The innkeeper. | {"mood":"busy"}\n</character-profiles>',
      );
    } finally {
      await h.close();
    }
  });
});
