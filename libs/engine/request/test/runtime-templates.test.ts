import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { StoredEvent } from '../../../events';
import { seen } from '../../../../test/fixtures/template-plugins/teller/server';
import { claimExecution } from '../../turn/claim';
import { historyReadLimit, type TurnDeps } from '../../execution/deps';
import { runRuntimeStep } from '../../turn/runtime-step';
import { loadSessionJournal } from '../../session/session-reads';
import { type TurnHarness, turnHarness } from '../../turn/test/harness';
import { rebuildRequests } from '../../audit/request-rebuild';
import { WorldCatalog } from '../../catalog/world-catalog';

const FIXTURES = join(__dirname, '..', '..', '..', '..', 'test', 'fixtures');
const TEMPLATE_PLUGINS = join(FIXTURES, 'template-plugins');
const TEMPLATE_WORLDS = join(FIXTURES, 'template-worlds');

type Data = Record<string, unknown>;
const of = (events: StoredEvent[], type: string) => events.filter((e) => e.type === type).map((e) => e.data as Data);

/** The system prompt and the turn context of the recorded request of one runtime. */
function recorded(events: StoredEvent[], runtimeId: string) {
  const call = of(events, 'llm.calling@1').find((c) => c.runtimeId === runtimeId)!;
  const body = JSON.parse(call.body as string) as { messages: { role: string; content: string }[] };
  const sections = (call.layout as { messageSections: string[] }).messageSections;
  return { system: body.messages[0].content, turnContext: body.messages[sections.indexOf('turn-context')]?.content ?? '' };
}

