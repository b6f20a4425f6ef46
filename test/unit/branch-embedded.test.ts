import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PlayClient } from '../../apps/play/play-client';
import { promptCacheKey } from '../../libs/engine';
import { type StoredEvent, traceEventsProjection } from '../../libs/events';
import { branchPrefixReport, readBranchPoint } from '../../libs/reports';
import type { RecordedRequest } from '../../libs/emulator';
import { startEmbedded, type EmbeddedEngine } from '../support/embedded';
import { llmToml } from '../support/llm-toml';
import { auditedIdentical, playTurns } from '../support/turns';

interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

interface SessionAnswer {
  sessionId: string;
  worldRevision: number | null;
  branchedFrom: { sessionId: string; atTurnId: string } | null;
  branches?: { sessionId: string; atTurnId: string; createdAt: string }[];
}

/** The story slot on a model with a reasoning switch (`enable_thinking`): the player's reasoning preference shows on the wire. */
const LLM_TOML = llmToml({
  story: { contextWindow: 128_000, maxOutputTokens: 1024, model: 'qwen-plus' },
  fast: { contextWindow: 128_000, maxOutputTokens: 512 },
});

const lighthouse = (lore: string) => ({
  name: 'Saltmarrow Light',
  description: 'A lighthouse on a reef.',
  lore,
  characters: [{ id: 'keeper', name: 'Ysolde', type: 'npc', description: 'The keeper, who speaks to the lamp.' }],
  plugins: ['narrator'],
});

/**
 * Issue 30 item 4, the write side: `POST /v1/sessions/:id/branch` on the embedded default (PGlite,
 * in-process queue, the emulator over HTTP). What a branch reads of its parent's history is the
 * projections' (the read side); here: the branch's log, its settings, the views, the refusals,
 * idempotency and the prompt cache key.
 */
