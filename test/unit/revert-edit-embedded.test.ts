import { randomUUID } from 'node:crypto';
import { PlayClient } from '../../apps/play/play-client';
import type { StoredEvent } from '../../libs/events';
import { startEmbedded, type EmbeddedEngine } from '../support/embedded';
import { playTurns } from '../support/turns';

interface Answer {
  status: number;
  body: Record<string, unknown>;
  replayed: boolean;
}

interface MessageRow {
  messageId: string;
  turnId: string;
  order: number;
  role: string;
  sourceType: string;
  outputKind: string | null;
  text: string;
}

/** Issue 30, undo and edit (the write side and the API), and selecting an alternative by its number, on the embedded default over HTTP. */
describe('undo, edit and select by number (embedded default)', () => {
  let covel: EmbeddedEngine;
  let keyA: string;
  let tenantA: string;
  /** Who the log says acted: tenant A's key (`key:<id>`). */
  let byA: string;
  let keyB: string;
  beforeAll(async () => {
    // no sweeper pass during the tests: an input appended without its job stays pending
    covel = await startEmbedded({ COVEL_SWEEP_INTERVAL_MS: '3600000' });
    const a = await covel.engine.tenants.create('a');
    [keyA, tenantA, byA] = [a.apiKey, a.tenant.id, `key:${a.key.id}`];
    keyB = (await covel.engine.tenants.create('b')).apiKey;
  });
  afterAll(() => covel.stop());

  async function call(
    method: 'GET' | 'POST' | 'PATCH',
    path: string,
    options: { body?: unknown; rawBody?: string; key?: string; apiKey?: string } = {},
  ): Promise<Answer> {
    const body = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
    const res = await fetch(`${covel.baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${options.apiKey ?? keyA}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(options.key === undefined ? {} : { 'idempotency-key': options.key }),
      },
      ...(body === undefined ? {} : { body }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown>, replayed: res.headers.get('idempotent-replayed') === 'true' };
  }
  const revert = (sessionId: string, turnId: string, options: { key?: string; apiKey?: string; body?: unknown } = {}) =>
    call('POST', `/v1/sessions/${sessionId}/turns/${turnId}/revert`, options);
  const edit = (sessionId: string, messageId: string, body: unknown, options: { key?: string; apiKey?: string } = {}) =>
    call('PATCH', `/v1/sessions/${sessionId}/messages/${messageId}`, { body, ...options });
  const selectNumber = (sessionId: string, turnId: string, n: number | string, options: { key?: string; apiKey?: string } = {}) =>
    call('POST', `/v1/sessions/${sessionId}/turns/${turnId}/alternatives/${n}/select`, options);
  const clientA = () => new PlayClient(covel.baseUrl, keyA);
  const history = (sessionId: string) => clientA().request<MessageRow[]>('GET', `/v1/sessions/${sessionId}/messages`);
  const events = (sessionId: string) => covel.engine.store.readStream(sessionId);
  const ofType = <T extends StoredEvent['type']>(all: StoredEvent[], type: T) => all.filter((e): e is Extract<StoredEvent, { type: T }> => e.type === type);

  async function sessionWithTurns(texts: string[], body: Parameters<PlayClient['createSession']>[0] = {}): Promise<{ sessionId: string; turnIds: string[] }> {
    const a = clientA();
    const { id } = await a.createSession(body);
    return { sessionId: id, turnIds: await playTurns(a, id, texts) };
  }

  /** Regenerates the session's latest turn and waits for it; its execution and turn ids. */
  async function regenerate(sessionId: string, turnId: string): Promise<{ executionId: string; turnId: string }> {
    const { status, body } = await call('POST', `/v1/sessions/${sessionId}/turns/${turnId}/retry`);
    expect(status).toBe(202);
    expect(await clientA().waitFor(body.executionId as string, 20_000)).toBe('committed');
    return body as { executionId: string; turnId: string };
  }

  /** An input recorded without its job (the sweeper is off): the session has an execution queued. */
  async function pendingInput(sessionId: string): Promise<{ executionId: string; turnId: string }> {
    const [executionId, turnId] = [randomUUID(), randomUUID()];
    await covel.engine.store.append({
      tenantId: tenantA,
      streamId: sessionId,
      expectedVersion: await covel.engine.store.streamVersion(sessionId),
      events: [{ type: 'player-input.submitted@1', data: { executionId, turnId, messageId: randomUUID(), text: 'Wait' } }],
    });
    return { executionId, turnId };
  }

  /** Ends a pending execution as failed (as a worker records it). */
  async function fail(sessionId: string, pending: { executionId: string; turnId: string }) {
    await covel.engine.store.append({
      tenantId: tenantA,
      streamId: sessionId,
      expectedVersion: await covel.engine.store.streamVersion(sessionId),
      events: [{ type: 'execution.failed@1', data: { ...pending, attempt: 0, error: { code: 'TEST_FAILURE', message: 'made to fail' } } }],
    });
  }

  describe('POST …/turns/:turnId/revert', () => {
    it('reverts the turn and every later one in one event: every alternative and failed run of them, oldest first', async () => {
      const { sessionId, turnIds } = await sessionWithTurns(['Light the lantern', 'Open the door', 'Step inside']);
      const regenerated = await regenerate(sessionId, turnIds[2]);
      const failed = await pendingInput(sessionId);
      await fail(sessionId, failed);
      const inputs = ofType(await events(sessionId), 'player-input.submitted@1').map((e) => e.data);
      expect(inputs).toHaveLength(5);

      const answer = await revert(sessionId, turnIds[1]);
      expect(answer.status).toBe(200);
      // turn 2, then the selected alternative of turn 3 (the regeneration); the executions in the order they were submitted
      expect(answer.body).toEqual({
        turnId: turnIds[1],
        turnIds: [turnIds[1], regenerated.turnId],
        executionIds: inputs.slice(1).map((d) => d.executionId),
      });
      const recorded = ofType(await events(sessionId), 'turn.reverted@1');
      expect(recorded.map((e) => e.data)).toEqual([{ ...answer.body, by: byA }]);

      // it is no longer in the history: a second revert of it, or of a later turn, is 404 and records nothing
      expect(await revert(sessionId, turnIds[1])).toMatchObject({ status: 404, body: { code: 'TURN_NOT_FOUND' } });
      expect(await revert(sessionId, regenerated.turnId)).toMatchObject({ status: 404, body: { code: 'TURN_NOT_FOUND' } });
      expect(ofType(await events(sessionId), 'turn.reverted@1')).toHaveLength(1);
    });

    it('a later revert names only what is still in the history: turns played after an undo, not the ones it took out', async () => {
      const { sessionId, turnIds } = await sessionWithTurns(['Look', 'Listen', 'Wait']);
      const first = await revert(sessionId, turnIds[1], { body: {} });
      expect(first.status).toBe(200);
      const [later] = await playTurns(clientA(), sessionId, ['Run']);
      const second = await revert(sessionId, turnIds[0]);
      expect(second.status).toBe(200);
      const inputs = ofType(await events(sessionId), 'player-input.submitted@1').map((e) => e.data);
      expect(second.body).toEqual({ turnId: turnIds[0], turnIds: [turnIds[0], later], executionIds: [inputs[0].executionId, inputs[3].executionId] });
    });

    it('refuses the opening (409), a running execution (409), an alternative not selected, an unknown turn and other tenants (404)', async () => {
      const { sessionId, turnIds } = await sessionWithTurns(['Knock'], { worldId: 'emberback' });
      const opening = (await history(sessionId))[0];
      expect(opening.order).toBe(1);
      expect(await revert(sessionId, opening.turnId)).toMatchObject({ status: 409, body: { code: 'OPENING_NOT_REVERTIBLE' } });

      expect(await revert(sessionId, randomUUID())).toMatchObject({ status: 404, body: { code: 'TURN_NOT_FOUND' } });
      expect((await revert(sessionId, 'not-a-uuid')).status).toBe(404);
      expect(await revert(sessionId, turnIds[0], { apiKey: keyB })).toMatchObject({ status: 404, body: { code: 'SESSION_NOT_FOUND' } });
      // a body with fields is refused naming them
      expect(await revert(sessionId, turnIds[0], { body: { turnIds: [] } })).toMatchObject({ status: 400 });

      // the original of a regenerated turn is not in the history (its regeneration is)
      const regenerated = await regenerate(sessionId, turnIds[0]);
      expect(await revert(sessionId, turnIds[0])).toMatchObject({ status: 404, body: { code: 'TURN_NOT_FOUND' } });

      await pendingInput(sessionId);
      expect(await revert(sessionId, regenerated.turnId)).toMatchObject({ status: 409, body: { code: 'TURN_RUNNING' } });
      expect(ofType(await events(sessionId), 'turn.reverted@1')).toHaveLength(0);
    });

    it('a compacted turn may be reverted', async () => {
      const { sessionId, turnIds } = await sessionWithTurns(['Sit', 'Stand']);
      const rows = await history(sessionId);
      const firstTurn = rows.filter((m) => m.turnId === turnIds[0]).map((m) => m.messageId);
      await covel.engine.store.append({
        tenantId: tenantA,
        streamId: sessionId,
        expectedVersion: await covel.engine.store.streamVersion(sessionId),
        events: [
          {
            type: 'history.compacted@1',
            data: { compactionId: randomUUID(), summaries: [{ summaryId: randomUUID(), messageIds: firstTurn, replacesSummaryIds: [], content: 'They sat.' }] },
          },
        ],
      });
      const answer = await revert(sessionId, turnIds[0]);
      expect(answer).toMatchObject({ status: 200, body: { turnIds } });
    });

    it('Idempotency-Key: a repeat answers the first revert and records nothing; the key for another request is 422', async () => {
      const { sessionId, turnIds } = await sessionWithTurns(['Climb', 'Jump']);
      const first = await revert(sessionId, turnIds[1], { key: 'undo-1' });
      expect(first).toMatchObject({ status: 200, replayed: false });
      const again = await revert(sessionId, turnIds[1], { key: 'undo-1' });
      expect(again).toEqual({ ...first, replayed: true });
      expect(ofType(await events(sessionId), 'turn.reverted@1')).toHaveLength(1);
      expect((await revert(sessionId, turnIds[0], { key: 'undo-1' })).status).toBe(422);
      expect((await revert(sessionId, turnIds[1], { key: 'undo-1', apiKey: keyB })).status).toBe(404);
    });
  });

  describe('PATCH …/messages/:messageId', () => {
    /** Family emoji (ZWJ sequence), CJK, Hebrew and Arabic (RTL) with a mark, a flag: kept as sent. */
    const UNICODE = 'Mira 👩‍👩‍👧‍👦 says 你好，世界 — שָׁלוֹם עוֹלָם، مرحبا بالعالم 🇯🇵 e\u0301';

    it('edits a player input and a story text, keeping the text byte for byte; the same text again records nothing', async () => {
      const { sessionId, turnIds } = await sessionWithTurns(['Light the lantern', 'Open the door']);
      const rows = await history(sessionId);
      const input = rows.find((m) => m.turnId === turnIds[0] && m.sourceType === 'player')!;
      const story = rows.find((m) => m.turnId === turnIds[0] && m.outputKind === 'story')!;

      const edited = await edit(sessionId, input.messageId, { text: UNICODE });
      expect(edited).toEqual({ status: 200, body: { messageId: input.messageId, turnId: turnIds[0], text: UNICODE }, replayed: false });
      const storyEdit = await edit(sessionId, story.messageId, { text: '你好' });
      expect(storyEdit.body).toEqual({ messageId: story.messageId, turnId: turnIds[0], text: '你好' });

      const recorded = ofType(await events(sessionId), 'message.edited@1');
      expect(recorded.map((e) => e.data)).toEqual([
        { messageId: input.messageId, turnId: turnIds[0], text: UNICODE, by: byA },
        { messageId: story.messageId, turnId: turnIds[0], text: '你好', by: byA },
      ]);
      expect(Buffer.from(recorded[0].data.text, 'utf8').equals(Buffer.from(UNICODE, 'utf8'))).toBe(true);

      // the text it already has: the same answer, nothing recorded
      const count = (await events(sessionId)).length;
      expect(await edit(sessionId, input.messageId, { text: UNICODE })).toEqual(edited);
      expect(await events(sessionId)).toHaveLength(count);
    });

    it('the next request and the messages view read the edited text', async () => {
      const { sessionId, turnIds } = await sessionWithTurns(['Light the lantern']);
      const story = (await history(sessionId)).find((m) => m.turnId === turnIds[0] && m.outputKind === 'story')!;
      expect((await edit(sessionId, story.messageId, { text: 'The lantern burns 🔥 青い炎' })).status).toBe(200);
      expect((await history(sessionId)).find((m) => m.messageId === story.messageId)!.text).toBe('The lantern burns 🔥 青い炎');
      const [next] = await playTurns(clientA(), sessionId, ['Look around']);
      const calls = ofType(await events(sessionId), 'llm.calling@1').filter((e) => e.data.turnId === next);
      expect(calls.length).toBeGreaterThan(0);
      for (const c of calls) {
        expect(c.data.body).toContain(JSON.stringify('The lantern burns 🔥 青い炎').slice(1, -1));
        expect(c.data.body).not.toContain(JSON.stringify(story.text).slice(1, -1));
      }
    });

    it('text is validated as message.edited@1 says: 400 naming `text`', async () => {
      const { sessionId, turnIds } = await sessionWithTurns(['Wait']);
      const input = (await history(sessionId)).find((m) => m.turnId === turnIds[0] && m.sourceType === 'player')!;
      const issuesOf = async (payload: { body?: unknown; rawBody?: string }) => {
        const answer = await call('PATCH', `/v1/sessions/${sessionId}/messages/${input.messageId}`, payload);
        expect(answer.status).toBe(400);
        return (answer.body.issues as { path: string }[]).map((i) => i.path);
      };
      expect(await issuesOf({ body: { text: '' } })).toEqual(['text']);
      expect(await issuesOf({ body: { text: ' \n\t ' } })).toEqual(['text']);
      expect(await issuesOf({ body: {} })).toEqual(['text']);
      expect(await issuesOf({ body: { text: 'x'.repeat(64_001) } })).toEqual(['text']);
      expect(await issuesOf({ rawBody: '{"text":"lone \\ud800 surrogate"}' })).toEqual(['text']);
      expect(await issuesOf({ body: { text: 'ok', regenerate: 'yes' } })).toEqual(['regenerate']);
      // 64,000 code points (astral ones: 128,000 UTF-16 units) is within the limit
      const longest = '😀'.repeat(16_000) + 'x'.repeat(48_000);
      expect((await edit(sessionId, input.messageId, { text: longest })).status).toBe(200);
      expect(ofType(await events(sessionId), 'message.edited@1').map((e) => e.data.text)).toEqual([longest]);
    });

    it('refuses other messages (409), compacted ones (409), a running execution (409), unknown and reverted ones and other tenants (404)', async () => {
      const { sessionId, turnIds } = await sessionWithTurns(['Sit', 'Stand', 'Walk']);
      const rows = await history(sessionId);
      const first = rows.filter((m) => m.turnId === turnIds[0]);
      // the guide's structured output (a recap and hint for the player) is not story text
      const guided = await sessionWithTurns(['Ask for a hint'], { plugins: ['narrator', 'guide'] });
      const structured = (await history(guided.sessionId)).find((m) => m.outputKind === 'structured')!;
      expect(structured).toBeDefined();
      const notEditable = await edit(guided.sessionId, structured.messageId, { text: 'x' });
      expect(notEditable).toMatchObject({ status: 409, body: { code: 'MESSAGE_NOT_EDITABLE' } });

      expect(await edit(sessionId, randomUUID(), { text: 'x' })).toMatchObject({ status: 404, body: { code: 'MESSAGE_NOT_FOUND' } });
      expect(await edit(sessionId, 'not-a-uuid', { text: 'x' })).toMatchObject({ status: 404, body: { code: 'MESSAGE_NOT_FOUND' } });
      expect(await edit(sessionId, first[0].messageId, { text: 'x' }, { apiKey: keyB })).toMatchObject({ status: 404 });
      // a message of another session of the tenant is not this session's
      const elsewhere = await sessionWithTurns(['Elsewhere']);
      expect(await edit(elsewhere.sessionId, first[0].messageId, { text: 'x' })).toMatchObject({ status: 404, body: { code: 'MESSAGE_NOT_FOUND' } });

      await covel.engine.store.append({
        tenantId: tenantA,
        streamId: sessionId,
        expectedVersion: await covel.engine.store.streamVersion(sessionId),
        events: [
          {
            type: 'history.compacted@1',
            data: {
              compactionId: randomUUID(),
              summaries: [{ summaryId: randomUUID(), messageIds: first.map((m) => m.messageId), replacesSummaryIds: [], content: 'They sat.' }],
            },
          },
        ],
      });
      expect(await edit(sessionId, first[0].messageId, { text: 'x' })).toMatchObject({ status: 409, body: { code: 'MESSAGE_COMPACTED' } });

      // a reverted turn's message is no longer in the history
      expect((await revert(sessionId, turnIds[2])).status).toBe(200);
      const reverted = rows.find((m) => m.turnId === turnIds[2] && m.sourceType === 'player')!;
      expect(await edit(sessionId, reverted.messageId, { text: 'x' })).toMatchObject({ status: 404, body: { code: 'MESSAGE_NOT_FOUND' } });

      const second = rows.find((m) => m.turnId === turnIds[1] && m.sourceType === 'player')!;
      const pending = await pendingInput(sessionId);
      expect(await edit(sessionId, second.messageId, { text: 'x' })).toMatchObject({ status: 409, body: { code: 'TURN_RUNNING' } });
      await fail(sessionId, pending);
      expect(ofType(await events(sessionId), 'message.edited@1')).toHaveLength(0);
    });

    it('regenerate: the edit and the re-run of the latest turn with the edited input, in one append', async () => {
      const { sessionId, turnIds } = await sessionWithTurns(['Open the door', 'Close the door']);
      const rows = await history(sessionId);
      const input = rows.find((m) => m.turnId === turnIds[1] && m.sourceType === 'player')!;
      const text = 'Knock three times 🚪 ノックする';
      const answer = await edit(sessionId, input.messageId, { text, regenerate: true }, { key: 'edit-and-run' });
      expect(answer.status).toBe(200);
      const execution = answer.body.execution as { executionId: string; turnId: string };
      expect(answer.body).toEqual({
        messageId: input.messageId,
        turnId: turnIds[1],
        text,
        execution: { executionId: expect.any(String), turnId: expect.any(String) },
      });
      expect(await clientA().waitFor(execution.executionId, 20_000)).toBe('committed');

      const all = await events(sessionId);
      const editAt = all.findIndex((e) => e.type === 'message.edited@1');
      expect(all[editAt].data).toEqual({ messageId: input.messageId, turnId: turnIds[1], text, by: byA });
      // the regeneration's input right after the edit: the same append (consecutive versions)
      expect(all[editAt + 1]).toMatchObject({
        type: 'player-input.submitted@1',
        streamVersion: all[editAt].streamVersion + 1,
        data: { executionId: execution.executionId, turnId: execution.turnId, text, retryFromTurnId: turnIds[1], alternativeOf: turnIds[1] },
      });
      // the history shows the regenerated turn, its input the edited text
      const after = await history(sessionId);
      expect(after.filter((m) => m.turnId === execution.turnId && m.sourceType === 'player').map((m) => m.text)).toEqual([text]);

      // a repeat answers the first and starts nothing
      expect(await edit(sessionId, input.messageId, { text, regenerate: true }, { key: 'edit-and-run' })).toEqual({ ...answer, replayed: true });
      expect(ofType(await events(sessionId), 'player-input.submitted@1')).toHaveLength(3);
    });

    it('regenerate with the text already there re-runs the turn alone; a later retry takes the edited input', async () => {
      const { sessionId, turnIds } = await sessionWithTurns(['Whistle']);
      const input = (await history(sessionId)).find((m) => m.sourceType === 'player')!;
      expect((await edit(sessionId, input.messageId, { text: 'Sing 🎶' })).status).toBe(200);
      // a plain retry: the input as the history has it now (edited)
      const retried = await regenerate(sessionId, turnIds[0]);
      const retryInput = ofType(await events(sessionId), 'player-input.submitted@1').find((e) => e.data.turnId === retried.turnId)!;
      expect(retryInput.data.text).toBe('Sing 🎶');

      // the regenerated turn's input says "Sing 🎶" already: regenerate appends the re-run only, and a repeat answers it
      const rerunInput = (await history(sessionId)).find((m) => m.turnId === retried.turnId && m.sourceType === 'player')!;
      const again = await edit(sessionId, rerunInput.messageId, { text: 'Sing 🎶', regenerate: true }, { key: 'rerun-same' });
      expect(again.status).toBe(200);
      const execution = again.body.execution as { executionId: string };
      await clientA().waitFor(execution.executionId, 20_000);
      expect(ofType(await events(sessionId), 'message.edited@1')).toHaveLength(1);
      expect(await edit(sessionId, rerunInput.messageId, { text: 'Sing 🎶', regenerate: true }, { key: 'rerun-same' })).toEqual({ ...again, replayed: true });
    });

    it('regenerate only for the latest turn’s player input: 409 NOT_LATEST_TURN for an older turn, 400 naming `regenerate` for a story text', async () => {
      const { sessionId, turnIds } = await sessionWithTurns(['North', 'South']);
      const rows = await history(sessionId);
      const older = rows.find((m) => m.turnId === turnIds[0] && m.sourceType === 'player')!;
      const story = rows.find((m) => m.turnId === turnIds[1] && m.outputKind === 'story')!;
      expect(await edit(sessionId, older.messageId, { text: 'East', regenerate: true })).toMatchObject({ status: 409, body: { code: 'NOT_LATEST_TURN' } });
      const storyAnswer = await edit(sessionId, story.messageId, { text: 'West', regenerate: true });
      expect(storyAnswer.status).toBe(400);
      expect(storyAnswer.body.issues).toEqual([expect.objectContaining({ path: 'regenerate' })]);
      const all = await events(sessionId);
      expect(ofType(all, 'message.edited@1')).toHaveLength(0);
      expect(ofType(all, 'player-input.submitted@1')).toHaveLength(2);
    });
  });

  describe('POST …/turns/:turnId/alternatives/:n/select', () => {
    it('selects by number in the listed order (1: as first played); a number out of range, another tenant: 404; a repeat answers the first', async () => {
      const { sessionId, turnIds } = await sessionWithTurns(['Roll the dice']);
      const regenerated = await regenerate(sessionId, turnIds[0]);
      const listed = (await call('GET', `/v1/sessions/${sessionId}/turns/${turnIds[0]}/alternatives`)).body as {
        alternatives: { id: string; turnId: string }[];
      };

      const first = await selectNumber(sessionId, regenerated.turnId, 1, { key: 'pick-1' });
      expect(first).toEqual({ status: 200, body: { alternativeId: listed.alternatives[0].id, turnId: turnIds[0] }, replayed: false });
      expect((await history(sessionId)).every((m) => m.turnId === turnIds[0])).toBe(true);
      expect(await selectNumber(sessionId, regenerated.turnId, 1, { key: 'pick-1' })).toEqual({ ...first, replayed: true });

      const second = await selectNumber(sessionId, turnIds[0], 2);
      expect(second.body).toEqual({ alternativeId: listed.alternatives[1].id, turnId: regenerated.turnId });
      expect(ofType(await events(sessionId), 'turn.superseded@1').map((e) => e.data.cause)).toEqual(['retry', 'select', 'select']);

      for (const n of [3, 0, 'x', '01', '-1'])
        expect(await selectNumber(sessionId, turnIds[0], n)).toMatchObject({ status: 404, body: { code: 'ALTERNATIVE_NOT_FOUND' } });
      expect(await selectNumber(sessionId, turnIds[0], 1, { apiKey: keyB })).toMatchObject({ status: 404, body: { code: 'SESSION_NOT_FOUND' } });
      expect(await selectNumber(sessionId, randomUUID(), 1)).toMatchObject({ status: 404, body: { code: 'TURN_NOT_FOUND' } });
      // the key guards the request as sent: another number is another request
      expect((await selectNumber(sessionId, turnIds[0], 2, { key: 'pick-1' })).status).toBe(422);

      // as `…/select` refuses it: an older turn, a running execution
      const [later] = await playTurns(clientA(), sessionId, ['Roll again']);
      expect(await selectNumber(sessionId, turnIds[0], 1)).toMatchObject({ status: 409, body: { code: 'NOT_LATEST_TURN' } });
      await pendingInput(sessionId);
      expect(await selectNumber(sessionId, later, 1)).toMatchObject({ status: 409, body: { code: 'TURN_RUNNING' } });
    });
  });
});
