import { startStack, type Stack } from '../support/stack';

/** Real PostgreSQL + Redis + BullMQ: the API process and two worker processes. */
describe('20 sessions x 5 inputs on two workers', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ workers: 2 });
  }, 120_000);
  afterAll(() => stack?.stop(), 60_000);

  it('commits every turn; turn_messages has one user and one assistant row per turn, in order', async () => {
    const { client } = stack;
    const sessions = await Promise.all(Array.from({ length: 20 }, () => client.createSession()));
    // all 100 inputs are posted at once: each session's five race each other too
    const submitted = await Promise.all(
      sessions.flatMap((s, i) =>
        Array.from({ length: 5 }, (_, n) =>
          client.submit(s.id, `session ${i} input ${n}`).then((r) => ({ ...r, sessionId: s.id, text: `session ${i} input ${n}` })),
        ),
      ),
    );
    await Promise.all(submitted.map((s) => client.waitFor(s.executionId, 180_000)));

    for (const session of sessions) {
      const messages = await client.messages(session.id);
      expect(messages).toHaveLength(10);
      const mine = submitted.filter((s) => s.sessionId === session.id);
      for (let t = 0; t < 5; t++) {
        const [user, assistant] = [messages[2 * t], messages[2 * t + 1]];
        expect(user.role).toBe('user');
        expect(assistant.role).toBe('assistant');
        expect(assistant.turnId).toBe(user.turnId);
        expect(mine.map((m) => m.turnId)).toContain(user.turnId);
        expect(mine.find((m) => m.turnId === user.turnId)!.text).toBe(user.text);
      }
      expect(new Set(messages.map((m) => m.turnId)).size).toBe(5);
    }
    // both workers did work
    const calls = await Promise.all(sessions.map((s) => client.request<{ executionId: string }[]>('GET', `/v1/sessions/${s.id}/llm-calls`)));
    expect(calls.flat()).toHaveLength(100);
    const executions = await Promise.all(submitted.map((s) => client.request<{ workerId: string }>('GET', `/v1/executions/${s.executionId}`)));
    expect(new Set(executions.map((e) => e.workerId))).toEqual(new Set(['w1', 'w2']));
  }, 240_000);
});
