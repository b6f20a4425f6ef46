import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PlayClient } from '../../apps/play/play-client';
import { ProviderEmulator } from '../../libs/emulator';
import { engineInlineProjections, promptCacheKey } from '../../libs/engine';
import { readStoryLog, rebuildInline, type StoredEvent } from '../../libs/events';
import { startEmbedded, type EmbeddedEngine } from '../support/embedded';
import { SMALL_WINDOW_LLM } from '../support/small-window-llm';
import { INPUTS, REPLY_BOOK, steerScript } from '../support/steer-replies';
import {
  dumpTables,
  expectIdenticalRequest,
  foldStory,
  IdMap,
  pairCacheKeys,
  pairExecutionIds,
  recordedRequests,
  resolvedExtensions,
  sessionFolds,
  type SessionFolds,
  storyPathIds,
} from '../support/story-compare';
import { playTurns } from '../support/turns';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');

/** The plugins Emberback lists (worlds/emberback/WORLD.md): the session runs every one of them. */
const EMBERBACK_PLUGINS = [
  'affinity',
  'char-creator',
  'character-blueprint',
  'codex',
  'guide',
  'history-compaction',
  'memory',
  'narrator',
  'npc-graph',
  'world-init',
  'world-ir',
  'world-time',
];
/** The plugins that keep data every turn with the scripted replies (each bookkeeper writes, world-init publishes). */
const KEEPERS = ['affinity', 'char-creator', 'codex', 'memory', 'npc-graph', 'world-init', 'world-ir', 'world-time'];

type Of<T extends StoredEvent['type']> = Extract<StoredEvent, { type: T }>;
const ofType = <T extends StoredEvent['type']>(events: readonly StoredEvent[], type: T): Of<T>[] => events.filter((e): e is Of<T> => e.type === type);
/** The plugin data rows (`plugin/namespace/key`) of a session whose value matches `tag`, in each session's projection and its fold. */
function tagged(folds: SessionFolds, tag: RegExp): string[] {
  const rows = (data: SessionFolds['pluginData']) =>
    Object.entries(data).flatMap(([p, namespaces]) =>
      Object.entries(namespaces).flatMap(([ns, entries]) => entries.filter(([, v]) => tag.test(JSON.stringify(v))).map(([k]) => `${p}/${ns}/${k}`)),
    );
  return [...new Set([...rows(folds.pluginData), ...rows(folds.folded.pluginData)])].sort();
}

/** JSON-escaped, as a text appears inside a request body. */
const inBody = (text: string) => JSON.stringify(text).slice(1, -1);

/** The engine, emulator and tenant of a describe block, and the comparisons its tests make. */
/**
 * `onDisk`: the database in the data directory, for a test that lets a tool open it (default: in
 * memory, nothing to unpack on disk or delete).
 */
