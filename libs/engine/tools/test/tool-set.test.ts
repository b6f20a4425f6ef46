import { join } from 'node:path';
import { loadPlugins, type LoadedWorld, WorldManifest } from '../../../plugins-sdk';
import type { ExecutionJournal } from '../../journal/journal';
import { ExtensionRegistry, PluginHost, pluginSdk } from '../../plugin-host';
import { RuntimeCatalog } from '../../catalog/runtime-catalog';
import { createToolSet, toolSetOf, type ToolOutcome, type ToolRunContext } from '..';

const FIXTURES = join(__dirname, '..', '..', '..', '..', 'test', 'fixtures', 'tool-plugins');
/** The framework's staged notice (en): a call's emissions and media take effect when the turn ends. */
const STAGED = 'Staged: what this call emitted or generated takes effect when this turn ends, not before.';

const world: LoadedWorld = {
  ...WorldManifest.parse({
    id: 'harbor',
    name: 'Harbor',
    characterSchema: { properties: { might: { type: 'integer', minimum: 0, maximum: 5 } } },
    characters: [
      { id: 'mira', name: 'Mira Vell', aliases: ['The Lamplighter'], description: 'Keeps the lights.', fields: { might: 2, since: '2026-01-02T03:04:05Z' } },
      { id: 'oren', name: 'Oren', description: 'A sailor.' },
    ],
    dimensions: {
      weather: { name: 'Weather', value: 'fog' },
      factions: {
        name: 'Factions',
        description: 'Who holds the harbor.',
        value: { guilds: [{ name: 'Tide Guild' }, { name: 'Salt Guild' }], crown: { seat: 'the keep' } },
        version: 3,
      },
      ledger: { name: 'Ledger', value: Array.from({ length: 120 }, (_, i) => `entry ${i}`) },
    },
  }),
  lore: '',
  sharedLore: '',
};

const memoryData = () => {
  const rows = new Map<string, unknown>([['["facts","old"]', { fact: 'old' }]]);
  return {
    scope: () => ({
      get: async (ns: string, key: string) => rows.get(JSON.stringify([ns, key])) as never,
      list: async () => [],
      selfData: async (namespace: string) => ({ namespace, rows: [], totalRows: 0 }),
    }),
  };
};