describe('branch a session (POST /v1/sessions/:id/branch, embedded default)', () => {
  let covel: EmbeddedEngine;
  let configDir: string;
  let keyA: string;
  let tenantA: string;
  /** Who the log says acted: tenant A's key (`key:<id>`). */
  let byA: string;
  let keyB: string;
  beforeAll(async () => {
    configDir = mkdtempSync(join(tmpdir(), 'covel-branch-'));
    const llm = join(configDir, 'llm.toml');
    writeFileSync(llm, LLM_TOML);
    // no sweeper pass during the tests: an input appended without its job stays pending
    covel = await startEmbedded({ COVEL_SWEEP_INTERVAL_MS: '3600000', COVEL_LLM_CONFIG: llm });
    const a = await covel.engine.tenants.create('a');
    [keyA, tenantA, byA] = [a.apiKey, a.tenant.id, `key:${a.key.id}`];
    keyB = (await covel.engine.tenants.create('b')).apiKey;
  }, 120_000);
  afterAll(async () => {
    await covel?.stop();
    rmSync(configDir, { recursive: true, force: true });
  });

  async function call(apiKey: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
    const res = await fetch(`${covel.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
  }
  const branch = (sessionId: string, body: unknown, options: { key?: string; apiKey?: string } = {}) =>
    call(options.apiKey ?? keyA, 'POST', `/v1/sessions/${sessionId}/branch`, body, options.key ? { 'idempotency-key': options.key } : {});
  /** A branch that must be made: its id. */
  async function branchOf(sessionId: string, atTurnId: string): Promise<string> {
    const made = await branch(sessionId, { atTurnId });
    expect(made.status).toBe(201);
    return made.body.sessionId as string;
  }
  const clientA = () => new PlayClient(covel.baseUrl, keyA);
  const session = async (id: string, apiKey = keyA) => (await call(apiKey, 'GET', `/v1/sessions/${id}`)).body as unknown as SessionAnswer;
  const log = (id: string) => covel.engine.store.readStream(id);
  const requests = () => covel.engine.emulator!.requests;
  async function sessionWithTurns(texts: string[], body: Record<string, unknown> = { worldId: 'emberback', plugins: ['narrator'] }) {
    const a = clientA();
    const { id } = await a.request<{ id: string }>('POST', '/v1/sessions', body);
    return { sessionId: id, turnIds: await playTurns(a, id, texts) };
  }

  /** The prompt_cache_key of each request the emulator received from `from` on. */
  const keysSince = (from: number) =>
    requests()
      .slice(from)
      .map((r: RecordedRequest) => (r.body as { prompt_cache_key?: string }).prompt_cache_key);

  it('makes a new session whose log starts with session.branched@1 and the parent’s settings; the parent is unchanged; both views link', async () => {
    const { sessionId: parent, turnIds } = await sessionWithTurns(['Light the lantern', 'Open the door', 'Climb the stairs']);
    const parentLog = await log(parent);
    const made = await branch(parent, { atTurnId: turnIds[1] });
    expect(made.status).toBe(201);
    expect(Object.keys(made.body).sort()).toEqual(['atTurnId', 'parentSessionId', 'sessionId']);
    const child = made.body.sessionId as string;
    expect(made.body).toEqual({ sessionId: child, parentSessionId: parent, atTurnId: turnIds[1] });
    expect(child).not.toBe(parent);

    // one append: the origin, then the parent's session.created@1 as its own (no preferences: none recorded)
    const events = await log(child);
    expect(events.map((e) => [e.type, e.streamVersion])).toEqual([
      ['session.branched@1', 1],
      ['session.created@1', 2],
    ]);
    expect(events[0].data).toEqual({
      parentSessionId: parent,
      atTurnId: turnIds[1],
      parentVersion: parentLog.length,
      rootSessionId: parent,
      by: byA,
    });
    expect(events[1].data).toEqual({ ...parentLog[0].data, sessionId: child });
    expect(events[1].globalPosition).toBe(events[0].globalPosition + 1);
    // the parent's log is as it was
    expect(await log(parent)).toEqual(parentLog);

    // the views: the branch names its parent, the parent lists its branch; the list has both
    expect(await session(child)).toMatchObject({ sessionId: child, branchedFrom: { sessionId: parent, atTurnId: turnIds[1] }, branches: [] });
    const parentView = await session(parent);
    expect(parentView.branchedFrom).toBeNull();
    expect(parentView.branches).toEqual([{ sessionId: child, atTurnId: turnIds[1], createdAt: events[0].recordedAt }]);
    const listed = (await call(keyA, 'GET', '/v1/sessions')).body as unknown as SessionAnswer[];
    expect(listed.find((s) => s.sessionId === child)?.branchedFrom).toEqual({ sessionId: parent, atTurnId: turnIds[1] });
    expect(listed.find((s) => s.sessionId === parent)?.branchedFrom).toBeNull();

    // a branch at the opening (turn 0: the parent's first history row), and at its latest turn; newest first
    const [opening] = await clientA().messages(parent);
    expect(opening.turnId).not.toBe(turnIds[0]);
    const atOpening = await branchOf(parent, opening.turnId);
    const atLatest = await branchOf(parent, turnIds[2]);
    expect((await session(parent)).branches!.map((b) => [b.sessionId, b.atTurnId])).toEqual([
      [atLatest, turnIds[2]],
      [atOpening, opening.turnId],
      [child, turnIds[1]],
    ]);
    // a branch is a session like any: it takes inputs, and its turns run
    const [played] = await playTurns(clientA(), atOpening, ['Look at the sky']);
    expect((await log(atOpening)).some((e) => e.type === 'turn.committed@1' && e.data.turnId === played)).toBe(true);
    // and the audit re-derives its requests from the log, byte for byte (the root's cache key included)
    expect(await auditedIdentical(covel.engine, atOpening, [played])).toEqual([true]);
  });

  it('an unknown turn, a turn of another session or a turn left out of the history is 404; another tenant gets 404; a pending turn is 409 TURN_RUNNING; nothing is recorded', async () => {
    const { sessionId: parent, turnIds } = await sessionWithTurns(['Knock', 'Wait']);
    const { sessionId: other, turnIds: otherTurns } = await sessionWithTurns(['Sing']);
    const before = await covel.engine.readModels.sessions(tenantA, 200);

    expect(await branch(parent, { atTurnId: randomUUID() })).toMatchObject({ status: 404, body: { code: 'TURN_NOT_FOUND' } });
    expect(await branch(parent, { atTurnId: otherTurns[0] })).toMatchObject({ status: 404, body: { code: 'TURN_NOT_FOUND' } });
    // a turn regenerated away: its alternative is in the log, not in the history
    const retried = await clientA().retry(parent, turnIds[1]);
    expect(await clientA().waitFor(retried.executionId, 20_000)).toBe('committed');
    expect(await branch(parent, { atTurnId: turnIds[1] })).toMatchObject({ status: 404, body: { code: 'TURN_NOT_FOUND' } });

    expect(await branch(randomUUID(), { atTurnId: turnIds[0] })).toMatchObject({ status: 404, body: { code: 'SESSION_NOT_FOUND' } });
    expect((await branch('not-a-uuid', { atTurnId: turnIds[0] })).status).toBe(404);
    // another tenant: its key sees neither the session nor a way to branch it
    expect(await branch(parent, { atTurnId: turnIds[0] }, { apiKey: keyB })).toMatchObject({ status: 404, body: { code: 'SESSION_NOT_FOUND' } });

    // bad bodies name the field
    const missing = await branch(parent, {});
    expect(missing.status).toBe(400);
    expect(missing.body.issues).toEqual([expect.objectContaining({ path: 'atTurnId' })]);
    expect((await branch(parent, { atTurnId: 'turn-2' })).body.issues).toEqual([expect.objectContaining({ path: 'atTurnId' })]);
    expect((await branch(parent, { atTurnId: turnIds[0], more: 1 })).status).toBe(400);

    // a pending input (no job: the sweeper is off) keeps a turn of the session running
    const version = await covel.engine.store.streamVersion(other);
    await covel.engine.store.append({
      tenantId: tenantA,
      streamId: other,
      expectedVersion: version,
      events: [{ type: 'player-input.submitted@1', data: { executionId: randomUUID(), turnId: randomUUID(), messageId: randomUUID(), text: 'Wait' } }],
    });
    const running = await branch(other, { atTurnId: otherTurns[0] });
    expect(running).toMatchObject({ status: 409, body: { code: 'TURN_RUNNING' } });

    // no session was made by any of them
    expect(await covel.engine.readModels.sessions(tenantA, 200)).toHaveLength(before.length);
  });

  it('another tenant’s key sees no branch and no link: the branch, the parent and the list are the owner’s', async () => {
    const { sessionId: parent, turnIds } = await sessionWithTurns(['Listen']);
    const child = await branchOf(parent, turnIds[0]);
    expect((await call(keyB, 'GET', `/v1/sessions/${child}`)).status).toBe(404);
    expect((await call(keyB, 'GET', `/v1/sessions/${parent}`)).status).toBe(404);
    expect((await call(keyB, 'GET', `/v1/sessions/${child}/messages`)).status).toBe(404);
    const theirs = (await call(keyB, 'GET', '/v1/sessions')).body as unknown as SessionAnswer[];
    expect(theirs.map((s) => s.sessionId)).not.toContain(child);
    // tenant B branching its own session lists only its branch on its session
    const b = new PlayClient(covel.baseUrl, keyB);
    const { id: own } = await b.createSession({ worldId: 'emberback', plugins: ['narrator'] });
    const [ownTurn] = await playTurns(b, own, ['Sit']);
    const ownBranch = (await branch(own, { atTurnId: ownTurn }, { apiKey: keyB })).body.sessionId as string;
    expect((await session(own, keyB)).branches!.map((x) => x.sessionId)).toEqual([ownBranch]);
    expect((await session(parent)).branches!.map((x) => x.sessionId)).toEqual([child]);
    // a key cannot reach another tenant's turn through its own session either
    expect(await branch(own, { atTurnId: turnIds[0] }, { apiKey: keyB })).toMatchObject({ status: 404, body: { code: 'TURN_NOT_FOUND' } });
  });

  it('Idempotency-Key: a repeat answers the same branch and makes none; the key for another turn, session or endpoint is 422', async () => {
    const { sessionId: parent, turnIds } = await sessionWithTurns(['Whistle', 'Run']);
    const key = `branch-${randomUUID()}`;
    const first = await branch(parent, { atTurnId: turnIds[0] }, { key });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await branch(parent, { atTurnId: turnIds[0] }, { key });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    // concurrent repeats: one branch, every answer the same
    const key2 = `branch-${randomUUID()}`;
    const racing = await Promise.all(Array.from({ length: 4 }, () => branch(parent, { atTurnId: turnIds[1] }, { key: key2 })));
    expect(new Set(racing.map((r) => r.status))).toEqual(new Set([201]));
    expect(new Set(racing.map((r) => r.body.sessionId)).size).toBe(1);
    expect((await session(parent)).branches!.map((b) => b.sessionId).sort()).toEqual([first.body.sessionId, racing[0].body.sessionId].sort());

    expect(await branch(parent, { atTurnId: turnIds[1] }, { key })).toMatchObject({ status: 422, body: { code: 'IDEMPOTENCY_KEY_MISMATCH' } });
    const { sessionId: other, turnIds: otherTurns } = await sessionWithTurns(['Hide']);
    expect(await branch(other, { atTurnId: otherTurns[0] }, { key })).toMatchObject({ status: 422, body: { code: 'IDEMPOTENCY_KEY_MISMATCH' } });
    const created = await call(keyA, 'POST', '/v1/sessions', { worldId: 'emberback' }, { 'idempotency-key': key });
    expect(created).toMatchObject({ status: 422, body: { code: 'IDEMPOTENCY_KEY_MISMATCH' } });
    // the same key is another tenant's own
    const b = new PlayClient(covel.baseUrl, keyB);
    const { id: theirs } = await b.createSession({ worldId: 'emberback', plugins: ['narrator'] });
    const [theirTurn] = await playTurns(b, theirs, ['Sit']);
    const theirBranch = await branch(theirs, { atTurnId: theirTurn }, { key, apiKey: keyB });
    expect(theirBranch.status).toBe(201);
    expect(theirBranch.body.sessionId).not.toBe(first.body.sessionId);
  });

  it('the branch runs with its parent’s settings as they stand: the world revision it was moved to, its language, plugins, plugin settings and current preferences', async () => {
    const a = clientA();
    const world = await call(keyA, 'POST', '/v1/worlds', lighthouse('The keeper writes down every ship that passes.'));
    expect(world.status).toBe(201);
    const worldId = world.body.id as string;
    // created with reasoning off for the story slot (changed below) and plugin settings (not validated at this layer)
    const { answer } = await covel.engine.sessions.createSession({
      tenantId: tenantA,
      worldId,
      locale: 'pt-BR',
      pluginSettings: { narrator: { tone: 'dry' } },
      preferences: { slots: { story: { reasoning: { enabled: false } } } },
    });
    const parent = answer.id;
    const revised = await call(keyA, 'PUT', `/v1/worlds/${worldId}`, lighthouse('The lamp has gone dark; the keeper counts the ships by their bells.'), {
      'if-match': '"1"',
    });
    expect(revised.status).toBe(200);
    expect((await call(keyA, 'POST', `/v1/sessions/${parent}/world-revision`, {})).status).toBe(200);
    expect((await call(keyA, 'PATCH', `/v1/sessions/${parent}/preferences`, { slots: { story: { reasoning: { enabled: true } } } })).status).toBe(200);
    const [turn] = await playTurns(a, parent, ['Climb to the lamp']);

    const child = await branchOf(parent, turn);
    const events = await log(child);
    expect(events.map((e) => e.type)).toEqual(['session.branched@1', 'session.created@1', 'session.preferences-changed@1']);
    expect(events[1].data).toEqual({
      sessionId: child,
      worldId,
      worldRevision: 2,
      locale: 'pt-BR',
      pluginSettings: { narrator: { tone: 'dry' } },
      plugins: ['narrator'],
      languageName: 'Brazilian Portuguese (pt-BR)',
    });
    expect(events[2].data).toEqual({ preferences: { slots: { story: { reasoning: { enabled: true } } } } });
    expect((await session(child)).worldRevision).toBe(2);

    // its first turn's narrator request: revision 2's lore, the language, reasoning on (the parent's current preference)
    const from = requests().length;
    await playTurns(a, child, ['Ring the bell']);
    const sent = requests()
      .slice(from)
      .map((r) => JSON.parse(r.raw) as Record<string, unknown>);
    expect(sent.length).toBeGreaterThan(0);
    for (const body of sent) {
      const text = JSON.stringify(body);
      expect(text).toContain('The lamp has gone dark');
      expect(text).not.toContain('every ship that passes');
      expect(text).toContain('Brazilian Portuguese (pt-BR)');
      expect(body.enable_thinking).toBe(true);
    }
  });

  // Needs the read side (the projections fold the parent's log up to the branch point into the
  // branch's read models, issue 30 item 4): until it is merged the branch's history is empty and this fails.
  it('the branch’s history is its parent’s up to the branch point; its first narrator request repeats the parent’s at that point and reads its cache', async () => {
    const texts = ['Walk to the river', 'Ask Mira about the ferry', 'Watch the vents'];
    const { sessionId: parent, turnIds } = await sessionWithTurns(texts);
    const parentRows = await clientA().messages(parent);
    const child = await branchOf(parent, turnIds[1]);
    const kept = parentRows.slice(
      0,
      parentRows.findIndex((m) => m.turnId === turnIds[2]),
    );
    const strip = (rows: typeof parentRows) => rows.map((m) => ({ turnId: m.turnId, role: m.role, outputKind: m.outputKind, text: m.text }));
    expect(strip(await clientA().messages(child))).toEqual(strip(kept));

    // the parent's third input again, in the branch: its request is the parent's third one (apart from ids)
    await playTurns(clientA(), child, [texts[2]]);
    const calls = async (id: string) => {
      await covel.engine.projector.waitFor({ projection: traceEventsProjection.name, streamId: id, timeoutMs: 10_000 });
      return covel.engine.readModels.recordedCalls(id);
    };
    const point = await readBranchPoint(covel.engine.database.db, child);
    const [row] = branchPrefixReport({ point: point!, branchCalls: await calls(child), parentCalls: await calls(parent) });
    expect(row).toMatchObject({ runtime: 'narrator/narrator', against: 'same-point', parentTurnId: turnIds[2] });
    expect(row.sharedPercent).toBeGreaterThanOrEqual(95);
    // the emulated provider routes by the root's key: the branch's first request reads the prefix the parent cached
    const responded = (await log(child)).find((e): e is Extract<StoredEvent, { type: 'llm.responded@1' }> => e.type === 'llm.responded@1');
    expect(responded!.data.usage.cachedInputTokens).toBeGreaterThan(0);
  });

  it('a branch reverts a turn it inherited: its own later turns leave with it; the parent keeps all of its own', async () => {
    const { sessionId: parent, turnIds } = await sessionWithTurns(['Walk to the river', 'Ask Mira about the ferry']);
    const child = await branchOf(parent, turnIds[1]);
    const [own] = await playTurns(clientA(), child, ['Watch the vents']);
    const undone = await call(keyA, 'POST', `/v1/sessions/${child}/turns/${turnIds[1]}/revert`, {});
    expect(undone.status).toBe(200);
    const ownExecution = (await log(child)).find((e) => e.type === 'player-input.submitted@1' && e.data.turnId === own);
    expect(undone.body).toMatchObject({ turnId: turnIds[1], turnIds: [turnIds[1], own] });
    expect(undone.body.executionIds).toEqual(expect.arrayContaining([(ownExecution!.data as { executionId: string }).executionId]));
    const turnsIn = async (id: string) => [...new Set((await clientA().messages(id)).map((m) => m.turnId))];
    expect(await turnsIn(child)).toEqual((await turnsIn(parent)).slice(0, 2));
    expect(await turnsIn(parent)).toHaveLength(3);
  });

  it('the branch’s requests send its root session’s prompt_cache_key (the provider’s cache of the shared prefix is reused); a branch of a branch too', async () => {
    const { sessionId: root, turnIds } = await sessionWithTurns(['Walk to the river', 'Ask Mira about the ferry']);
    const rootKey = promptCacheKey(root, 'narrator', 'narrator');
    // what the root sent: its own key
    const rootCalls = (await log(root)).filter((e): e is Extract<StoredEvent, { type: 'llm.calling@1' }> => e.type === 'llm.calling@1');
    expect(new Set(rootCalls.map((e) => (JSON.parse(e.data.body) as { prompt_cache_key?: string }).prompt_cache_key))).toEqual(new Set([rootKey]));

    const child = await branchOf(root, turnIds[1]);
    let from = requests().length;
    const [childTurn] = await playTurns(clientA(), child, ['Watch the vents']);
    const childKeys = keysSince(from);
    expect(childKeys.length).toBeGreaterThan(0);
    expect(new Set(childKeys)).toEqual(new Set([rootKey]));
    expect(childKeys[0]).not.toBe(promptCacheKey(child, 'narrator', 'narrator'));

    // a branch of the branch: its parent is the branch, its root (and key) the first session's
    const grandchild = await branchOf(child, childTurn);
    const [origin] = await log(grandchild);
    expect(origin.data).toMatchObject({ parentSessionId: child, atTurnId: childTurn, rootSessionId: root });
    from = requests().length;
    await playTurns(clientA(), grandchild, ['Cross the bridge']);
    expect(new Set(keysSince(from))).toEqual(new Set([rootKey]));
    expect(await session(grandchild)).toMatchObject({ branchedFrom: { sessionId: child, atTurnId: childTurn }, branches: [] });
    expect(await session(child)).toMatchObject({ branchedFrom: { sessionId: root, atTurnId: turnIds[1] } });
    expect((await session(child)).branches!.map((b) => b.sessionId)).toEqual([grandchild]);
  });
});

describe('npm run prompt:prefix -- <database> --session <branch> --against <parent>', () => {
  const run = promisify(execFile);
  const root = join(__dirname, '..', '..');

  it('compares each runtime’s first request of the branch with the parent’s first request after the branch point', async () => {
    const covel = await startEmbedded({}, undefined, { onDisk: true });
    let parent = '';
    let child = '';
    let turnIds: string[] = [];
    try {
      const client = await covel.newTenant();
      ({ id: parent } = await client.createSession({ worldId: 'emberback', plugins: ['narrator'] }));
      turnIds = await playTurns(client, parent, ['Walk to the river', 'Ask Mira about the ferry']);
      ({ sessionId: child } = await client.request<{ sessionId: string }>('POST', `/v1/sessions/${parent}/branch`, { atTurnId: turnIds[0] }));
      await playTurns(client, child, ['Ask Mira about the ferry']);
    } finally {
      await covel.stop({ keepData: true });
    }
    const env = { ...process.env, DATABASE_URL: '', REDIS_URL: '', COVEL_DATA_DIR: covel.dataDir };
    const prefix = (...args: string[]) => run('npm', ['run', '--silent', 'prompt:prefix', '--', covel.dataDir, ...args], { cwd: root, env });
    try {
      const table = (await prefix('--session', child, '--against', parent)).stdout;
      expect(table).toContain(`branch ${child} of session ${parent} at turn ${turnIds[0]}`);
      expect(table).toMatch(/runtime\s+against parent\s+parent turn\s+req tok\s+shared\s+shared %/);
      expect(table).toMatch(new RegExp(`narrator/narrator\\s+same-point\\s+${turnIds[1]}\\s+\\d+\\s+\\d+\\s+[\\d.]+%`));
      const json = JSON.parse((await prefix('--session', child, '--against', parent, '--json')).stdout) as {
        point: { parentSessionId: string; atTurnId: string };
        rows: { runtime: string; against: string; parentTurnId: string; sharedPercent: number }[];
      };
      expect(json.point).toMatchObject({ parentSessionId: parent, atTurnId: turnIds[0] });
      expect(json.rows).toEqual([expect.objectContaining({ runtime: 'narrator/narrator', against: 'same-point', parentTurnId: turnIds[1] })]);
      expect(typeof json.rows[0].sharedPercent).toBe('number');
      // not its parent: said, exit 1
      await expect(prefix('--session', child, '--against', child)).rejects.toMatchObject({ stderr: expect.stringContaining(`is a branch of ${parent}`) });
    } finally {
      rmSync(covel.dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
