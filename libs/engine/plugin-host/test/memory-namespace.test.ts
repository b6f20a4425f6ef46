import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Reply, ScriptedCall } from '../../../emulator';
import type { PluginDataReader, PluginDataStore } from '../../../events';
import { TurnRunner } from '../../turn/turn-runner';
import { eventually, type TurnHarness, turnHarness } from '../../turn/test/harness';

const PLUGINS = join(__dirname, '..', '..', '..', '..', 'plugins');
/** Where the memory plugin's own code lives: a read whose call stack passes through it is the plugin's. */
const MEMORY_CODE = join('plugins', 'memory', 'server');
const RUMOUR = 'MARKER-RUMOUR the bells of Emberback ring backwards at dusk.';

/** Every read of the plugin data store: whose data, which call, and whether the memory plugin's code made it. */
interface Read {
  pluginId: string;
  call: string;
  namespace: string;
  byMemoryCode: boolean;
}

/** The keeper keeps one rumour; every other call gets the emulator's own reply. */
const script = (call: ScriptedCall): Reply | undefined =>
  call.tools.some((t) => t.name === 'memory-append') ? { kind: 'tool', name: 'memory-append', args: { block: 'village-rumours', line: RUMOUR } } : undefined;

/**
 * Spec §3: "The kernel does not read the private namespace of any memory plugin, and it does not
 * provide segments specific to Core Memory, Working Memory, or persona." The real store, watched:
 * each read records its scope and whether its call stack passes through the memory plugin's code.
 */
describe('the kernel never reads a memory plugin’s namespace (spec §3), in real turns on Emberback', () => {
  let h: TurnHarness;
  const reads: Read[] = [];
  let stackLimit: number;
  beforeAll(async () => {
    stackLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 200;
    h = await turnHarness({
      pluginsDir: PLUGINS,
      pluginFilter: (p) => ['narrator', 'memory'].includes(p.manifest.id),
      script,
      handlers: (deps) => {
        const store = deps.pluginData;
        const watched = (scope: Parameters<PluginDataStore['scope']>[0]): PluginDataReader => {
          const reader = store.scope(scope);
          const seen = (call: string, namespace: string) =>
            reads.push({ pluginId: scope.pluginId, call, namespace, byMemoryCode: (new Error().stack ?? '').includes(MEMORY_CODE) });
          return {
            get: (namespace, key) => (seen('get', namespace), reader.get(namespace, key)),
            list: (namespace, options) => (seen('list', namespace), reader.list(namespace, options)),
            selfData: (namespace, options) => (seen('selfData', namespace), reader.selfData(namespace, options)),
          };
        };
        deps.pluginData = { scope: watched } as unknown as PluginDataStore;
        return new TurnRunner(deps);
      },
    });
  });
  afterAll(async () => {
    Error.stackTraceLimit = stackLimit;
    await h?.close();
  });

  async function play(plugins: string[], texts: string[]) {
    const session = { tenantId: randomUUID(), sessionId: randomUUID() };
    await h.deps.store.append({
      ...session,
      streamId: session.sessionId,
      expectedVersion: 0,
      events: [{ type: 'session.created@1', data: { sessionId: session.sessionId, worldId: 'emberback', locale: 'en', plugins } }],
    });
    const from = reads.length;
    for (const text of texts) {
      const job = await h.input(session, text);
      await h.queue.enqueue(job);
      const status = async () => (await h.deps.readModels.execution(job.tenantId, job.executionId))?.status ?? '';
      await eventually(async () => ['committed', 'failed'].includes(await status()), 'the turn ended');
      expect(await status()).toBe('committed');
    }
    const events = await h.events(session.sessionId);
    const narrator = events.flatMap((e) => (e.type === 'llm.calling@1' && e.data.runtimeId === 'narrator' ? [e.data.body] : []));
    return { reads: reads.slice(from), events, narrator };
  }

  it('with the memory plugin: its rows are read by its own code only, and reach the story only through its own segment', async () => {
    const { reads: seen, events, narrator } = await play(['memory', 'narrator'], ['I ask Mira about the bells.', 'I walk to the watchtower.']);
    const memoryReads = seen.filter((r) => r.pluginId === 'memory');
    expect(memoryReads.length).toBeGreaterThan(0);
    expect(memoryReads.filter((r) => !r.byMemoryCode)).toEqual([]);
    // turn 2: the rumour the keeper kept in turn 1 is in the narrator's request once, inside memory's own segment
    expect(narrator[1].split('MARKER-RUMOUR')).toHaveLength(2);
    const segments = events.flatMap((e) =>
      e.type === 'extension.resolved@1' && e.data.point === 'prompt.segment@1' ? [{ pluginId: e.data.pluginId, result: e.data.result }] : [],
    );
    expect(segments.filter((s) => s.result.includes('MARKER-RUMOUR')).map((s) => s.pluginId)).toEqual(['memory']);
  });

  it('without the memory plugin: nothing reads its namespace, and the story gets no memory segment of the kernel’s', async () => {
    const { reads: seen, narrator } = await play(['narrator'], ['I ask Mira about the bells.', 'I walk to the watchtower.']);
    expect(seen.filter((r) => r.pluginId === 'memory')).toEqual([]);
    for (const body of narrator) expect(body).not.toMatch(/memory|core-memory|working-memory|persona/i);
  });
});
