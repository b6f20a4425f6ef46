import { join } from 'node:path';
import { createPluginHarness, type PluginHarness, CACHEABLE_PREFIX_MIN, sharedPrefixTokens } from '../../../libs/plugin-testing';
import { blockOf, EMBERBACK, TRACKER, trackerTurn, WORLD_INIT, worldInitHarness } from './support';

jest.setTimeout(120_000);

const STORY = 'The vents sigh under the snow.';

describe('world-init on Emberback (contract, through the engine)', () => {
  let h: PluginHarness;
  beforeAll(async () => {
    h = await worldInitHarness({
      world: EMBERBACK,
      locale: 'en',
      replies: {
        [TRACKER]: [
          // turn 1: a change
          ...trackerTurn([{ id: 'dragon-sleep', value: 7 }]),
          // turn 2: no change
          ...trackerTurn([]),
          // turn 3: refused updates (out of range; a constant dimension), then no change
          {
            tool: 'update-dimensions',
            args: {
              updates: [
                { id: 'season', value: 'winter' },
                { id: 'dragon-sleep', value: 11 },
              ],
            },
          },
          { tool: 'update-dimensions', args: { updates: [{ id: 'caravan-road', value: 'closed' }] } },
          { tool: 'runtime-done' },
          // turn 4: two changes
          ...trackerTurn([
            { id: 'season', value: 'winter' },
            { id: 'village-mood', value: 'Everyone talks about the courier’s bell.' },
          ]),
        ],
        default: STORY,
      },
    });
  });
  afterAll(() => h.close());

  it('turn 1: <world-dimensions> in the narrative’s turn context (story audience), the tracker’s segments self-only, placed by volatility', async () => {
    const turn = await h.turn('I listen to the dragon breathing');
    const narrator = turn.request('narrator');
    expect(narrator.segmentsOf('world-init').map((s) => [s.id, s.volatility, s.placement])).toEqual([
      ['world-dimensions-intro', 'session', 'system-prompt'],
      ['world-dimensions', 'turn', 'turn-context'],
    ]);
    // spec §2 "Layout for bookkeeping runtimes": the constant line in the system prompt, only the values in the turn context
    expect(narrator.systemPrompt).toContain(
      "<world-dimensions>, in the system message before the player's input: the world's dimensions as this turn begins (read-only during the turn), one per line: id, version and value as JSON.",
    );
    expect(blockOf(narrator.turnContext, 'world-dimensions').split('\n')).toEqual([
      '<world-dimensions>',
      '- caravan-road (v1): "closing"',
      '- dragon-sleep (v1): 8',
      '- season (v1): "late autumn"',
      '- village-mood (v1): "Wary but curious about the courier who came with the last caravan."',
      '</world-dimensions>',
    ]);
    // the story never sees a rule (spec §4 "Projection does not change the source data")
    expect(narrator.raw).not.toContain('Lower it by 1');
    expect(narrator.raw).not.toContain('updateRule');
    expect(narrator.systemPrompt).not.toContain('</world-dimensions>');

    const [tracker] = turn.requestsOf('world-init', 'dimension-tracker');
    expect(tracker.segmentsOf('world-init').map((s) => [s.id, s.volatility, s.audience, s.placement])).toEqual([
      ['dimension-rules', 'session', 'self', 'system-prompt'],
      ['dimension-values', 'turn', 'self', 'turn-context'],
    ]);
    const rules = blockOf(tracker.systemPrompt, 'dimension-rules');
    expect(rules).toContain('- id: dragon-sleep');
    expect(rules).toContain('  rule: Lower it by 1 when the story shows a tremor');
    expect(rules).toContain('  schema: {"type":"integer","minimum":0,"maximum":10}');
    // a dimension without an update rule: in the session segment, as a constant
    expect(rules).toContain('Constant dimensions (no update rule: never change them):\n- caravan-road (Caravan road): "closing"');
    expect(rules).not.toContain('- id: caravan-road');
    expect(rules).toContain("\n<dimension-values>, in the system message before the player's input: the current value of each tracked dimension");
    expect(blockOf(tracker.turnContext, 'dimension-values').split('\n').slice(1, -1)).toEqual([
      'dragon-sleep: 8',
      'season: "late autumn"',
      'village-mood: "Wary but curious about the courier who came with the last caravan."',
    ]);
    // no version in the tracker's own segments
    for (const s of tracker.segmentsOf('world-init')) expect(s.content).not.toMatch(/\(v\d+|version\b/i);
    expect(tracker.turnContext).not.toContain('<world-dimensions>');
  });

  it('the tracker’s request: toolChoice required, its tools; one request per turn (a successful update completes it)', async () => {
    const requests = h.turns[0].requestsOf('world-init', 'dimension-tracker');
    expect(requests).toHaveLength(1);
    const [tracker] = requests;
    expect(tracker.body.tool_choice).toBe('required');
    const tools = (tracker.body.tools as { function: { name: string } }[]).map((t) => t.function.name);
    expect(tools).toEqual(expect.arrayContaining(['update-dimensions', 'dimension-rule-get', 'world-dimension-get', 'runtime-done']));
    // this turn's player input and story text are in the conversation
    expect(tracker.messages.map((m) => m.content)).toEqual(expect.arrayContaining(['I listen to the dragon breathing', STORY]));
  });

  it('an update is staged: the published artifact of the turn keeps Sₙ', async () => {
    // what the play client shows after the story (the session stream's tool summary)
    const [write] = h.turns[0].eventsOf('tool.completed@1').filter((e) => e.name === 'update-dimensions');
    expect(JSON.parse(write.content).data).toMatchObject({ changed: ['dragon-sleep'], summary: "Dragon's sleep 8 → 7" });
    const published = await h.pluginData('world-init', 'published');
    expect(published.map((r) => [r.key, (r.value as { dimensions: Record<string, { value: unknown; version: number }> }).dimensions['dragon-sleep']])).toEqual([
      ['turn-000001', { value: 8, version: 1 }],
    ]);
    const staged = await h.pluginData('world-init', 'staged');
    expect(staged.map((r) => [r.key, (r.value as { dimensions: Record<string, unknown> }).dimensions['dragon-sleep']])).toEqual([
      [h.turns[0].turnId, { value: 7, version: 2 }],
    ]);
  });

  it('turn 2: the next turn’s narrative reads the update as version + 1; an empty update changes nothing', async () => {
    const turn = await h.turn('I wait for the night to pass');
    const [write] = turn.eventsOf('tool.completed@1').filter((e) => e.name === 'update-dimensions');
    expect(JSON.parse(write.content).data).toEqual(expect.objectContaining({ changed: [] }));
    expect(JSON.parse(write.content).data.summary).toBeUndefined();
    expect(turn.request('narrator').turnContext).toContain('- dragon-sleep (v2): 7\n');
    expect(turn.request('world-init', 'dimension-tracker').turnContext).toContain('dragon-sleep: 7\n');
    // the session segment is byte-identical across turns
    expect(blockOf(turn.request('world-init', 'dimension-tracker').systemPrompt, 'dimension-rules')).toBe(
      blockOf(h.turns[0].request('world-init', 'dimension-tracker').systemPrompt, 'dimension-rules'),
    );
    expect(turn.request('world-init', 'dimension-tracker').systemPrompt).toBe(h.turns[0].request('world-init', 'dimension-tracker').systemPrompt);
  });

  it('turn 3: still version 2 after the empty update; an invalid update is a tool error naming the dimension, nothing written', async () => {
    const turn = await h.turn('I ring the bell three times');
    expect(turn.request('narrator').turnContext).toContain('- dragon-sleep (v2): 7\n');
    const refused = turn.eventsOf('tool.completed@1').filter((e) => e.name === 'update-dimensions');
    expect(refused.map((e) => e.ok)).toEqual([false, false]);
    const [outOfRange, constant] = refused.map((e) => JSON.parse(e.content) as { error: { code: string; message: string } });
    expect(outOfRange.error.code).toBe('TOOL_FAILED');
    expect(outOfRange.error.message).toMatch(/dimension "dragon-sleep": 11 does not match its schema/);
    expect(constant.error.message).toMatch(/dimension "caravan-road" has no update rule/);
    // staged rows are kept under the turn that wrote them: turns 1 and 2, none for turn 3
    expect((await h.pluginData('world-init', 'staged')).map((r) => r.key)).toEqual([h.turns[0].turnId, h.turns[1].turnId]);
    // maxTurns: 1 — the previous turn and this one, not turn 1
    const contents = turn.request('world-init', 'dimension-tracker').messages.map((m) => m.content);
    expect(contents).toEqual(expect.arrayContaining(['I wait for the night to pass', 'I ring the bell three times']));
    expect(contents).not.toContain('I listen to the dragon breathing');
    expect(turn.request('narrator').messages.map((m) => m.content)).toContain('I listen to the dragon breathing');
  });

  it('turn 4 and 5: nothing of the refused call was kept; two changes become versions + 1 in the next turn', async () => {
    const four = await h.turn('I walk to the watchtower');
    expect(four.request('narrator').turnContext).toContain('- season (v1): "late autumn"\n');
    const five = await h.turn('I look at the sky');
    const block = blockOf(five.request('narrator').turnContext, 'world-dimensions');
    expect(block).toContain('- season (v2): "winter"\n');
    expect(block).toContain('- village-mood (v2): "Everyone talks about the courier’s bell."\n');
    expect(block).toContain('- dragon-sleep (v2): 7\n');
    expect(block).toContain('- caravan-road (v1): "closing"\n');
    expect(await h.audit()).toMatchObject({ identical: true });
  });

  it('the tracker’s tools and system prompt are byte-identical turn to turn: a stable prefix of at least 1,280 emulator tokens, read from cache', () => {
    for (let i = 1; i < h.turns.length; i++) {
      const [before, after] = [h.turns[i - 1].requestsOf('world-init', 'dimension-tracker')[0], h.turns[i].requestsOf('world-init', 'dimension-tracker')[0]];
      expect(after.systemPrompt).toBe(before.systemPrompt);
      expect(sharedPrefixTokens(before, after)).toBeGreaterThanOrEqual(CACHEABLE_PREFIX_MIN);
      expect(h.turns[i].cachedTokens(after)).toBeGreaterThanOrEqual(CACHEABLE_PREFIX_MIN);
    }
  });
});

describe('world-init: the story-facing views carry no rules ({{ world.dimensions }}, world-dimension-get / -list)', () => {
  it('reads the same frozen Sₙ in the body, the tools and <world-dimensions>, without updateRule', async () => {
    const reader = 'dimension-reader/dimension-reader';
    const h = await createPluginHarness({
      plugins: [join(__dirname, 'fixtures', 'dimension-reader'), WORLD_INIT],
      world: EMBERBACK,
      replies: {
        [reader]: [{ tool: 'world-dimension-list' }, { tool: 'world-dimension-get', args: { id: 'season' } }, STORY, STORY],
        // runs after every stage, so after the tracker's write
        'dimension-reader/late': [{ tool: 'world-dimension-get', args: { id: 'dragon-sleep' } }, { tool: 'runtime-done' }, { tool: 'runtime-done' }],
        [TRACKER]: trackerTurn([{ id: 'dragon-sleep', value: 6 }]),
        default: STORY,
      },
    });
    try {
      const one = await h.turn('I sit by the vent');
      const body = one.request('dimension-reader').section('runtime-body');
      expect(body).toContain('The dragon sleeps at 8 (version 1).');
      expect(body).toContain('"season":{"name":"Season","description":"The season on the dragon\'s back.","schema":');
      expect(body).not.toContain('updateRule');
      expect(body).not.toContain('Lower it by 1');
      // not within the same turn: a runtime after the tracker's write still reads Sₙ, in its body and through the tool
      expect(one.request('dimension-reader', 'late').section('runtime-body')).toContain('The dragon sleeps at 8 (version 1).');
      const late = one.eventsOf('tool.completed@1').filter((e) => e.runtimeId === 'late');
      expect(JSON.parse(late[0].content)).toEqual({ ok: true, data: { id: 'dragon-sleep', name: "Dragon's sleep", version: 1, value: 8 } });
      const results = one
        .eventsOf('tool.completed@1')
        .filter((e) => e.runtimeId === 'dimension-reader')
        .map((e) => e.content);
      expect(results.join('\n')).not.toMatch(/updateRule|initialValue|lastTrackedSource/);
      expect(JSON.parse(results[0]).data.dimensions).toContainEqual({
        id: 'dragon-sleep',
        name: "Dragon's sleep",
        description: 'How deeply the dragon sleeps, from 0 (awake) to 10 (deepest sleep).',
        version: 1,
      });
      expect(JSON.parse(results[1]).data).toEqual({ id: 'season', name: 'Season', version: 1, value: 'late autumn' });
      const two = await h.turn('I sit by the vent again');
      expect(two.request('dimension-reader').section('runtime-body')).toContain('The dragon sleeps at 6 (version 2).');
      expect(two.request('dimension-reader').turnContext).toContain('- dragon-sleep (v2): 6\n');
      expect(two.request('dimension-reader', 'late').section('runtime-body')).toContain('The dragon sleeps at 6 (version 2).');
      expect(await h.audit()).toMatchObject({ identical: true });
    } finally {
      await h.close();
    }
  });
});