function steerSuite(options: { env?: Record<string, string>; storyPadding?: string; onDisk?: boolean } = {}) {
  // The server, these tests' requests and their rebuilds share one event loop, which a rebuild (PGlite in this
  // process) blocks for seconds. Past the server's keep-alive timeout (5 s by default) the next request goes out
  // on a socket idle in fetch's pool (fetch's own 4 s idle timer has not run either), and the server's overdue
  // timer closes that socket before the server reads the request: reset (and a second try may take another such
  // socket from the pool). A client in another process retires the socket after 4 s (the server's Keep-Alive hint
  // less a second) and never meets this. A keep-alive timeout no test reaches (the most the API takes) keeps them open.
  const env = { COVEL_HTTP_KEEP_ALIVE_TIMEOUT_MS: '600000', ...options.env };
  const s = {
    emulator: null as unknown as ProviderEmulator,
    covel: null as unknown as EmbeddedEngine,
    apiKey: '',
    tenantId: '',
    /** The reply set each input is answered with (`a` unless a test switches one). */
    variants: new Map<string, 'a' | 'b'>(),
    /** Every session the tests made (the replay part rebuilds and audits them all). */
    sessions: [] as string[],
    /** The engine again on the same data directory (after a tool had it to itself). */
    restart: async (dataDir: string) => {
      s.covel = await startEmbedded({ ...env, COVEL_EMULATOR_URL: s.emulator.url }, dataDir);
    },
  };
  beforeAll(async () => {
    s.emulator = await new ProviderEmulator({ script: steerScript((input) => s.variants.get(input) ?? 'a', { storyPadding: options.storyPadding }) }).start();
    s.covel = await startEmbedded({ ...env, COVEL_EMULATOR_URL: s.emulator.url }, undefined, { onDisk: options.onDisk ?? false });
    const made = await s.covel.engine.tenants.create('steer');
    [s.apiKey, s.tenantId] = [made.apiKey, made.tenant.id];
  }, 120_000);
  afterAll(async () => {
    await s.covel?.stop();
    await s.emulator?.stop();
  });

  const client = () => new PlayClient(s.covel.baseUrl, s.apiKey);
  const log = (sessionId: string) => s.covel.engine.store.readStream(sessionId);
  const folds = (sessionId: string) => sessionFolds(s.covel.engine, s.tenantId, sessionId);

  async function call(method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
    const init: RequestInit = {
      method,
      headers: {
        authorization: `Bearer ${s.apiKey}`,
        ...(method === 'GET' ? {} : { 'idempotency-key': randomUUID() }),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    };
    const res = await fetch(`${s.covel.baseUrl}${path}`, init);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  async function emberbackSession(): Promise<string> {
    const { id } = await client().createSession({ worldId: 'emberback' });
    s.sessions.push(id);
    return id;
  }

  const executionOf = (events: readonly StoredEvent[], turnId: string) =>
    ofType(events, 'player-input.submitted@1').find((e) => e.data.turnId === turnId)!.data.executionId;
  const commitVersion = (events: readonly StoredEvent[], turnId: string) =>
    ofType(events, 'turn.committed@1').find((e) => e.data.turnId === turnId)!.streamVersion;

  /**
   * Session A's ids mapped to B's: the session, the ids of their story paths side by side (each up to
   * a version of its own log, default all), and each runtime's prompt_cache_key (unless the two share
   * a root: a branch sends its root's key, compared as it is).
   */
  async function storyMap(
    a: { sessionId: string; throughVersion?: number },
    b: { sessionId: string; throughVersion?: number },
    options: { sameRoot?: boolean } = {},
  ) {
    const map = new IdMap().add('session', a.sessionId, b.sessionId);
    const [la, lb] = await Promise.all([a, b].map((side) => readStoryLog(s.covel.engine.database.db, { tenantId: s.tenantId, ...side })));
    map.addAll('story path', storyPathIds(la), storyPathIds(lb));
    if (!options.sameRoot) {
      const runtimes = ofType(await log(b.sessionId), 'llm.calling@1').map((e) => e.data);
      pairCacheKeys(map, a.sessionId, b.sessionId, runtimes);
    }
    return map;
  }

  /** The folds of A (ids mapped to B's) equal B's, plugin by plugin; each session's projections equal its in-memory folds. */
  function expectSameFolds(label: string, a: SessionFolds, b: SessionFolds, map: IdMap) {
    for (const f of [a, b]) {
      expect(f.folded).toEqual({ pluginData: f.pluginData, history: f.history, summaries: f.summaries });
      const counted = Object.entries(f.pluginData).flatMap(([p, namespaces]) => Object.entries(namespaces).map(([ns, rows]) => [`${p}/${ns}`, rows.length]));
      expect(f.namespaceCounts).toEqual(Object.fromEntries(counted));
    }
    // not vacuous: every bookkeeper has kept data
    expect(Object.keys(b.pluginData)).toEqual(expect.arrayContaining(KEEPERS));
    const mapped = map.normaliseJson(a);
    for (const plugin of new Set([...Object.keys(mapped.pluginData), ...Object.keys(b.pluginData)]))
      expect({ label, plugin, data: mapped.pluginData[plugin] }).toEqual({ label, plugin, data: b.pluginData[plugin] });
    expect({ label, namespaceCounts: mapped.namespaceCounts }).toEqual({ label, namespaceCounts: b.namespaceCounts });
    expect({ label, history: mapped.history }).toEqual({ label, history: b.history });
    expect({ label, summaries: mapped.summaries }).toEqual({ label, summaries: b.summaries });
  }

  /**
   * A turn of session A against one of B: every request (the narrator's first) byte-identical once
   * A's ids are B's, and what the requests saw of the plugins (extension results: dimensions, memory,
   * affinity, codex, graph, clock, characters) the same.
   */
  async function expectSameTurn(label: string, a: { sessionId: string; turnId: string }, b: { sessionId: string; turnId: string }, map: IdMap) {
    const [ea, eb] = [await log(a.sessionId), await log(b.sessionId)];
    const [xa, xb] = [executionOf(ea, a.turnId), executionOf(eb, b.turnId)];
    pairExecutionIds(map, { events: ea, executionId: xa }, { events: eb, executionId: xb });
    const [ra, rb] = [recordedRequests(ea, xa), recordedRequests(eb, xb)];
    expect([...ra.keys()].sort()).toEqual([...rb.keys()].sort());
    expect(ra.has('narrator/narrator#1')).toBe(true);
    expectIdenticalRequest(`${label}: narrator/narrator#1`, map.normalise(ra.get('narrator/narrator#1')!), rb.get('narrator/narrator#1')!);
    for (const [key, body] of ra) expectIdenticalRequest(`${label}: ${key}`, map.normalise(body), rb.get(key)!);
    expect({ label, seen: map.normaliseJson(resolvedExtensions(ea, xa)) }).toEqual({ label, seen: resolvedExtensions(eb, xb) });
  }

  /**
   * Replay: every inline projection rebuilt from the log gives the same rows; each session's
   * projections equal its in-memory folds; every turn of every session (reverted ones, each
   * alternative, a branch's own) audits identical.
   */
  async function expectReplayIdentical(sessionCount: number) {
    expect(s.sessions).toHaveLength(sessionCount);
    const tables = engineInlineProjections.flatMap((p) => p.tables);
    const live = await dumpTables(s.covel.engine, tables);
    expect(live.plugin_data.length).toBeGreaterThan(0);
    const rebuilt = await rebuildInline({ db: s.covel.engine.database.db, projections: engineInlineProjections });
    expect(rebuilt.failures).toEqual([]);
    expect(await dumpTables(s.covel.engine, tables)).toEqual(live);

    for (const sessionId of s.sessions) {
      const state = await folds(sessionId);
      expect({ sessionId, folded: state.folded }).toEqual({
        sessionId,
        folded: { pluginData: state.pluginData, history: state.history, summaries: state.summaries },
      });
      for (const input of ofType(await log(sessionId), 'player-input.submitted@1')) {
        const { status, body } = await call('GET', `/v1/sessions/${sessionId}/turns/${input.data.turnId}/audit`);
        const mismatches = ((body.calls ?? []) as { identical: boolean }[]).filter((c) => !c.identical);
        expect({ sessionId, turnId: input.data.turnId, status, identical: body.identical, mismatches }).toEqual({
          sessionId,
          turnId: input.data.turnId,
          status: 200,
          identical: true,
          mismatches: [],
        });
        expect((body.calls as unknown[]).length).toBeGreaterThan(0);
      }
    }
  }

  return { s, expectSameFolds, client, log, folds, call, emberbackSession, executionOf, commitVersion, storyMap, expectSameTurn, expectReplayIdentical };
}

/**
 * Issue 30's acceptance: the state of every Emberback plugin follows the story — undo, select an
 * alternative, branch, edit — compared as folds (plugin data per plugin, the dimensions, memory and
 * affinity as the requests see them, the history and summaries), and the next narrator request
 * byte-identical to that of a session that played only the story that counts, apart from the ids
 * bound to each session (mapped explicitly: `IdMap`). The embedded default (PGlite, in-process
 * queue) with the provider emulator over HTTP answering from a fixed reply book (steer-replies.ts).
 */
describe('issue 30 acceptance: every Emberback plugin’s state follows the story', () => {
  const { s, expectSameFolds, client, log, folds, call, emberbackSession, executionOf, commitVersion, storyMap, expectSameTurn, expectReplayIdentical } =
    steerSuite({ onDisk: true });

  /**
   * One session that played turns 1–5: test 1 branches it at turn 2, then test 2 reverts its turn 4
   * (a branch leaves its parent's log as it was), so the two share its five turns.
   */
  let played: Promise<{ sessionId: string; turnIds: string[] }> | undefined;
  const fiveTurns = () =>
    (played ??= (async () => {
      const sessionId = await emberbackSession();
      return { sessionId, turnIds: await playTurns(client(), sessionId, INPUTS.slice(0, 5)) };
    })());

  it('1. branch at turn 2 of 5: the branch’s turn 3 requests are the parent’s original turn 3 requests apart from ids, with the root’s prompt_cache_key; prompt:prefix shares ≥ 95 %', async () => {
    const { sessionId: p, turnIds: turnsP } = await fiveTurns();
    const made = await call('POST', `/v1/sessions/${p}/branch`, { atTurnId: turnsP[1] });
    expect(made.status).toBe(201);
    const q = made.body.sessionId as string;
    s.sessions.push(q);
    const [third] = await playTurns(client(), q, [INPUTS[2]]);

    // the root's key, as it is: not mapped
    const [eq, ep] = [await log(q), await log(p)];
    const sent = ofType(eq, 'llm.calling@1').filter((e) => e.data.turnId === third);
    const parentThird = ofType(ep, 'llm.calling@1').filter((e) => e.data.turnId === turnsP[2]);
    expect(sent.length).toBeGreaterThanOrEqual(KEEPERS.length);
    const keyOf = (e: Of<'llm.calling@1'>) => (JSON.parse(e.data.body) as { prompt_cache_key?: string }).prompt_cache_key;
    for (const e of sent) {
      const parent = parentThird.find((x) => x.data.pluginId === e.data.pluginId && x.data.runtimeId === e.data.runtimeId)!;
      expect([e.data.pluginId, keyOf(e)]).toEqual([e.data.pluginId, promptCacheKey(p, e.data.pluginId, e.data.runtimeId)]);
      expect(keyOf(e)).toBe(keyOf(parent));
    }
    const throughThird = commitVersion(ep, turnsP[2]);
    const map = await storyMap({ sessionId: q }, { sessionId: p, throughVersion: throughThird }, { sameRoot: true });
    await expectSameTurn('the branch’s turn 3 against the parent’s turn 3', { sessionId: q, turnId: third }, { sessionId: p, turnId: turnsP[2] }, map);
    // and its state is the parent's as it stood after turn 3
    const branchFolds = await folds(q);
    const parentAtThree = await foldStory(s.covel.engine, { tenantId: s.tenantId, sessionId: p, throughVersion: throughThird });
    expect(branchFolds.folded).toEqual({ pluginData: branchFolds.pluginData, history: branchFolds.history, summaries: branchFolds.summaries });
    const mapped = map.normaliseJson(branchFolds.folded);
    for (const plugin of new Set([...Object.keys(mapped.pluginData), ...Object.keys(parentAtThree.pluginData)]))
      expect({ plugin, data: mapped.pluginData[plugin] }).toEqual({ plugin, data: parentAtThree.pluginData[plugin] });
    expect(mapped.history).toEqual(parentAtThree.history);

    // npm run prompt:prefix on the test's database (a PGlite data directory: the engine lets go of it meanwhile)
    const dataDir = s.covel.dataDir;
    await s.covel.stop({ keepData: true });
    try {
      const env = { ...process.env, DATABASE_URL: '', REDIS_URL: '', COVEL_DATA_DIR: dataDir };
      // its JSON, one run (the table of the same rows is checked by branch-embedded and reports-api)
      const { stdout } = await run('npm', ['run', '--silent', 'prompt:prefix', '--', dataDir, '--session', q, '--against', p, '--json'], { cwd: ROOT, env });
      const json = JSON.parse(stdout) as { rows: { runtime: string; against: string; parentTurnId: string; sharedPercent: number }[] };
      const narrator = json.rows.find((r) => r.runtime === 'narrator/narrator')!;
      console.log(`prompt:prefix, branch ${q} against ${p}: the narrator's first request shares ${narrator.sharedPercent.toFixed(2)} %`);
      expect(narrator).toMatchObject({ against: 'same-point', parentTurnId: turnsP[2] });
      expect(narrator.sharedPercent).toBeGreaterThanOrEqual(95);
    } finally {
      await s.restart(dataDir);
    }
  }, 300_000);

  it('2. revert turn 4 of 5 (of the session test 1 branched): every plugin’s data, the dimensions, memory and affinity are those of a session that played turns 1–3; turn 6’s narrator request is byte-identical to that session’s turn 4 apart from ids', async () => {
    const { sessionId: a, turnIds: turnsA } = await fiveTurns();
    const b = await emberbackSession();
    await playTurns(client(), b, INPUTS.slice(0, 3));
    expect(ofType(await log(a), 'session.created@1')[0].data.plugins).toEqual(EMBERBACK_PLUGINS);
    // turns 4 and 5 wrote for every keeper: their values are in A's state before the revert
    const writtenBy = (events: StoredEvent[], turnId: string) =>
      new Set(
        ofType(events, 'plugin-data.written@1')
          .filter((e) => e.data.turnId === turnId)
          .map((e) => e.data.pluginId),
      );
    for (const t of turnsA.slice(3)) expect([...writtenBy(await log(a), t)].sort()).toEqual(KEEPERS);
    expect(tagged(await folds(a), /T[45]a/)).toEqual(
      expect.arrayContaining(['affinity/scores/mira', 'memory/blocks/courier-notes', 'char-creator/characters/salt-trader']),
    );

    const reverted = await call('POST', `/v1/sessions/${a}/turns/${turnsA[3]}/revert`);
    expect(reverted).toMatchObject({ status: 200, body: { turnId: turnsA[3], turnIds: turnsA.slice(3) } });

    const afterRevert = await folds(a);
    expectSameFolds('after the revert', afterRevert, await folds(b), await storyMap({ sessionId: a }, { sessionId: b }));
    expect(tagged(afterRevert, /T[45]a/)).toEqual([]);
    // memory and affinity as turn 3 left them
    expect(afterRevert.pluginData.memory).toEqual({
      blocks: [
        [
          'courier-notes',
          { text: ['Arrived with the last caravan before the snows.', ...['T1a', 'T2a', 'T3a'].map((t) => `${t}: a note of the courier.`)].join('\n') },
        ],
      ],
    });
    expect(afterRevert.pluginData.affinity.scores).toEqual([
      ['mira', { score: 3, feeling: 'T3a: what Mira feels' }],
      ['tomas', { score: -3, feeling: 'T3a: what Tomas feels' }],
    ]);

    const [sixth] = await playTurns(client(), a, [INPUTS[5]]);
    const [fourth] = await playTurns(client(), b, [INPUTS[5]]);
    const map = await storyMap({ sessionId: a }, { sessionId: b });
    await expectSameTurn('turn 6 of the reverted session against turn 4 of the other', { sessionId: a, turnId: sixth }, { sessionId: b, turnId: fourth }, map);
    // the dimensions turn 6's requests saw: those turn 3's tracker staged
    const eventsA = await log(a);
    const [context] = resolvedExtensions(eventsA, executionOf(eventsA, sixth))['session.world-context@1 world-init/dimensions'] as {
      dimensions: Record<string, { value: unknown }>;
    }[];
    expect([context.dimensions['dragon-sleep'].value, context.dimensions['village-mood'].value]).toEqual([7, "T3a: the village's mood."]);
    expectSameFolds('after the next turn', await folds(a), await folds(b), map);
  }, 240_000);

  it('3. regenerate turn 3 with other replies, select alternative 1: the state and the next request are those of a session that played turn 3 once; the regeneration’s bookkeepers read the state before turn 3', async () => {
    const c = await emberbackSession();
    const turnsC = await playTurns(client(), c, INPUTS.slice(0, 3));
    const d = await emberbackSession();
    const turnsD = await playTurns(client(), d, INPUTS.slice(0, 3));

    s.variants.set(INPUTS[2], 'b');
    let regeneration!: { executionId: string; turnId: string };
    try {
      const retried = await call('POST', `/v1/sessions/${c}/turns/${turnsC[2]}/retry`);
      expect(retried.status).toBe(202);
      regeneration = retried.body as typeof regeneration;
      expect(await client().waitFor(regeneration.executionId, 30_000)).toBe('committed');
    } finally {
      s.variants.delete(INPUTS[2]);
    }

    // while it ran, its runtimes read the state as it stood before turn 3 (after turn 2): each request
    // is the original turn 3's, apart from ids and the story text it wrote; what they saw of the
    // plugins is what the original saw; no value turn 3 wrote shows, turn 2's do
    const events = await log(c);
    const original = executionOf(events, turnsC[2]);
    const same = new IdMap();
    pairExecutionIds(same, { events, executionId: regeneration.executionId }, { events, executionId: original });
    same.add('story text', inBody(REPLY_BOOK[INPUTS[2]].b.story), inBody(REPLY_BOOK[INPUTS[2]].a.story));
    const [regenerated, first] = [recordedRequests(events, regeneration.executionId), recordedRequests(events, original)];
    const firstSteps = [...first.keys()].filter((k) => k.endsWith('#1')).sort();
    expect([...regenerated.keys()].filter((k) => k.endsWith('#1')).sort()).toEqual(firstSteps);
    expect(firstSteps.length).toBeGreaterThanOrEqual(KEEPERS.length);
    for (const key of firstSteps) {
      const body = regenerated.get(key)!;
      expect({ key, turn3Values: body.match(/T3a[^"\\]*/g) }).toEqual({ key, turn3Values: null });
      expectIdenticalRequest(`the regeneration's ${key} against the original turn 3's`, same.normalise(body), first.get(key)!);
    }
    expect(regenerated.get('affinity/affinity#1')).toContain('T2a: what Mira feels');
    expect(regenerated.get('memory/keeper#1')).toContain('T2a: a note of the courier.');
    expect(same.normaliseJson(resolvedExtensions(events, regeneration.executionId))).toEqual(resolvedExtensions(events, original));
    // and each is the request of turn 3 of the session that played it once, from the state after its turn 2
    const [eventsD, thirdD] = [await log(d), executionOf(await log(d), turnsD[2])];
    const toD = await storyMap(
      { sessionId: c, throughVersion: commitVersion(events, turnsC[1]) },
      { sessionId: d, throughVersion: commitVersion(eventsD, turnsD[1]) },
    );
    pairExecutionIds(toD, { events, executionId: regeneration.executionId }, { events: eventsD, executionId: thirdD });
    toD.add('story text', inBody(REPLY_BOOK[INPUTS[2]].b.story), inBody(REPLY_BOOK[INPUTS[2]].a.story));
    const onceD = recordedRequests(eventsD, thirdD);
    for (const key of firstSteps)
      expectIdenticalRequest(
        `the regeneration's ${key} against turn 3 of the session that played it once`,
        toD.normalise(regenerated.get(key)!),
        onceD.get(key)!,
      );
    expect(toD.normaliseJson(resolvedExtensions(events, regeneration.executionId))).toEqual(resolvedExtensions(eventsD, thirdD));

    // it wrote other data than the original: the state now follows it
    const withRegeneration = await folds(c);
    expect(tagged(withRegeneration, /T3b/)).toEqual(
      expect.arrayContaining(['affinity/scores/mira', 'memory/blocks/courier-notes', 'npc-graph/relations/mira->ash']),
    );
    expect(tagged(withRegeneration, /T3a/)).toEqual([]);

    const selected = await call('POST', `/v1/sessions/${c}/turns/${regeneration.turnId}/alternatives/1/select`);
    expect(selected).toEqual({ status: 200, body: { alternativeId: original, turnId: turnsC[2] } });
    expectSameFolds('after selecting alternative 1', await folds(c), await folds(d), await storyMap({ sessionId: c }, { sessionId: d }));

    const [nextC] = await playTurns(client(), c, [INPUTS[3]]);
    const [nextD] = await playTurns(client(), d, [INPUTS[3]]);
    const map = await storyMap({ sessionId: c }, { sessionId: d });
    await expectSameTurn(
      'the turn after selecting alternative 1 against the same turn of the other',
      { sessionId: c, turnId: nextC },
      { sessionId: d, turnId: nextD },
      map,
    );
    expectSameFolds('after the next turn', await folds(c), await folds(d), map);
  }, 240_000);

  it('4. edit turn 2’s story text: turn 3’s narrator request has the edited text and not the old one; turn 2’s audit is unchanged', async () => {
    const e = await emberbackSession();
    const turns = await playTurns(client(), e, INPUTS.slice(0, 2));
    const story = (
      await client().request<{ messageId: string; turnId: string; outputKind: string | null; text: string }[]>('GET', `/v1/sessions/${e}/messages`)
    ).find((m) => m.turnId === turns[1] && m.outputKind === 'story')!;
    const old = REPLY_BOOK[INPUTS[1]].a.story;
    expect(story.text).toBe(old);
    // turn 2's bookkeepers were sent the story text as written
    const turn2 = ofType(await log(e), 'llm.calling@1').filter((c) => c.data.turnId === turns[1] && c.data.pluginId !== 'narrator');
    expect(turn2.length).toBeGreaterThan(0);
    for (const c of turn2.filter((x) => (x.data.step ?? 1) === 1))
      expect([c.data.pluginId, c.data.body.includes(inBody(old))]).toEqual([c.data.pluginId, true]);

    const audit = async () => (await call('GET', `/v1/sessions/${e}/turns/${turns[1]}/audit`)).body;
    const before = await audit();
    expect(before).toMatchObject({ identical: true });
    expect((before.calls as unknown[]).length).toBeGreaterThanOrEqual(KEEPERS.length);

    const edited = 'The ferry runs when the river lets it 🔥 川は温かい — שָׁלוֹם (edited)';
    expect(await call('PATCH', `/v1/sessions/${e}/messages/${story.messageId}`, { text: edited })).toMatchObject({ status: 200 });
    expect(await audit()).toEqual(before);

    const [third] = await playTurns(client(), e, [INPUTS[2]]);
    const narrator = ofType(await log(e), 'llm.calling@1').find((c) => c.data.turnId === third && c.data.pluginId === 'narrator')!;
    expect(narrator.data.body).toContain(inBody(edited));
    expect(narrator.data.body).not.toContain(inBody(old));
    const state = await folds(e);
    expect(state.folded).toEqual({ pluginData: state.pluginData, history: state.history, summaries: state.summaries });
    expect(state.history.find((m) => m.messageId === story.messageId)!.text).toBe(edited);
    expect(await audit()).toEqual(before);
  }, 180_000);

  it('5. replay: rebuilding every inline projection from the log gives the same rows; every turn of every session audits identical', async () => {
    await expectReplayIdentical(6);
  }, 300_000);
});

/** About 1,100 tokens added to every story text: with an 8k window the history reaches the compaction threshold in turn 5. */
const LONG_STORY = `\n\n${Array.from({ length: 40 }, (_, i) => `The ash drifts over the terraces, line ${i + 1} of the long evening, and the vents breathe slowly.`).join(' ')}`;

/**
 * The same with history-compaction at work: an 8k story and fast window (effective 7,168, the
 * barrier compacts above 5,376 estimated tokens) and long story texts, so turn 5's barrier compacts
 * the oldest history (the opening and turns 1–2) and nothing before it does.
 */
describe('issue 30 acceptance with compaction: summaries follow the story', () => {
  const llmDir = mkdtempSync(join(tmpdir(), 'covel-steer-llm-'));
  writeFileSync(join(llmDir, 'llm.toml'), SMALL_WINDOW_LLM);
  afterAll(() => rmSync(llmDir, { recursive: true, force: true }));
  const { s, expectSameFolds, client, log, folds, call, emberbackSession, commitVersion, storyMap, expectSameTurn, expectReplayIdentical } = steerSuite({
    env: { COVEL_LLM_CONFIG: join(llmDir, 'llm.toml') },
    storyPadding: LONG_STORY,
  });

  /** The turns (1-based, 0 the opening) whose messages each summary of the session's log covers, and the execution that compacted. */
  async function compactions(sessionId: string, turnIds: readonly string[]) {
    const events = await log(sessionId);
    const turnOf = new Map<string, number>(ofType(events, 'session.opened@1').map((e) => [e.data.messageId, 0]));
    for (const e of ofType(events, 'turn.committed@1')) for (const m of e.data.messages) turnOf.set(m.messageId, turnIds.indexOf(e.data.turnId) + 1);
    const by = new Map(
      ofType(events, 'compaction.barrier-passed@1').flatMap((e) => (e.data.compactionId ? [[e.data.compactionId, e.data.turnId] as const] : [])),
    );
    return ofType(events, 'history.compacted@1').map((e) => ({
      inTurn: turnIds.indexOf(by.get(e.data.compactionId) ?? '') + 1,
      covers: [...new Set(e.data.summaries.flatMap((x) => x.messageIds.map((m) => turnOf.get(m))))],
    }));
  }

  /**
   * One session that played turns 1–5: the branch test branches it at turn 2, then the next test
   * reverts its turn 4 (a branch leaves its parent's log as it was), so the two share its five turns.
   */
  let played: Promise<{ sessionId: string; turnIds: string[] }> | undefined;
  const fiveTurns = () =>
    (played ??= (async () => {
      const sessionId = await emberbackSession();
      return { sessionId, turnIds: await playTurns(client(), sessionId, INPUTS.slice(0, 5)) };
    })());

  it('branch at turn 2 of 5 after turn 5 compacted turns 0–2: the branch reads its parent as it stood at turn 2 (uncompacted); its turn 3 requests are the parent’s original turn 3 requests apart from ids', async () => {
    const { sessionId: p, turnIds: turnsP } = await fiveTurns();
    expect(await compactions(p, turnsP)).toEqual([{ inTurn: 5, covers: [0, 1, 2] }]);
    const made = await call('POST', `/v1/sessions/${p}/branch`, { atTurnId: turnsP[1] });
    expect(made.status).toBe(201);
    const q = made.body.sessionId as string;
    s.sessions.push(q);
    const [third] = await playTurns(client(), q, [INPUTS[2]]);
    const throughThird = commitVersion(await log(p), turnsP[2]);
    const map = await storyMap({ sessionId: q }, { sessionId: p, throughVersion: throughThird }, { sameRoot: true });
    await expectSameTurn('the branch’s turn 3 against the parent’s turn 3', { sessionId: q, turnId: third }, { sessionId: p, turnId: turnsP[2] }, map);
    const parentAtThree = await foldStory(s.covel.engine, { tenantId: s.tenantId, sessionId: p, throughVersion: throughThird });
    const branchFolds = await folds(q);
    expect(branchFolds.folded).toEqual({ pluginData: branchFolds.pluginData, history: branchFolds.history, summaries: branchFolds.summaries });
    expect(map.normaliseJson(branchFolds.folded)).toEqual(parentAtThree);
  }, 300_000);

  it('revert turn 4 of 5 after turn 5 compacted turns 0–2 (of the session the branch test branched): the summaries, the history view and every plugin’s data are those of a session that played turns 1–3 (which never compacted); the next request is byte-identical apart from ids', async () => {
    const { sessionId: a, turnIds: turnsA } = await fiveTurns();
    const b = await emberbackSession();
    const turnsB = await playTurns(client(), b, INPUTS.slice(0, 3));
    expect(await compactions(a, turnsA)).toEqual([{ inTurn: 5, covers: [0, 1, 2] }]);
    expect(await compactions(b, turnsB)).toEqual([]);

    expect((await call('POST', `/v1/sessions/${a}/turns/${turnsA[3]}/revert`)).status).toBe(200);
    // the state before turn 4: no summary (turn 5's compaction is undone with turn 5), the whole history uncompacted
    expectSameFolds('after the revert', await folds(a), await folds(b), await storyMap({ sessionId: a }, { sessionId: b }));

    const [sixth] = await playTurns(client(), a, [INPUTS[5]]);
    const [fourth] = await playTurns(client(), b, [INPUTS[5]]);
    const map = await storyMap({ sessionId: a }, { sessionId: b });
    await expectSameTurn('turn 6 of the reverted session against turn 4 of the other', { sessionId: a, turnId: sixth }, { sessionId: b, turnId: fourth }, map);
    expectSameFolds('after the next turn', await folds(a), await folds(b), map);
  }, 300_000);

  it('revert turn 2 of 5 after turn 5 compacted turns 0–2: the summary that covers a reverted message is dropped; the state is that of a session that played turn 1', async () => {
    const a = await emberbackSession();
    const turnsA = await playTurns(client(), a, INPUTS.slice(0, 5));
    const b = await emberbackSession();
    await playTurns(client(), b, INPUTS.slice(0, 1));
    expect(await compactions(a, turnsA)).toEqual([{ inTurn: 5, covers: [0, 1, 2] }]);

    expect((await call('POST', `/v1/sessions/${a}/turns/${turnsA[1]}/revert`)).status).toBe(200);
    expectSameFolds('after the revert', await folds(a), await folds(b), await storyMap({ sessionId: a }, { sessionId: b }));
    const [next] = await playTurns(client(), a, [INPUTS[1]]);
    const [second] = await playTurns(client(), b, [INPUTS[1]]);
    const map = await storyMap({ sessionId: a }, { sessionId: b });
    await expectSameTurn('the turn after the revert against turn 2 of the other', { sessionId: a, turnId: next }, { sessionId: b, turnId: second }, map);
    expectSameFolds('after the next turn', await folds(a), await folds(b), map);
  }, 300_000);

  it('replay: the same rows from the log; every turn audits identical', async () => {
    await expectReplayIdentical(5);
  }, 300_000);
});
