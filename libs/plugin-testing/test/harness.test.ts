import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { behaviour } from '../../../test/fixtures/host-plugins/status/server';
import { createPluginHarness, HarnessLookupError, HarnessOptionsError, HarnessTurnFailedError, type PluginHarness, type PluginHarnessOptions } from '..';

const FIXTURES = join(__dirname, '..', '..', '..', 'test', 'fixtures');
const EXAMPLE = join(FIXTURES, 'harness-example-plugin');
const HOST = (id: string) => join(FIXTURES, 'host-plugins', id);

/** Appends a plugin-data row as a function runtime of that turn would (the engine's event, through its store). */
async function writeRow(
  h: PluginHarness,
  turn: { executionId: string; turnId: string },
  row: { pluginId: string; namespace: string; key: string; value: unknown },
) {
  await h.engine.store.append({
    tenantId: h.tenantId,
    streamId: h.sessionId,
    expectedVersion: await h.engine.store.streamVersion(h.sessionId),
    events: [{ type: 'plugin-data.written@1', data: { ...turn, attempt: 1, ...row, value: row.value as never } }],
  });
}

jest.setTimeout(60_000);

describe('the plugin contract-test harness', () => {
  describe('scripted replies', () => {
    let h: PluginHarness;
    beforeAll(async () => {
      h = await createPluginHarness({
        plugins: [EXAMPLE, HOST('scene'), HOST('narrator')],
        replies: {
          'scene/scene': ['scene one', { text: 'scene two' }],
          'weather-watch/forecast': { json: { sky: 'fog' } },
          default: 'told by default',
        },
      });
    });
    afterAll(() => h.close());

    it('each runtime gets its own replies, a list in order, then the default', async () => {
      const first = await h.turn('Look around');
      expect(first.output('scene')).toBe('scene one');
      expect(first.outputJson('weather-watch', 'forecast')).toEqual({ sky: 'fog' });
      expect(first.output('narrator')).toBe('told by default');
      expect(first.output('weather-watch', 'storyteller')).toBe('told by default');
      expect(first.story).toBe('told by default\n\ntold by default');
      const second = await h.turn('Look again');
      expect(second.output('scene')).toBe('scene two');
      expect(second.outputJson('weather-watch', 'forecast')).toEqual({ sky: 'fog' }); // a single reply answers every call
      expect((await h.turn('And again')).output('scene')).toBe('told by default'); // the list is used up
    });

    it('the requests it exposes are the bodies the log recorded (llm.calling@1), and they rebuild identically', async () => {
      const turn = await h.turn('Check the requests');
      const calls = turn.eventsOf('llm.calling@1');
      expect(calls).toHaveLength(4);
      expect(turn.requests.map((r) => r.callId).sort()).toEqual(calls.map((c) => c.callId).sort());
      for (const call of calls) {
        const request = turn.requests.find((r) => r.callId === call.callId)!;
        expect([request.pluginId, request.runtimeId, request.model]).toEqual([call.pluginId, call.runtimeId, call.model]);
        expect(request.raw).toBe(call.body);
        expect(request.body).toEqual(JSON.parse(call.body));
        expect(request.identical).toBe(true);
        // the structured view is the body's content: its messages are the wire messages (OpenAI chat)
        expect((request.body.messages as { content: string }[]).map((m) => m.content)).toEqual(request.messages.map((m) => m.content));
        expect(request.messages[0]).toMatchObject({ role: 'system', section: 'system', content: request.systemPrompt });
        expect(request.systemSections.map((s) => s.name)).toContain('runtime-body');
      }
      expect(() => turn.request('nobody')).toThrow(
        new HarnessLookupError(
          'nobody/nobody made no model request in this turn (requests by: narrator/narrator, scene/scene, weather-watch/forecast, weather-watch/storyteller)',
        ),
      );
      const audit = await h.audit();
      expect(audit.identical).toBe(true);
      expect(audit.calls).toHaveLength(16);
    });
  });

  it('without a default, unscripted runtimes get the emulator’s own reply', async () => {
    const h = await createPluginHarness({ plugins: [HOST('scene'), HOST('narrator')], replies: { 'scene/scene': 'set' } });
    try {
      const turn = await h.turn('Open the door');
      expect(turn.output('scene')).toBe('set');
      expect(turn.story.length).toBeGreaterThan(0);
      expect(turn.story).not.toBe('set');
    } finally {
      await h.close();
    }
  });

  it('an inline world reaches the handlers and the lorebook; plugin data is read from the store of this session', async () => {
    const h = await createPluginHarness({
      plugins: [EXAMPLE],
      world: { name: 'Inline Isle', description: 'A windy rock.', lore: 'Salt and wind shape everything here.' },
      replies: { default: '{"sky":"grey"}' },
    });
    try {
      expect(h.worldId).toBe('fixture-world');
      const turn = await h.turn('Go outside');
      const request = turn.request('weather-watch', 'storyteller');
      expect(request.turnContext).toContain('Over Inline Isle: clear (turn 1).');
      expect(request.section('worldinfo-before')).toContain('Salt and wind shape everything here.');
      expect(await h.pluginData('weather-watch', 'notes')).toEqual([]);
      await writeRow(h, turn, { pluginId: 'weather-watch', namespace: 'notes', key: 'sky', value: { seen: 'grey' } });
      await writeRow(h, turn, { pluginId: 'weather-watch', namespace: 'notes', key: 'wind', value: 'north' });
      expect(await h.pluginData('weather-watch', 'notes')).toEqual([
        { key: 'sky', value: { seen: 'grey' } },
        { key: 'wind', value: 'north' },
      ]);
      expect(await h.pluginDataReader('weather-watch').get('notes', 'wind')).toBe('north');
      expect(await h.pluginData('other-plugin', 'notes')).toEqual([]);
    } finally {
      await h.close();
    }
  });

  it('two harnesses at once are isolated: own emulator script, database, session and files', async () => {
    const options = (story: string): PluginHarnessOptions => ({ plugins: [HOST('narrator')], replies: { default: story } });
    const [a, b] = await Promise.all([createPluginHarness(options('story A')), createPluginHarness(options('story B'))]);
    try {
      const [ta, tb] = await Promise.all([a.turn('go'), b.turn('go')]);
      expect([ta.story, tb.story]).toEqual(['story A', 'story B']);
      expect(a.sessionId).not.toBe(b.sessionId);
      expect(a.engine.config.dataDir).not.toBe(b.engine.config.dataDir);
      expect((await a.events()).every((e) => e.streamId === a.sessionId)).toBe(true);
      expect(await b.engine.store.readStream(a.sessionId)).toEqual([]);
      await writeRow(a, ta, { pluginId: 'narrator', namespace: 'n', key: 'k', value: 1 });
      expect(await a.pluginData('narrator', 'n')).toHaveLength(1);
      expect(await b.pluginData('narrator', 'n')).toEqual([]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('a failed turn rejects with the recorded error, or is returned with allowFailure', async () => {
    const h = await createPluginHarness({ plugins: [HOST('status'), HOST('narrator')], handlerTimeoutMs: 500 });
    try {
      Object.assign(behaviour, { mode: 'throw', onlyFor: 'break it' });
      const error = await h.turn('break it').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HarnessTurnFailedError);
      expect(error).toMatchObject({ failure: { code: 'PLUGIN_HANDLER_THREW' } });
      expect((error as Error).message).toContain('plugin status: prompt.segment@1 "status"');
      const failed = await h.turn('break it', { allowFailure: true });
      expect([failed.status, failed.failure?.code, failed.requests]).toEqual(['failed', 'PLUGIN_HANDLER_THREW', []]);
      const ok = await h.turn('carry on');
      expect(ok.status).toBe('committed');
      expect(
        ok
          .request('narrator')
          .segmentsOf('status')
          .map((s) => s.placement),
      ).toEqual(['turn-context']);
    } finally {
      Object.assign(behaviour, { mode: 'ok', onlyFor: null });
      await h.close();
    }
  });

  it('close() stops everything and deletes its files; a closed harness says so', async () => {
    const h = await createPluginHarness({ plugins: [HOST('narrator')] });
    const dir = dirname(h.engine.config.dataDir);
    expect(existsSync(dir)).toBe(true);
    await h.turn('one turn');
    await h.close();
    await h.close();
    expect(existsSync(dir)).toBe(false);
    await expect(h.turn('again')).rejects.toThrow('the plugin harness is closed');
  });

  it('the player settings and form values reach the body (userSettings, player.lastFormValues) as the API would send them', async () => {
    const h = await createPluginHarness({
      plugins: [join(FIXTURES, 'template-plugins', 'teller'), join(FIXTURES, 'template-plugins', 'constructor')],
      world: join(FIXTURES, 'template-worlds', 'harbor'),
      pluginSettings: { teller: { tone: 'bright', pace: 'brisk' } },
    });
    try {
      const turn = await h.turn('Ring the bell', { formValues: { bell: 'great' } });
      const system = turn.request('teller', 'teller').systemPrompt;
      expect(system).toContain('Settings: tone=bright verbose=false pace=brisk');
      expect(system).toContain('Form: {"bell":"great"}');
      expect((await h.audit()).identical).toBe(true);
    } finally {
      await h.close();
    }
  });

  describe('bad options: an error naming the field, before anything starts', () => {
    const bad = (options: unknown) =>
      createPluginHarness(options as PluginHarnessOptions).then(
        () => {
          throw new Error('expected a HarnessOptionsError');
        },
        (error: unknown) => {
          expect(error).toBeInstanceOf(HarnessOptionsError);
          return (error as HarnessOptionsError).issues;
        },
      );

    it.each([
      ['no plugins', {}, 'plugins', 'give at least one plugin folder (or builtins: true)'],
      ['an unknown key', { plugins: [EXAMPLE], replys: {} }, 'replys', 'unknown key'],
      ['a folder without PLUGIN.md', { plugins: [FIXTURES] }, 'plugins[0]', `no PLUGIN.md in ${FIXTURES}`],
      ['the same plugin twice', { plugins: [EXAMPLE, EXAMPLE] }, 'plugins[1]', 'plugin id "weather-watch" is also the id of plugins[0]'],
      [
        'a reply for an unknown runtime',
        { plugins: [EXAMPLE], replies: { 'weather-watch/nope': 'x' } },
        'replies["weather-watch/nope"]',
        'no runtime "weather-watch/nope"',
      ],
      ['a reply that is not one', { plugins: [EXAMPLE], replies: { default: 42 } }, 'replies.default', ''],
      ['a bad locale', { plugins: [EXAMPLE], locale: 'en_US!' }, 'locale', 'must be a well-formed BCP 47 language tag'],
      ['a bad turn timeout', { plugins: [EXAMPLE], turnTimeoutMs: -1 }, 'turnTimeoutMs', ''],
      ['a bad inline world', { plugins: [EXAMPLE], world: { name: 'W', characters: [{ id: 'c' }] } }, 'world.characters[0].name', ''],
      ['an unknown world key', { plugins: [EXAMPLE], world: { name: 'W', climate: 'wet' } }, 'world.climate', 'unknown key'],
      ['a world path without WORLD.md', { plugins: [EXAMPLE], world: FIXTURES }, 'world', 'no WORLD.md'],
      [
        'a setting the plugin does not declare',
        { plugins: [EXAMPLE], pluginSettings: { 'weather-watch': { loud: true } } },
        'pluginSettings.weather-watch.loud',
        '',
      ],
      ['settings of a plugin not loaded', { plugins: [EXAMPLE], pluginSettings: { nobody: { x: 1 } } }, 'pluginSettings.nobody', 'no loaded plugin'],
    ])('%s', async (_, options, path, message) => {
      const issues = await bad(options);
      expect(issues.map((i) => i.path)).toContain(path);
      expect(issues.find((i) => i.path === path)!.message).toContain(message);
    });

    it('the message names the field too', async () => {
      await expect(createPluginHarness({ plugins: [EXAMPLE], replies: { 'weather-watch/nope': 'x' } })).rejects.toThrow(
        /^bad plugin harness options: replies\["weather-watch\/nope"\]: no runtime "weather-watch\/nope" among the loaded plugins \(runtimes: weather-watch\/forecast, weather-watch\/storyteller; or "default"\)$/,
      );
    });
  });
});
