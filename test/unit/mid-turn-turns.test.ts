import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlayClient } from '../../apps/play/play-client';
import { ProviderEmulator, type RecordedRequest } from '../../libs/emulator';
import { rebuildRequests } from '../../libs/engine';
import type { StoredEvent } from '../../libs/events';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';
import { TOOL_HEAVY_LLM, toolHeavyInput, toolHeavyScript } from '../support/tool-heavy-session';
import { auditedIdentical } from '../support/turns';

/**
 * Issue 16 part 2: a message the player posts while the narrator's tool loop runs
 * (`POST /v1/sessions/:id/inputs` with `midTurn: true`) joins that turn: the loop's next model call
 * reads it inside the protected current turn (the 4k window of the tool-heavy session trims the
 * tool results, never it), the commit places it in order, and the audit re-derives every request
 * byte for byte. The emulator holds the narrator's first call until the test has posted it.
 */
const PLUGINS = join(__dirname, '..', 'fixtures', 'budget-plugins');
const SHELVES = 7;
const MID = 'Wait: I also light my lantern before I go on.';
type Calling = Extract<StoredEvent, { type: 'llm.calling@1' }>;
type Sent = { messages: { role: string; content: string | null }[] };

describe('player messages in the middle of a turn (issue 16 part 2)', () => {
  let covel: EmbeddedEngine;
  let emulator: ProviderEmulator;
  let llmDir: string;
  /** Runs while a model call is held (before the emulator answers it); cleared after each test. */
  let onCall: ((request: RecordedRequest) => Promise<void>) | null = null;
  let hookFailure: unknown = null;
  beforeAll(async () => {
    emulator = await new ProviderEmulator({
      script: toolHeavyScript(SHELVES),
      beforeReply: async (request) => {
        try {
          await onCall?.(request);
        } catch (error) {
          hookFailure = error;
        }
      },
    }).start();
    llmDir = mkdtempSync(join(tmpdir(), 'covel-midturn-llm-'));
    writeFileSync(join(llmDir, 'llm.toml'), TOOL_HEAVY_LLM);
    covel = await startEmbedded({ COVEL_PLUGINS_DIR: PLUGINS, COVEL_EMULATOR_URL: emulator.url, COVEL_LLM_CONFIG: join(llmDir, 'llm.toml') });
  }, 60_000);
  afterAll(async () => {
    await covel?.stop();
    await emulator?.stop();
    rmSync(llmDir, { recursive: true, force: true });
  });
  afterEach(() => {
    onCall = null;
    expect(hookFailure).toBeNull();
  });

  async function tenant() {
    const { apiKey } = await covel.engine.tenants.create('mid-turn');
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${covel.baseUrl}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
    return { client: new PlayClient(covel.baseUrl, apiKey), post };
  }

  /** The narrator's call of step 1 of the session's turn: no tool result yet. */
  const firstStep = (request: RecordedRequest) => !(request.body as Sent).messages.some((m) => m.role === 'tool');

  it('joins the running tool loop: the next step reads it after the player input, protected while tool results are trimmed; committed in order; audit byte-identical', async () => {
    const { client, post } = await tenant();
    const { id } = await client.createSession({});
    const answers: { status: number; replayed: string | null; body: { executionId: string; turnId: string; messageId: string } }[] = [];
    onCall = async (request) => {
      if (answers.length > 0 || !firstStep(request)) return;
      // posted twice under one key while step 1 is in flight: one message, the same answer
      for (let i = 0; i < 2; i++) {
        const res = await post(`/v1/sessions/${id}/inputs`, { text: MID, midTurn: true }, { 'Idempotency-Key': 'lantern-1' });
        answers.push({ status: res.status, replayed: res.headers.get('idempotent-replayed'), body: (await res.json()) as (typeof answers)[number]['body'] });
      }
    };
    const { executionId, turnId } = await client.submit(id, toolHeavyInput(1));
    expect(await client.waitFor(executionId, 60_000)).toBe('committed');

    expect(answers.map((a) => [a.status, a.replayed])).toEqual([
      [202, null],
      [202, 'true'],
    ]);
    expect(answers[1].body).toEqual(answers[0].body);
    expect(answers[0].body).toEqual({ executionId, turnId, messageId: expect.any(String) });
    const events = await covel.engine.store.readStream(id);
    const mid = events.filter((e) => e.type === 'player-input.mid-turn@1');
    expect(mid.map((e) => e.data)).toEqual([{ executionId, turnId, messageId: answers[0].body.messageId, text: MID }]);

    const calls = events.filter((e): e is Calling => e.type === 'llm.calling@1');
    expect(calls).toHaveLength(SHELVES + 1);
    // step 1 was built before the message: it records none; every later step, the one message
    expect(calls.map((c) => c.data.midTurnMessages ?? 0)).toEqual([0, ...Array.from({ length: SHELVES }, () => 1)]);
    for (const c of calls.slice(1)) {
      const sent = (JSON.parse(c.data.body) as Sent).messages;
      const sections = c.data.layout!.messageSections;
      const input = sections.indexOf('player-input');
      // right after the player's input, whole, inside the current turn the budget keeps
      expect(sections[input + 1]).toBe('mid-turn');
      expect(sent[input]).toEqual({ role: 'user', content: toolHeavyInput(1) });
      expect(sent[input + 1]).toEqual({ role: 'user', content: MID });
      expect(c.data.budget!.stats.after).toBeLessThanOrEqual(c.data.budget!.stats.inputLimit);
    }
    // the window is tight: later steps trimmed tool results while the message stayed
    expect(calls.some((c) => c.data.budget!.stats.elided + c.data.budget!.stats.collapsed > 0)).toBe(true);
    // what was sent is what the log holds
    for (const c of calls) expect(emulator.requests.some((r) => r.raw === c.data.body)).toBe(true);

    // committed with the turn: input, the message (it came before the story), the story
    const rows = (await client.messages(id)).filter((m) => m.turnId === turnId);
    expect(rows.map((m) => [m.role, m.outputKind, m.text === MID])).toEqual([
      ['user', null, false],
      ['user', null, true],
      ['assistant', 'story', false],
    ]);
    expect(rows[0].text).toBe(toolHeavyInput(1));
    expect(await auditedIdentical(covel.engine, id, [turnId])).toEqual([true]);

    // the next turn's history holds the message between the input and the story
    const next = await client.submit(id, toolHeavyInput(2));
    expect(await client.waitFor(next.executionId, 60_000)).toBe('committed');
    const later = (await covel.engine.store.readStream(id)).filter((e): e is Calling => e.type === 'llm.calling@1' && e.data.turnId === next.turnId);
    const history = (JSON.parse(later[0].data.body) as Sent).messages.filter((_, i) => later[0].data.layout!.messageSections[i] === 'history');
    expect(history.map((m) => m.content)).toEqual([toolHeavyInput(1), MID, rows[2].text]);
    expect(await auditedIdentical(covel.engine, id, [turnId, next.turnId])).toEqual([true, true]);
  }, 120_000);

  it('a step rebuilds with the mid-turn messages it recorded, not those the log held before its call', async () => {
    const { client, post } = await tenant();
    const { id } = await client.createSession({});
    let posted = false;
    onCall = async (request) => {
      if (posted || !firstStep(request)) return;
      posted = true;
      expect((await post(`/v1/sessions/${id}/inputs`, { text: MID, midTurn: true })).status).toBe(202);
    };
    const { executionId, turnId } = await client.submit(id, toolHeavyInput(1));
    expect(await client.waitFor(executionId, 60_000)).toBe('committed');
    const events = await covel.engine.store.readStream(id);
    // the message moved before step 1's call (as if it landed between the step's build and its
    // append): step 1 recorded none, so its rebuild still has none and stays identical
    const at = events.findIndex((e) => e.type === 'player-input.mid-turn@1');
    const firstCall = events.findIndex((e) => e.type === 'llm.calling@1');
    const moved = [...events.slice(0, firstCall), events[at], ...events.slice(firstCall, at), ...events.slice(at + 1)].map((e, i) => ({
      ...e,
      streamVersion: i + 1,
    })) as StoredEvent[];
    const { catalog, providers, worlds, generations, media } = covel.engine;
    const rebuilt = await rebuildRequests(moved, catalog, providers, worlds, { historyReadLimit: 500, generations, media });
    const ofTurn = rebuilt.filter((c) => c.turnId === turnId);
    expect(ofTurn).toHaveLength(SHELVES + 1);
    expect(ofTurn.map((c) => c.identical)).toEqual(ofTurn.map(() => true));
    expect(ofTurn[0].sources.some((s) => s.section === 'mid-turn')).toBe(false);
    expect(ofTurn[1].sources.find((s) => s.section === 'mid-turn')?.items).toEqual([
      events[at].type === 'player-input.mid-turn@1' ? events[at].data.messageId : '',
    ]);
  }, 120_000);

  it('409 NO_RUNNING_TURN without a running turn (nothing recorded); 400 naming midTurn or formValues; 404 for another tenant', async () => {
    const { client, post } = await tenant();
    const { id } = await client.createSession({});
    const before = (await covel.engine.store.readStream(id)).length;
    const none = await post(`/v1/sessions/${id}/inputs`, { text: MID, midTurn: true });
    expect(none.status).toBe(409);
    expect(await none.json()).toEqual(expect.objectContaining({ code: 'NO_RUNNING_TURN', message: expect.stringContaining('no turn running') }));
    expect((await covel.engine.store.readStream(id)).length).toBe(before);

    const badFlag = await post(`/v1/sessions/${id}/inputs`, { text: MID, midTurn: 'yes' });
    expect(badFlag.status).toBe(400);
    expect(((await badFlag.json()) as { issues: { path: string }[] }).issues.map((i) => i.path)).toEqual(['midTurn']);
    const withForm = await post(`/v1/sessions/${id}/inputs`, { text: MID, midTurn: true, formValues: { a: 1 } });
    expect(withForm.status).toBe(400);
    expect(((await withForm.json()) as { issues: { path: string }[] }).issues.map((i) => i.path)).toEqual(['formValues']);

    const other = await tenant();
    const foreign = await other.post(`/v1/sessions/${id}/inputs`, { text: MID, midTurn: true });
    expect(foreign.status).toBe(404);
    expect(((await foreign.json()) as { code: string }).code).toBe('SESSION_NOT_FOUND');
    // midTurn: false is an ordinary input: it starts a turn
    const ordinary = await post(`/v1/sessions/${id}/inputs`, { text: toolHeavyInput(1), midTurn: false });
    expect(ordinary.status).toBe(202);
    expect(await client.waitFor(((await ordinary.json()) as { executionId: string }).executionId, 60_000)).toBe('committed');
    expect((await covel.engine.store.readStream(id)).some((e) => e.type === 'player-input.mid-turn@1')).toBe(false);
  }, 120_000);
});
