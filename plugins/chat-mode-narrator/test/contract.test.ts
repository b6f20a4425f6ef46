import { join } from 'node:path';
import { loadPlugin } from '../../../libs/plugins-sdk';
import { createPluginHarness, type PluginHarness } from '../../../libs/plugin-testing';

jest.setTimeout(60_000);

const PLUGIN = join(__dirname, '..');
const EMBERBACK = join(__dirname, '..', '..', '..', 'worlds', 'emberback');

const placements = (segments: readonly { id: string; placement: string; volatility: string }[]) => segments.map((s) => [s.id, s.placement, s.volatility]);

describe('chat-mode-narrator (manifest)', () => {
  it('is a story runtime of the narrative stage with the narrative-engine@2 contract, off by default, in en and zh-Hans', () => {
    const plugin = loadPlugin(PLUGIN);
    expect(plugin.manifest).toMatchObject({ id: 'chat-mode-narrator', enabledByDefault: false });
    expect(plugin.manifest.contributes.extensions).toEqual([{ point: 'prompt.segment@1', id: 'character-sheets' }]);
    expect(plugin.entry).toBe(join(PLUGIN, 'server', 'index.ts'));
    expect(plugin.runtimes).toHaveLength(1);
    const [runtime] = plugin.runtimes;
    expect(runtime).toMatchObject({ id: 'chat-mode-narrator', fullId: 'chat-mode-narrator/chat-mode-narrator', inline: true });
    expect(runtime.manifest).toMatchObject({
      type: 'agent',
      schedule: { stage: 'narrative', trigger: 'auto' },
      outputKind: 'story',
      output: { contract: 'narrative-engine@2' },
      agent: { slot: 'story' },
    });
    // dialogue from the characters present, not a second-person narration; no template variables for characters
    expect(runtime.bodies.en).toMatch(/as dialogue/);
    expect(runtime.bodies.en).toMatch(/Do not narrate in the second person/);
    expect(runtime.bodies['zh-Hans']).toMatch(/用对白回应/);
    expect(runtime.bodies['zh-Hans']).toMatch(/不要用第二人称叙述/);
    for (const body of Object.values(runtime.bodies)) {
      expect(body).not.toMatch(/\{\{|\}\}/);
      expect(body).toContain('<player-character>');
      expect(body).toContain('<character-profiles>');
      expect(body).not.toContain('/help');
    }
  });
});

describe('chat-mode-narrator (contract, through the engine)', () => {
  describe('Emberback, en', () => {
    let h: PluginHarness;
    beforeAll(async () => {
      h = await createPluginHarness({
        plugins: [PLUGIN],
        world: EMBERBACK,
        replies: { 'chat-mode-narrator/chat-mode-narrator': ['Mira: *looks up* Riding, courier?', 'Mira: The river takes what it is owed.'] },
      });
    });
    afterAll(() => h.close());

    it('the sheets are turn-context segments; the system prompt is byte-identical across turns', async () => {
      const turns = [await h.turn('Hello, ferrywoman.'), await h.turn('What do I owe you?')];
      const requests = turns.map((t) => t.request('chat-mode-narrator'));
      for (const request of requests) {
        expect(placements(request.segmentsOf('chat-mode-narrator'))).toEqual([
          ['chat-style', 'system-prompt', 'stable'],
          ['character-profiles', 'turn-context', 'turn'],
          ['player-character', 'turn-context', 'turn'],
        ]);
        expect(request.turnContext).toMatch(/<player-character>\n\{"id":"ash","name":"Ash".*"health":"8\/10"/);
        expect(request.turnContext).toContain('Mira (aka the ferrywoman) [npc]');
        expect(request.turnContext).toContain('"status":"mending a net by the landing"');
        expect(request.systemPrompt).not.toContain('mending a net');
        expect(request.systemPrompt).not.toContain('"health"');
        expect(request.section('runtime-body')).toMatch(/You voice the characters of an interactive story in chat mode/);
        expect(request.systemPrompt).not.toContain('/help');
        const sections = request.messages.map((m) => m.section);
        expect(sections.indexOf('turn-context')).toBe(sections.indexOf('player-input') - 1);
      }
      expect(requests[0].systemPrompt).toBe(requests[1].systemPrompt);
      expect(turns.map((t) => t.story)).toEqual(['Mira: *looks up* Riding, courier?', 'Mira: The river takes what it is owed.']);
      expect(await h.audit()).toMatchObject({ identical: true });
    });
  });

  it('zh-Hans: the Chinese body and style segment; the sheets in the turn context', async () => {
    const h = await createPluginHarness({
      plugins: [PLUGIN],
      world: EMBERBACK,
      locale: 'zh-Hans',
      replies: { 'chat-mode-narrator/chat-mode-narrator': '米拉：*抬起头* 要过河吗，信使？' },
    });
    try {
      const turn = await h.turn('你好，摆渡人。');
      const request = turn.request('chat-mode-narrator');
      expect(request.section('runtime-body')).toMatch(/你在聊天模式下为互动故事中的角色发声/);
      expect(request.section('segments')).toContain('保持角色身份。');
      expect(request.turnContext).toContain('<player-character>');
      expect(request.turnContext).toContain('<character-profiles>');
      expect(turn.story).toBe('米拉：*抬起头* 要过河吗，信使？');
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
      const h = await createPluginHarness({
        plugins: [PLUGIN],
        world: world(health, status),
        replies: { 'chat-mode-narrator/chat-mode-narrator': 'Time passes.' },
      });
      try {
        requests.push((await h.turn('I wait')).request('chat-mode-narrator'));
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
    const h = await createPluginHarness({
      plugins: [PLUGIN],
      ...(world ? { world } : {}),
      replies: { 'chat-mode-narrator/chat-mode-narrator': '*Nobody answers.*' },
    });
    try {
      const turn = await h.turn('Hello?');
      const request = turn.request('chat-mode-narrator');
      expect(placements(request.segmentsOf('chat-mode-narrator'))).toEqual([['chat-style', 'system-prompt', 'stable']]);
      expect(request.turnContext).not.toContain('<player-character>');
      expect(turn.story).toBe('*Nobody answers.*');
    } finally {
      await h.close();
    }
  });

  it("its sheets are for itself only (audience self): a narrator loaded beside it gets its own, not chat-mode-narrator's", async () => {
    const h = await createPluginHarness({
      plugins: [PLUGIN, join(__dirname, '..', '..', 'narrator')],
      world: EMBERBACK,
      replies: { default: 'Mira: Hm.' },
    });
    try {
      const turn = await h.turn('Hello.');
      for (const pluginId of ['narrator', 'chat-mode-narrator']) {
        const request = turn.request(pluginId);
        expect(request.segments.filter((s) => s.placement === 'turn-context').map((s) => `${s.providerPluginId}/${s.id}`)).toEqual([
          `${pluginId}/character-profiles`,
          `${pluginId}/player-character`,
        ]);
        expect(request.turnContext.match(/<player-character>/g)).toHaveLength(1);
      }
    } finally {
      await h.close();
    }
  });
});
