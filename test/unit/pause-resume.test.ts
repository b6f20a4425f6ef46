import { join } from 'node:path';
import { auditTurn, DEFAULT_HISTORY_READ_LIMIT } from '../../libs/engine';
import { runLedger } from '../../libs/engine/budget';
import type { StoredEvent } from '../../libs/events';
import { startEmbedded, type EmbeddedEngine } from '../support/embedded';

const PLUGINS = join(__dirname, '..', 'fixtures', 'pause-plugins');

type Calling = Extract<StoredEvent, { type: 'llm.calling@1' }>;

/** The JSON inside `<runtime-inputs>` … `</runtime-inputs>` of a recorded request. */
function runtimeInputs(body: string): string {
  const match = /<runtime-inputs>\n([\s\S]*?)\n<\/runtime-inputs>/.exec(body.replace(/\\n/g, '\n'));
  if (!match) throw new Error('no <runtime-inputs> in the request');
  return match[1];
}

/** The recorded request's messages. */
const messagesOf = (body: string) => (JSON.parse(body) as { messages: { role: string; content: unknown }[] }).messages;

describe('a runtime that pauses on a tool and resumes (ctx.suspend, POST /v1/executions/:id/resume)', () => {
  let covel: EmbeddedEngine;
  let apiKey: string;
  beforeAll(async () => {
    covel = await startEmbedded({ COVEL_PLUGINS_DIR: PLUGINS });
    apiKey = (await covel.engine.tenants.create('pause')).apiKey;
  }, 60_000);
  afterAll(() => covel.stop());

  const post = async (path: string, body: unknown, headers: Record<string, string> = {}, key = apiKey) => {
    const res = await fetch(`${covel.baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
  };
  const get = async (path: string) =>
    (await (await fetch(`${covel.baseUrl}${path}`, { headers: { authorization: `Bearer ${apiKey}` } })).json()) as Record<string, unknown>;
  const events = (sessionId: string) => covel.engine.store.readStream(sessionId);

  /** Polls the execution until it shows `waiting` (the suspension is recorded and projected in the same append). */
  async function untilWaiting(executionId: string): Promise<Record<string, unknown>> {
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 20))) {
      const view = await get(`/v1/executions/${executionId}`);
      if (view.status === 'waiting') return view;
      if (view.status === 'committed' || view.status === 'failed') throw new Error(`execution ended ${String(view.status)} without waiting`);
    }
    throw new Error('the execution never waited');
  }

  it('suspends (waiting, nothing failed or retried), resumes once with the payload as the tool result: same inputs and protected range, one commit, audit identical', async () => {
    const session = (await post('/v1/sessions', {})).body as { id: string };
    const { executionId, turnId } = (await post(`/v1/sessions/${session.id}/inputs`, { text: 'Open the vault' })).body as {
      executionId: string;
      turnId: string;
    };
    const waiting = await untilWaiting(executionId);
    expect(waiting.waitingFor).toEqual({ kind: 'approval', prompt: 'Open the vault?' });

    const before = await events(session.id);
    const suspended = before.find((e) => e.type === 'execution.suspended@1')!;
    expect(suspended.data).toMatchObject({
      pluginId: 'gate',
      runtimeId: 'narrator',
      step: 1,
      name: 'ask-approval',
      currentTurnUserMessages: [{ role: 'user', content: 'Open the vault' }],
      inputs: [{ binding: 'mood', cardinality: 'one', value: 'tense', source: { pluginId: 'facts', runtimeId: 'facts' } }],
    });
    // the job ended without failing: no failure, no outcome for the call, no commit
    expect(before.map((e) => e.type)).not.toContain('execution.failed@1');
    expect(before.map((e) => e.type)).not.toContain('tool.completed@1');
    expect(before.map((e) => e.type)).not.toContain('turn.committed@1');

    // a missing payload names the field; unknown and foreign executions are not found
    const bad = await post(`/v1/executions/${executionId}/resume`, {});
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body.issues)).toContain('payload');
    expect((await post(`/v1/executions/00000000-0000-4000-8000-000000000000/resume`, { payload: true })).status).toBe(404);
    const other = (await covel.engine.tenants.create('other')).apiKey;
    expect((await post(`/v1/executions/${executionId}/resume`, { payload: true }, {}, other)).status).toBe(404);

    const resumed = await post(`/v1/executions/${executionId}/resume`, { payload: { approved: true } }, { 'Idempotency-Key': 'resume-1' });
    expect(resumed.status).toBe(202);
    expect(resumed.body).toMatchObject({ executionId, turnId });
    // the same key again answers the first resume; another resume is stale
    const repeat = await post(`/v1/executions/${executionId}/resume`, { payload: { approved: true } }, { 'Idempotency-Key': 'resume-1' });
    expect(repeat.status).toBe(202);
    expect(repeat.headers.get('Idempotent-Replayed')).toBe('true');
    expect(repeat.body.resumeId).toBe(resumed.body.resumeId);
    const stale = await post(`/v1/executions/${executionId}/resume`, { payload: { approved: false } });
    expect(stale.status).toBe(409);
    expect(stale.body.code).toBe('EXECUTION_NOT_WAITING');

    // wait for the commit through the long-poll
    for (
      let view = await get(`/v1/executions/${executionId}?waitMs=20000`);
      view.status !== 'committed';
      view = await get(`/v1/executions/${executionId}?waitMs=20000`)
    )
      expect(view.status).not.toBe('failed');
    const after = await events(session.id);
    expect(after.filter((e) => e.type === 'turn.committed@1')).toHaveLength(1);
    expect(after.filter((e) => e.type === 'execution.resumed@1')).toHaveLength(1);
    const calls = after.filter((e): e is Calling => e.type === 'llm.calling@1' && e.data.pluginId === 'gate');
    expect(calls.map((c) => c.data.step)).toEqual([1, 2]);
    expect(calls[1].data.attempt).toBeGreaterThan(calls[0].data.attempt); // the resume ran as a new attempt
    // the model reads the payload as the suspended call's result
    const toolMessage = messagesOf(calls[1].data.body).find((m) => m.role === 'tool')!;
    expect(toolMessage.content).toBe(JSON.stringify({ ok: true, data: { approved: true } }));
    // the same input slots and the same protected current turn as before the pause
    expect(runtimeInputs(calls[1].data.body)).toBe(runtimeInputs(calls[0].data.body));
    const userTexts = (body: string) => messagesOf(body).filter((m) => m.role === 'user' && m.content === 'Open the vault');
    expect(userTexts(calls[1].data.body)).toHaveLength(1);
    expect(userTexts(calls[0].data.body)).toHaveLength(1);
    // every request before and after the pause re-derives byte for byte
    const audit = await auditTurn({ ...covel.engine, historyReadLimit: DEFAULT_HISTORY_READ_LIMIT }, session.id, turnId);
    expect(audit.calls.length).toBeGreaterThanOrEqual(3);
    expect(audit.identical).toBe(true);
    const committed = (await get(`/v1/executions/${executionId}`)) as { status: string; waitingFor?: unknown };
    expect(committed.status).toBe('committed');
    expect(committed.waitingFor).toBeUndefined();
  }, 90_000);

  it('a committed execution is not waiting: 409', async () => {
    const session = (await post('/v1/sessions', {})).body as { id: string };
    const { executionId } = (await post(`/v1/sessions/${session.id}/inputs`, { text: 'Wait here' })).body as { executionId: string };
    await untilWaiting(executionId);
    expect((await post(`/v1/executions/${executionId}/resume`, { payload: 'yes' })).status).toBe(202);
    for (
      let view = await get(`/v1/executions/${executionId}?waitMs=20000`);
      view.status !== 'committed';
      view = await get(`/v1/executions/${executionId}?waitMs=20000`)
    )
      expect(view.status).not.toBe('failed');
    expect((await post(`/v1/executions/${executionId}/resume`, { payload: 'again' })).status).toBe(409);
  }, 90_000);

  it('resume starts a new ledger (spec §5): the steps up to the resumed suspension add nothing', () => {
    const entry = (n: number) => [{ kind: 'elide', id: `e${n}` }] as never;
    const recorded = new Map([
      [1, entry(1)],
      [2, entry(2)],
      [3, entry(3)],
    ]);
    expect(runLedger(recorded, 4).entries).toHaveLength(3);
    expect(runLedger(recorded, 4, 2).entries).toEqual(entry(3));
    expect(runLedger(recorded, 3, 2).entries).toEqual([]);
  });
});
