import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { type LoadedPlugin, loadPlugins, PluginManifestError } from '../../../plugins-sdk';
import { FunctionRuntimeHasNoModelCallError, UnknownStageError } from '../../errors';
import { RuntimeCatalog } from '../runtime-catalog';
import { buildRuntimeRequest } from '../../request/runtime-request';
import { bareRequestInputs, unsentProviders } from '../../request/test/bare-request';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Loads plugin folders written from `files` (paths relative to a temporary plugins directory). */
function plugins(files: Record<string, string>): { dir: string; plugins: LoadedPlugin[] } {
  const dir = mkdtempSync(join(tmpdir(), 'covel-catalog-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return { dir, plugins: loadPlugins(dir) };
}
const plugin = (id: string, yaml = '') => `---\nid: ${id}\nname: ${id}\nversion: "1"\n${yaml}\n---\n${id} body.`;
const runtime = (id: string, yaml = '') => `---\nid: ${id}\n${yaml}\n---\n${id} runtime body.`;

function catalogError(files: Record<string, string>): { dir: string; message: string } {
  const { dir, plugins: loaded } = plugins(files);
  try {
    new RuntimeCatalog(loaded);
  } catch (error) {
    expect(error).toBeInstanceOf(PluginManifestError);
    return { dir, message: (error as PluginManifestError).message };
  }
  throw new Error('expected the catalog to be rejected');
}

describe('the runtime catalog', () => {
  it('inline and child runtimes with their ids, stages from schedule.stage, bodies per runtime', () => {
    const { plugins: loaded } = plugins({
      'keeper/PLUGIN.md': plugin('keeper'),
      'keeper/runtimes/tally/RUNTIME.md': runtime('tally', 'type: function\nschedule: { stage: pre-turn }'),
      'keeper/runtimes/scribe/RUNTIME.md': runtime('scribe', 'schedule: { stage: post-turn }\noutputKind: structured'),
      'narrator/PLUGIN.md': plugin('narrator', 'runtime:\n  schedule: { stage: narrative }\n  outputKind: story'),
    });
    const catalog = new RuntimeCatalog(loaded);
    expect(catalog.all().map((r) => [r.fullId, r.pluginId, r.runtimeId, r.stage, r.inline, r.bodies.en, r.plugin.manifest.id])).toEqual([
      ['keeper/scribe', 'keeper', 'scribe', 'post-turn', false, 'scribe runtime body.', 'keeper'],
      ['keeper/tally', 'keeper', 'tally', 'pre-turn', false, 'tally runtime body.', 'keeper'],
      ['narrator/narrator', 'narrator', 'narrator', 'narrative', true, 'narrator body.', 'narrator'],
    ]);
    expect(catalog.groups().map((g) => [g.stage, g.runtimes.map((r) => r.fullId)])).toEqual([
      ['pre-turn', ['keeper/tally']],
      ['narrative', ['narrator/narrator']],
      ['post-turn', ['keeper/scribe']],
    ]);
    // made once (every turn asks several times): the same frozen groups each time
    expect(catalog.groups()).toBe(catalog.groups());
    expect(Object.isFrozen(catalog.groups()) && catalog.groups().every((g) => Object.isFrozen(g) && Object.isFrozen(g.runtimes))).toBe(true);
    expect(catalog.find('keeper', 'tally')?.manifest.type).toBe('function');
    expect(catalog.stageIndex(catalog.find('keeper', 'scribe')!)).toBe(2);
  });

  it('event-triggered and manual runtimes are in the catalog but not in a turn’s groups', () => {
    const { plugins: loaded } = plugins({
      'quests/PLUGIN.md': plugin(
        'quests',
        'runtime:\n  schedule: { stage: narrative }\ncontributes:\n  events:\n    - { topic: quest.completed, description: A quest ended., payload: { type: object } }',
      ),
      'quests/runtimes/reward/RUNTIME.md': runtime('reward', 'schedule: { trigger: { event: quest.completed } }'),
      'quests/runtimes/review/RUNTIME.md': runtime('review', 'schedule: { stage: post-turn, trigger: manual }'),
    });
    const catalog = new RuntimeCatalog(loaded);
    expect(catalog.all().map((r) => r.fullId)).toEqual(['quests/quests', 'quests/review', 'quests/reward']);
    expect(catalog.find('quests', 'reward')).toBeDefined();
    expect(catalog.groups().map((g) => [g.stage, g.runtimes.map((r) => r.fullId)])).toEqual([['narrative', ['quests/quests']]]);
  });

  it('an event trigger names a topic some loaded plugin declares (another plugin counts)', () => {
    const { dir, message } = catalogError({
      'quests/PLUGIN.md': plugin('quests'),
      'quests/runtimes/reward/RUNTIME.md': runtime('reward', 'schedule: { trigger: { event: quest.done } }'),
    });
    expect(message).toBe(
      `${join(dir, 'quests', 'runtimes', 'reward', 'RUNTIME.md')}: schedule.trigger.event: plugin quests: runtime reward is triggered by "quest.done", a topic no loaded plugin declares in contributes.events`,
    );
    const inline = catalogError({ 'quests/PLUGIN.md': plugin('quests', 'runtime:\n  schedule: { trigger: { event: quest.done } }') });
    expect(inline.message).toBe(
      `${join(inline.dir, 'quests', 'PLUGIN.md')}: runtime.schedule.trigger.event: plugin quests: runtime quests is triggered by "quest.done", a topic no loaded plugin declares in contributes.events`,
    );
    const { plugins: loaded } = plugins({
      'quests/PLUGIN.md': plugin('quests', 'runtime:\n  schedule: { trigger: { event: quest.done } }'),
      'world/PLUGIN.md': plugin('world', 'contributes:\n  events:\n    - { topic: quest.done, description: Done., payload: {} }'),
    });
    expect(() => new RuntimeCatalog(loaded)).not.toThrow();
  });

  it('io.inputs from: { runtime } names a runtime of the catalog in an earlier stage', () => {
    const files = (reader: string, source: string) => ({
      'a/PLUGIN.md': plugin('a'),
      'a/runtimes/source/RUNTIME.md': runtime('source', source),
      'b/PLUGIN.md': plugin('b', `runtime:\n${reader}\n  io:\n    inputs:\n      facts: { from: { runtime: a/source }, cardinality: one }`),
    });
    const path = (dir: string) => `${join(dir, 'b', 'PLUGIN.md')}: runtime.io.inputs.facts.from.runtime`;
    expect(() => new RuntimeCatalog(plugins(files('  schedule: { stage: narrative }', 'schedule: { stage: pre-turn }')).plugins)).not.toThrow();
    expect(() => new RuntimeCatalog(plugins(files('  outputKind: none', 'schedule: { stage: post-turn }')).plugins)).not.toThrow(); // no stage: after all stages
    const same = catalogError(files('  schedule: { stage: narrative }', 'schedule: { stage: narrative }'));
    expect(same.message).toBe(`${path(same.dir)}: plugin b: runtime b (stage narrative) reads "a/source" (stage narrative), which is not in an earlier stage`);
    const later = catalogError(files('  schedule: { stage: pre-turn }', 'schedule: { stage: post-turn }'));
    expect(later.message).toBe(`${path(later.dir)}: plugin b: runtime b (stage pre-turn) reads "a/source" (stage post-turn), which is not in an earlier stage`);
    const stageless = catalogError(files('  schedule: { stage: post-turn }', 'outputKind: none'));
    expect(stageless.message).toMatch(/reads "a\/source" \(stage \(none: after all stages\)\), which is not in an earlier stage$/);
    const missing = catalogError({
      'b/PLUGIN.md': plugin(
        'b',
        'runtime:\n  schedule: { stage: narrative }\n  io:\n    inputs:\n      facts: { from: { runtime: a/gone }, cardinality: many }',
      ),
    });
    expect(missing.message).toBe(`${path(missing.dir)}: plugin b: runtime b reads "a/gone", which is not a runtime of the loaded plugins`);
  });

  it('io.inputs from: { contract } needs a runtime of an earlier stage declaring that output.contract', () => {
    const files = (readerStage: string, sourceStage: string, contract = 'facts@1') => ({
      'a/PLUGIN.md': plugin('a', `runtime:\n  schedule: { stage: ${sourceStage} }\n  outputKind: structured\n  output: { contract: ${contract} }`),
      'b/PLUGIN.md': plugin(
        'b',
        `runtime:\n  schedule: { stage: ${readerStage} }\n  io:\n    inputs:\n      facts: { from: { contract: facts@1 }, cardinality: many }`,
      ),
    });
    expect(() => new RuntimeCatalog(plugins(files('post-turn', 'pre-turn')).plugins)).not.toThrow();
    for (const [reader, source, contract] of [
      ['pre-turn', 'post-turn', 'facts@1'],
      ['narrative', 'narrative', 'facts@1'],
      ['post-turn', 'pre-turn', 'other@1'],
    ]) {
      const { dir, message } = catalogError(files(reader, source, contract));
      expect(message).toBe(
        `${join(dir, 'b', 'PLUGIN.md')}: runtime.io.inputs.facts.from.contract: plugin b: runtime b reads contract "facts@1", which no runtime of an earlier stage declares in output.contract`,
      );
    }
  });

  it('agent.tools names only framework tools and tools a loaded plugin declares in contributes.tools (another plugin counts)', () => {
    const contributes = 'contributes:\n  tools:\n    - { name: record-fact, description: Records a fact., parameters: { type: object } }\n';
    const known = 'runtime-done, emit-event, world-dimension-get, world-dimension-list, get-character, record-fact';
    const { plugins: loaded } = plugins({
      'ledger/PLUGIN.md': plugin('ledger', `${contributes}runtime:\n  outputKind: none\n  agent: { tools: [record-fact, runtime-done, get-character] }`),
      'ledger/runtimes/clerk/RUNTIME.md': runtime('clerk', 'outputKind: none\nagent: { tools: [emit-event, world-dimension-get, world-dimension-list] }'),
      'other/PLUGIN.md': plugin('other', 'runtime:\n  outputKind: none\n  agent: { tools: [record-fact] }'),
    });
    expect(() => new RuntimeCatalog(loaded)).not.toThrow();

    const inline = catalogError({
      'ledger/PLUGIN.md': plugin('ledger', `${contributes}runtime:\n  outputKind: none\n  agent: { tools: [runtime-done, record-fcat] }`),
    });
    expect(inline.message).toBe(
      `${join(inline.dir, 'ledger', 'PLUGIN.md')}: runtime.agent.tools.1: plugin ledger: runtime ledger declares tool "record-fcat", which is neither a framework tool nor a tool any loaded plugin declares in contributes.tools (known tools: ${known})`,
    );
    const child = catalogError({
      'ledger/PLUGIN.md': plugin('ledger', contributes),
      'ledger/runtimes/clerk/RUNTIME.md': runtime('clerk', 'outputKind: none\nagent: { tools: [get-charcter, record-fact] }'),
    });
    expect(child.message).toBe(
      `${join(child.dir, 'ledger', 'runtimes', 'clerk', 'RUNTIME.md')}: agent.tools.0: plugin ledger: runtime clerk declares tool "get-charcter", which is neither a framework tool nor a tool any loaded plugin declares in contributes.tools (known tools: ${known})`,
    );
  });

  it("a session's view: one per set of plugin ids, the same list answering at once; no list: the plugins enabled by default", () => {
    const { plugins: loaded } = plugins({
      'keeper/PLUGIN.md': plugin('keeper', 'enabledByDefault: false\nruntime:\n  schedule: { stage: pre-turn }\n  type: function'),
      'narrator/PLUGIN.md': plugin('narrator', 'runtime:\n  schedule: { stage: narrative }\n  outputKind: story'),
    });
    const catalog = new RuntimeCatalog(loaded);
    const list = ['narrator', 'gone'];
    const view = catalog.forSession(list);
    expect(view.all().map((r) => r.fullId)).toEqual(['narrator/narrator']);
    expect(view.generation).toBe(catalog.generation);
    // asked every turn with the session's one list: the same view
    expect(catalog.forSession(list)).toBe(view);
    // another array of the same ids: the same view too
    expect(catalog.forSession(['narrator'])).toBe(view);
    expect(catalog.forSession(null)).toBe(view);
    expect(catalog.forSession(undefined)).toBe(view);
    expect(catalog.forSession(['keeper', 'narrator'])).toBe(catalog);
    expect(
      catalog
        .forSession(['keeper'])
        .all()
        .map((r) => r.fullId),
    ).toEqual(['keeper/keeper']);
  });

  it('a stage the turn does not have is still refused', () => {
    const { plugins: loaded } = plugins({ 'a/PLUGIN.md': plugin('a', 'runtime:\n  schedule: { stage: epilogue }') });
    expect(() => new RuntimeCatalog(loaded)).toThrow(UnknownStageError);
  });
});

describe('a runtime request from the catalog', () => {
  const providers = unsentProviders({
    story: { protocol: 'openai-chat', model: 'story-model', contextWindow: 128_000, maxOutputTokens: 1024, cacheBoundaries: true },
    fast: { protocol: 'openai-chat', model: 'fast-model', contextWindow: 128_000, maxOutputTokens: 512, cacheBoundaries: true },
  });
  const { plugins: loaded } = plugins({
    'p/PLUGIN.md': plugin('p'),
    'p/runtimes/teller/RUNTIME.md': runtime('teller', 'schedule: { stage: narrative }\noutputKind: story\noutput: { contract: narrative-engine@2 }'),
    'p/runtimes/clerk/RUNTIME.md': runtime('clerk', 'schedule: { stage: post-turn }\noutputKind: structured\nagent: { slot: fast, reasoning: false }'),
    'p/runtimes/count/RUNTIME.md': runtime('count', 'type: function\nschedule: { stage: pre-turn }'),
  });
  const catalog = new RuntimeCatalog(loaded);
  const request = (runtimeId: string) => buildRuntimeRequest(bareRequestInputs(catalog, catalog.find('p', runtimeId)!), providers);

  it('reads the slot from agent.slot, the body from RUNTIME.md; story runtimes stream, others do not', async () => {
    const teller = await request('teller');
    expect(teller.slot.model).toBe('story-model');
    expect(teller.body.stream).toBe(true);
    expect(teller.context.systemPrompt).toContain('teller runtime body.');
    expect(teller.context.systemPrompt).not.toContain('p body.');
    const clerk = await request('clerk');
    expect(clerk.slot.model).toBe('fast-model');
    expect(clerk.body.stream).toBeUndefined();
  });

  it('a function runtime has no model request', async () => {
    await expect(request('count')).rejects.toThrow(FunctionRuntimeHasNoModelCallError);
  });
});