describe('the tool set (issue 11 part 2)', () => {
  let catalog: RuntimeCatalog;
  const tools = createToolSet({ pluginData: memoryData() });
  beforeAll(async () => {
    const plugins = loadPlugins(FIXTURES);
    catalog = new RuntimeCatalog(plugins, undefined, await PluginHost.load(plugins, { handlerTimeoutMs: 200 }));
  });

  const context = (runtimeId: string, extra: Partial<ToolRunContext> = {}): ToolRunContext => ({
    catalog,
    runtime: catalog.find('ledger', runtimeId)!,
    execution: {} as ExecutionJournal,
    scope: { tenantId: 't1', sessionId: 's1', turnNumber: 2, locale: 'en', world },
    inputSlots: [],
    emittedTopics: new Set(),
    ...extra,
  });
  const call = (name: string, args: Record<string, unknown> = {}, runtimeId = 'keeper', extra: Partial<ToolRunContext> = {}) =>
    tools.execute({ id: 'c1', name, arguments: args }, context(runtimeId, extra));
  const body = (outcome: ToolOutcome) =>
    JSON.parse(outcome.content) as { ok: boolean; data?: Record<string, unknown>; error?: { code: string; message: string } };

  describe('authorization', () => {
    it('defines the framework tools first, then the declared plugin tools, in a stable order', () => {
      expect(tools.definitions(catalog.find('ledger', 'keeper')!, catalog).map((d) => d.name)).toEqual([
        'runtime-done',
        'emit-event',
        'world-dimension-get',
        'world-dimension-list',
        'get-character',
        'record-fact',
        'explode',
        'stall',
        'read-inputs',
        'emit-wrong',
        'not-json',
      ]);
      // a story runtime gets only what it declares; a runtime without agent.tools still ends with runtime-done
      expect(tools.definitions(catalog.find('ledger', 'teller')!, catalog).map((d) => d.name)).toEqual(['get-character']);
      expect(tools.definitions(catalog.find('ledger', 'quiet')!, catalog).map((d) => d.name)).toEqual(['runtime-done']);
    });

    it('tool definitions are English', () => {
      const text = JSON.stringify(tools.definitions(catalog.find('ledger', 'keeper')!, catalog));
      expect(text).not.toMatch(/[\u3040-\u30ff\u4e00-\u9fff]/);
    });

    it('a tool the runtime does not declare answers TOOL_NOT_AUTHORIZED as JSON, without running it', async () => {
      const outcome = await call('record-fact', { fact: 'x' }, 'teller');
      expect(outcome).toMatchObject({ ok: false, errorCode: 'TOOL_NOT_AUTHORIZED', changes: [], emissions: [] });
      expect(body(outcome)).toEqual({
        ok: false,
        error: { code: 'TOOL_NOT_AUTHORIZED', message: 'this runtime may not call "record-fact": its tools are get-character' },
      });
    });

    it('a name that is no tool answers TOOL_UNKNOWN', async () => {
      const outcome = await call('summon-dragon');
      expect(outcome.errorCode).toBe('TOOL_UNKNOWN');
      expect(body(outcome).error?.message).toMatch(/^there is no tool "summon-dragon": the tools are runtime-done, emit-event, /);
    });
  });

  describe('arguments', () => {
    it("arguments that fail the tool's JSON schema answer INVALID_ARGUMENTS with ajv's messages", async () => {
      const outcome = await call('record-fact', { weight: 0, colour: 'red' });
      expect(outcome.errorCode).toBe('INVALID_ARGUMENTS');
      expect(body(outcome).error?.message).toBe(
        'the arguments of "record-fact" do not match its parameters: (root): must have required property \'fact\'; (root): must NOT have additional properties (colour); /weight: must be >= 1',
      );
      expect(outcome.changes).toEqual([]);
    });

    it('arguments that are not an object answer INVALID_ARGUMENTS', async () => {
      const outcome = await tools.execute({ id: 'c', name: 'record-fact', arguments: [] as never }, context('keeper'));
      expect(outcome.errorCode).toBe('INVALID_ARGUMENTS');
    });
  });

  describe('runtime-done', () => {
    it('is accepted from a runtime without an output schema: the outcome is done', async () => {
      const outcome = await call('runtime-done', {}, 'quiet');
      expect(outcome).toMatchObject({ ok: true, done: true });
      expect(body(outcome)).toEqual({ ok: true, data: { done: true } });
    });

    it('is not defined under an output schema, and a call is refused with RUNTIME_DONE_NOT_ALLOWED (even when declared)', async () => {
      const filer = catalog.find('ledger', 'filer')!;
      expect(tools.definitions(filer, catalog).map((d) => d.name)).toEqual(['record-fact']);
      const outcome = await call('runtime-done', {}, 'filer');
      expect(outcome).toMatchObject({ ok: false, errorCode: 'RUNTIME_DONE_NOT_ALLOWED' });
      expect(outcome.done).toBeUndefined();
    });
  });

  describe('emit-event', () => {
    it('lists the topics and their payload shapes; a plain object where references or an unreadable schema force one', () => {
      const emit = tools.definitions(catalog.find('ledger', 'keeper')!, catalog).find((d) => d.name === 'emit-event')!;
      const parameters = emit.parameters as {
        properties: { topic: { enum: string[] } };
        anyOf: { properties: { topic: { const: string }; payload: unknown } }[];
      };
      expect(parameters.properties.topic.enum).toEqual(['fact.recorded', 'ledger.audited', 'ledger.lost']);
      expect(parameters.anyOf.map((v) => [v.properties.topic.const, v.properties.payload])).toEqual([
        ['fact.recorded', { type: 'object', properties: { fact: { type: 'string' } }, required: ['fact'], additionalProperties: false }],
        ['ledger.audited', { type: 'object', description: 'See this topic in <available-events> for its payload schema.' }],
        ['ledger.lost', { type: 'object', description: 'Payload schema unavailable.' }],
      ]);
    });

    it('a valid payload is emitted once: the outcome carries the emission', async () => {
      const outcome = await call('emit-event', { topic: 'fact.recorded', payload: { fact: 'the tide turned' } });
      expect(outcome).toMatchObject({ ok: true, emissions: [{ topic: 'fact.recorded', payload: { fact: 'the tide turned' } }], changes: [] });
      // the event takes effect after the turn: the framework's staged notice, in the instruction language (spec §6)
      expect(body(outcome)).toEqual({ ok: true, data: { emitted: 'fact.recorded' }, staged: STAGED });
    });

    it('an unknown topic answers EVENT_INVALID', async () => {
      const outcome = await call('emit-event', { topic: 'dragon.seen', payload: {} });
      expect(outcome).toMatchObject({ ok: false, errorCode: 'EVENT_INVALID', emissions: [] });
      expect(body(outcome).error?.message).toBe('unknown topic "dragon.seen": the topics are "fact.recorded", "ledger.audited", "ledger.lost"');
    });

    it('a payload failing its schema answers EVENT_INVALID with the schema errors (references resolved)', async () => {
      const outcome = await call('emit-event', { topic: 'fact.recorded', payload: { fact: 7 } });
      expect(outcome.errorCode).toBe('EVENT_INVALID');
      expect(body(outcome).error?.message).toBe('the payload of "fact.recorded" does not match its schema: /fact: must be string');
      const referenced = await call('emit-event', { topic: 'ledger.audited', payload: { entries: [{ fact: 'a' }, {}] } });
      expect(body(referenced).error?.message).toBe(
        'the payload of "ledger.audited" does not match its schema: /entries/1: must have required property \'fact\'',
      );
      expect((await call('emit-event', { topic: 'ledger.audited', payload: { entries: [{ fact: 'a' }] } })).ok).toBe(true);
    });

    it('a topic whose schema cannot be read takes any JSON payload', async () => {
      expect((await call('emit-event', { topic: 'ledger.lost', payload: { where: 'at sea' } })).ok).toBe(true);
    });

    it('a second emission of a topic in the same turn answers EVENT_ALREADY_EMITTED', async () => {
      const outcome = await call('emit-event', { topic: 'fact.recorded', payload: { fact: 'again' } }, 'keeper', { emittedTopics: new Set(['fact.recorded']) });
      expect(outcome).toMatchObject({ ok: false, errorCode: 'EVENT_ALREADY_EMITTED', emissions: [] });
    });
  });

  describe('world dimensions', () => {
    it('world-dimension-get by id: the frozen value with its name and version', async () => {
      expect(body(await call('world-dimension-get', { id: 'weather' })).data).toEqual({ id: 'weather', name: 'Weather', version: 1, value: 'fog' });
    });

    it('world-dimension-get by JSON pointer into the value', async () => {
      expect(body(await call('world-dimension-get', { id: 'factions', path: '/guilds/1/name' })).data).toEqual({
        id: 'factions',
        name: 'Factions',
        version: 3,
        path: '/guilds/1/name',
        value: 'Salt Guild',
      });
      const missing = await call('world-dimension-get', { id: 'factions', path: '/guilds/7' });
      expect(body(missing).error).toEqual({ code: 'NOT_FOUND', message: 'dimension "factions" has no value at /guilds/7 (path /guilds/7)' });
      expect((await call('world-dimension-get', { id: 'factions', path: 'guilds' })).errorCode).toBe('INVALID_ARGUMENTS');
    });

    it('world-dimension-get pages a long list; an unknown id answers NOT_FOUND naming the ids', async () => {
      const first = body(await call('world-dimension-get', { id: 'ledger' })).data!;
      expect(first.page).toEqual({ offset: 0, total: 120, nextOffset: 50 });
      expect((first.value as string[]).slice(0, 2)).toEqual(['entry 0', 'entry 1']);
      const last = body(await call('world-dimension-get', { id: 'ledger', offset: 100, limit: 50 })).data!;
      expect(last.page).toEqual({ offset: 100, total: 120 });
      expect(last.value).toHaveLength(20);
      expect(body(await call('world-dimension-get', { id: 'tides' })).error).toEqual({
        code: 'NOT_FOUND',
        message: 'no world dimension "tides": the ids are factions, ledger, weather',
      });
    });

    it("reads the snapshot the request saw: session.world-context@1 dimensions through the step's resolver", async () => {
      const registry = new ExtensionRegistry();
      registry.apiFor('tides', pluginSdk).provideExtension('session.world-context@1', 'dims', { handler: () => ({}) });
      const resolved: unknown[] = [];
      const resolver = {
        resolve: async (entry: unknown, input: unknown) => {
          resolved.push(input);
          return { dimensions: { tide: { name: 'Tide', value: { height: 'high' }, version: 7 } } };
        },
      };
      const outcome = await call('world-dimension-get', { id: 'tide', path: '/height' }, 'keeper', { plugins: { registry, resolver } });
      expect(body(outcome).data).toEqual({ id: 'tide', name: 'Tide', version: 7, path: '/height', value: 'high' });
      expect(resolved).toEqual([{}]);
      expect(body(await call('world-dimension-list', {}, 'keeper', { plugins: { registry, resolver } })).data!.page).toEqual({ offset: 0, total: 4 });
    });

    it('world-dimension-list pages the dimensions by id, without values', async () => {
      expect(body(await call('world-dimension-list', { limit: 2 })).data).toEqual({
        dimensions: [
          { id: 'factions', name: 'Factions', description: 'Who holds the harbor.', version: 3 },
          { id: 'ledger', name: 'Ledger', version: 1 },
        ],
        page: { offset: 0, total: 3, nextOffset: 2 },
      });
      expect(body(await call('world-dimension-list', { offset: 2 })).data).toEqual({
        dimensions: [{ id: 'weather', name: 'Weather', version: 1 }],
        page: { offset: 2, total: 3 },
      });
    });
  });

  describe('get-character', () => {
    it('finds a character by alias, case-insensitively: its model-facing sheet (no ISO times, ranges shown)', async () => {
      expect(body(await call('get-character', { name: '  the LAMPLIGHTER ' })).data).toEqual({
        id: 'mira',
        name: 'Mira Vell',
        aliases: ['The Lamplighter'],
        type: 'npc',
        description: 'Keeps the lights.',
        fields: { might: '2/5' },
      });
      expect(body(await call('get-character', { name: 'oren' })).data).toMatchObject({ name: 'Oren' });
    });

    it('an unknown name answers NOT_FOUND', async () => {
      expect(body(await call('get-character', { name: 'Nobody' })).error).toEqual({ code: 'NOT_FOUND', message: 'no character named "Nobody"' });
    });

    it('reads the characters the session.world-context@1 providers publish, as the step’s request saw them (a created one included)', async () => {
      const registry = new ExtensionRegistry();
      registry.apiFor('keeper', pluginSdk).provideExtension('session.world-context@1', 'characters', { handler: () => ({}) });
      const published = {
        characters: [
          { id: 'mira', name: 'Mira Vell', type: 'npc', description: 'Keeps the lights.', fields: { might: 4 } },
          { id: 'bren', name: 'Old Bren', description: 'A lantern-keeper.', fields: { might: 1 } },
        ],
      };
      const asked: unknown[] = [];
      // the step's resolver: a recorded result, no handler run
      const plugins = { registry, resolver: { resolve: async (entry: unknown, input: unknown) => (asked.push([entry, input]), published) } };
      const extra = { plugins } as Partial<ToolRunContext>;
      // a world character: the published fields, its aliases kept from the world
      expect(body(await call('get-character', { name: 'the lamplighter' }, 'keeper', extra)).data).toEqual({
        id: 'mira',
        name: 'Mira Vell',
        aliases: ['The Lamplighter'],
        type: 'npc',
        description: 'Keeps the lights.',
        fields: { might: '4/5' },
      });
      expect(body(await call('get-character', { name: 'old bren' }, 'keeper', extra)).data).toEqual({
        id: 'bren',
        name: 'Old Bren',
        type: 'npc',
        description: 'A lantern-keeper.',
        fields: { might: '1/5' },
      });
      expect(asked).toEqual([
        [registry.providers('session.world-context@1')[0], {}],
        [registry.providers('session.world-context@1')[0], {}],
      ]);
    });

    it('finds and returns a published character whose text is emoji with ZWJ, CJK and RTL, code point for code point', async () => {
      const registry = new ExtensionRegistry();
      registry.apiFor('keeper', pluginSdk).provideExtension('session.world-context@1', 'characters', { handler: () => ({}) });
      const name = '🧑🏽‍🚀 宇航员 رائد';
      const description = 'Family 👩‍👩‍👧‍👦, 墨と地図, ‏עברית‎ and مرحبا — 𝄞';
      const published = { characters: [{ id: 'astro', name, aliases: ['‏עברית‎ 🚀'], description }] };
      const extra = { plugins: { registry, resolver: { resolve: async () => published } } } as Partial<ToolRunContext>;
      const sheet = { id: 'astro', name, aliases: ['‏עברית‎ 🚀'], type: 'npc', description, fields: {} };
      expect(body(await call('get-character', { name: ` ${name} ` }, 'keeper', extra)).data).toEqual(sheet);
      expect(body(await call('get-character', { name: '‏עברית‎ 🚀' }, 'keeper', extra)).data).toEqual(sheet);
    });
  });

  describe('plugin tools (api.registerTool)', () => {
    it('a result with no emission and no media has no staged notice', async () => {
      const outcome = await call('read-inputs', {});
      expect(outcome.ok).toBe(true);
      expect(body(outcome)).not.toHaveProperty('staged');
    });

    it('a tool writes its plugin data (reads see its own writes) and emits: both come back with the result', async () => {
      const outcome = await call('record-fact', { fact: 'the lamp is lit', weight: 2 });
      expect(body(outcome)).toEqual({ ok: true, data: { recorded: 'the lamp is lit', seen: { fact: 'the lamp is lit', weight: 2 } }, staged: STAGED });
      expect(outcome.changes).toEqual([{ namespace: 'facts', key: 'the lamp is lit', value: { fact: 'the lamp is lit', weight: 2 } }]);
      expect(outcome.emissions).toEqual([{ topic: 'fact.recorded', payload: { fact: 'the lamp is lit' } }]);
    });

    it('ctx.inputSlots carry the original values and resultId; ctx.runtime names the caller', async () => {
      const inputSlots = [
        { binding: 'story', cardinality: 'one' as const, value: 'The lamp was lit.', source: { pluginId: 'narrator', runtimeId: 'narrator', resultId: 'r-1' } },
      ];
      expect(body(await call('read-inputs', {}, 'keeper', { inputSlots })).data).toEqual({
        inputSlots,
        runtime: { pluginId: 'ledger', runtimeId: 'keeper' },
        locale: 'en',
      });
    });

    it('a tool that throws answers TOOL_FAILED with its message; its writes and emissions are dropped', async () => {
      const outcome = await call('explode');
      expect(outcome).toMatchObject({ ok: false, errorCode: 'TOOL_FAILED', changes: [], emissions: [] });
      expect(body(outcome).error?.message).toBe('tool "explode" failed: the ledger caught fire');
    });

    it('a tool that does not answer in time answers TOOL_TIMEOUT; its writes are dropped', async () => {
      const outcome = await call('stall');
      expect(outcome).toMatchObject({ ok: false, errorCode: 'TOOL_TIMEOUT', changes: [] });
      expect(body(outcome).error?.message).toBe('tool "stall" did not answer within 200 ms');
    });

    it('ctx.emit with a payload failing its schema fails the tool', async () => {
      const outcome = await call('emit-wrong');
      expect(outcome).toMatchObject({ ok: false, errorCode: 'TOOL_FAILED', emissions: [] });
      expect(body(outcome).error?.message).toBe(
        'tool "emit-wrong" failed: ctx.emit(fact.recorded): the payload does not match its schema: /fact: must be string',
      );
    });

    it('a result that is not JSON answers TOOL_FAILED', async () => {
      expect(body(await call('not-json')).error).toEqual({ code: 'TOOL_FAILED', message: 'tool "not-json" returned a value that is not JSON' });
    });
  });

  describe('the tool set of a worker', () => {
    it('is one per plugin data store (issue 33: not rebuilt for every agent loop and compaction barrier), and deps.tools when given', () => {
      const pluginData = memoryData();
      const set = toolSetOf({ pluginData });
      expect(toolSetOf({ pluginData })).toBe(set);
      expect(toolSetOf({ pluginData: memoryData() })).not.toBe(set);
      expect(toolSetOf({ pluginData, tools })).toBe(tools);
      // the same definitions as a set of its own
      const keeper = catalog.find('ledger', 'keeper')!;
      expect(set.definitions(keeper, catalog)).toEqual(createToolSet({ pluginData }).definitions(keeper, catalog));
    });

    it('sends one frozen copy of each definition per catalog (issue 33: no copy per request); no request can change the next one', () => {
      const set = createToolSet({ pluginData: memoryData() });
      const keeper = catalog.find('ledger', 'keeper')!;
      const first = set.definitions(keeper, catalog);
      const again = set.definitions(keeper, catalog);
      expect(again).not.toBe(first);
      first.forEach((d, i) => expect(again[i]).toBe(d));
      const emit = first.find((d) => d.name === 'emit-event')!;
      expect(Object.isFrozen(emit) && Object.isFrozen(emit.parameters)).toBe(true);
      const before = JSON.stringify(again);
      expect(() => {
        (emit.parameters as { properties: Record<string, unknown> }).properties.topic = { type: 'string' };
      }).toThrow(TypeError);
      expect(() => first.push({ name: 'x', description: '', parameters: {} })).not.toThrow();
      expect(JSON.stringify(set.definitions(keeper, catalog))).toBe(before);
    });
  });
});