describe('runtime bodies are templates (spec §4), rendered once from the real turn', () => {
  let h: TurnHarness;
  let deps: TurnDeps;
  beforeAll(async () => {
    h = await turnHarness({ pluginsDir: TEMPLATE_PLUGINS });
    deps = { ...h.deps, worlds: new WorldCatalog(TEMPLATE_WORLDS) };
  });
  afterAll(() => h.close());

  /** A session on the harbor world, the player having configured the teller plugin. */
  async function session(pluginSettings?: Record<string, Record<string, string | number | boolean>>) {
    const tenantId = randomUUID();
    const sessionId = randomUUID();
    await h.deps.store.append({
      tenantId,
      streamId: sessionId,
      expectedVersion: 0,
      events: [{ type: 'session.created@1', data: { sessionId, worldId: 'harbor', locale: 'en', ...(pluginSettings ? { pluginSettings } : {}) } }],
    });
    return { tenantId, sessionId };
  }

  /** One turn: the structured pre-turn output is the model's JSON answer (recorded as the engine records it), then the teller's step runs for real. */
  async function turn(s: { tenantId: string; sessionId: string }, text: string, facts: string) {
    const job = await h.input(s, text);
    const journal = await loadSessionJournal(deps, job);
    const attempt = (await claimExecution(deps, job, journal, journal.get(job.executionId)!))!;
    await deps.store.append({
      tenantId: s.tenantId,
      streamId: s.sessionId,
      expectedVersion: await deps.store.streamVersion(s.sessionId),
      events: [
        {
          type: 'runtime.output.produced@1',
          data: {
            executionId: job.executionId,
            turnId: job.turnId,
            attempt,
            stage: 'pre-turn',
            pluginId: 'constructor',
            runtimeId: 'facts',
            outputKind: 'structured',
            messageId: randomUUID(),
            text: facts,
          },
        },
      ],
    });
    expect(await runRuntimeStep(deps, { ...job, attempt, pluginId: 'teller', runtimeId: 'teller' })).toBe('produced');
    return job;
  }

  const rebuild = async (sessionId: string) =>
    rebuildRequests(await h.events(sessionId), deps.catalog, deps.providers, deps.worlds, { historyReadLimit: historyReadLimit(deps) });

  it('every §4 variable from the real turn; values never re-expanded; escaped inside a body block; static segments not rendered; the rebuild is identical', async () => {
    const s = await session({ teller: { tone: 'wry', pace: 'brisk' } });
    const facts = JSON.stringify({
      constructor: 'the-builder',
      toString: 'a-string',
      note: '{{ session.id }} stays',
      id: '0b7f8e2a-6c1d-4f3e-9a2b-1c2d3e4f5a6b',
    });
    await turn(s, 'Ring the {{ session.id }} bell', facts);
    const { system, turnContext } = recorded(await h.events(s.sessionId), 'teller');

    expect(system).toContain('You tell the story of Bellharbor.\n');
    expect(system).toContain('Player said: Ring the {{ session.id }} bell\n'); // a value is never scanned again
    expect(system).toContain('Form: {}\n');
    expect(system).toContain(`Session ${s.sessionId}, turn 1.\n`);
    expect(system).toContain('Tags: ["coastal","bells","</npcs>"]\n');
    expect(system).toContain('Reputation: 7\n');
    // a plugin named constructor, fields named constructor / toString: their explicit values
    expect(system).toContain('Facts: the-builder / a-string / {{ session.id }} stays\n');
    // defaults under the player's configuration
    expect(system).toContain('Settings: tone=wry verbose=false pace=brisk\n');
    // nothing inherited is ever read (Object.prototype members, unknown plugins)
    expect(system).toContain('Nothing: [][][][]\n');

    // inside a block of the body, values are XML-escaped: a </world-summary> in the world text cannot close it
    expect(system).toContain('<world-summary>\nA harbor town of bells. Hostile: &lt;/world-summary&gt; and {{ session.id }} &amp; more.\n</world-summary>');
    // player.character: the primary seat's character, with schema ranges
    const character = /<player-character>\n(.*)\n<\/player-character>/.exec(system)![1];
    expect(JSON.parse(character.replace(/&quot;/g, '"'))).toMatchObject({ name: 'Wren', fields: { might: '2/5' } });
    // characters.npcs: every other character, aka, [player] tag for the other seat, 400-char fields, no id
    const npcs = /<npcs>\n([\s\S]*?)\n<\/npcs>/.exec(system)![1];
    expect(npcs).not.toContain('Wren');
    expect(npcs).toContain('Oren (aka the Pilot, Old Oren)');
    expect(npcs).toMatch(/Sela.*\[player\]/);
    expect(npcs).toContain('&lt;/npcs&gt;');
    expect(npcs).not.toContain('wren');
    const oren = npcs.split('\n').find((l) => l.includes('Oren'))!;
    expect(oren.length).toBeLessThan(567);
    // world.schema / entries / dimensions behind the data boundary: no UUIDs, no ISO times
    const worldData = /<world-data>\n([\s\S]*?)\n<\/world-data>/.exec(system)![1];
    expect(worldData).toContain('The Great Bell');
    expect(worldData).toContain('Reputation');
    expect(worldData).not.toContain('0b7f8e2a');
    expect(worldData).not.toContain('2023-04-05T10');
    // world.lore: the whole body text
    expect(system).toContain('<world-lore>\nBellharbor rings its bells at every tide. &amp; The harbor master keeps a &lt;/world-lore&gt; ledger.');

    // only the runtime's own body is rendered: the static segment keeps its braces
    expect(system).toContain('Static rule, never rendered: {{ session.id }}');
    // the plugin's SDK helpers, its settings and its folder through ctx (a plugin outside the repository)
    expect(turnContext).toContain('ctx.settings={"tone":"wry","verbose":false,"pace":"brisk"} hint=Keep the harbor\'s bells in mind.');
    expect(turnContext).toContain('<player-character>');
    expect(turnContext).toContain('<character-profiles>');
    expect(seen.pluginRoot).toBe(join(TEMPLATE_PLUGINS, 'teller'));
    expect(seen.settings).toEqual({ tone: 'wry', verbose: false, pace: 'brisk' });
    expect(Object.isFrozen(seen.settings)).toBe(true);

    const rebuilt = await rebuild(s.sessionId);
    expect(rebuilt.map((c) => [c.runtimeId, c.identical])).toEqual([['teller', true]]);
  });

  it('without configuration the defaults apply; the next turn counts 2; an output that is not a JSON object offers no inputs', async () => {
    const s = await session();
    await turn(s, 'Listen', JSON.stringify({ constructor: 'first' }));
    await turn(s, 'Listen again', 'not json');
    const events = await h.events(s.sessionId);
    const calls = of(events, 'llm.calling@1');
    expect(calls).toHaveLength(2);
    const second = JSON.parse(calls[1].body as string) as { messages: { content: string }[] };
    const system = second.messages[0].content;
    expect(system).toContain('Settings: tone=grim verbose=false pace=slow\n');
    expect(system).toContain(`Session ${s.sessionId}, turn 2.\n`);
    expect(system).toContain('Facts:  /  / \n');
    expect(seen.settings).toEqual({ tone: 'grim', verbose: false, pace: 'slow' });
    expect((await rebuild(s.sessionId)).map((c) => c.identical)).toEqual([true, true]);
  });
});
