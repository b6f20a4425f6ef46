import type { RecordedRequest } from '../../../emulator';
import { playTurn, storySlot, type TurnHarness, turnHarness } from '../../turn/test/harness';
import { TurnRunner } from '../../turn/turn-runner';

/** The runtimes of test/fixtures/staged-plugins that call a model: two in pre-turn, the narrator, recap after the stages. */
const RUNTIMES = ['mood/mood', 'scene/scene', 'narrator/narrator', 'recap/recap'];

/** The prompt_cache_key of each request the SDK sent, by the runtime its preamble names. */
function keysByRuntime(requests: readonly RecordedRequest[]): Map<string, unknown[]> {
  const keys = new Map<string, unknown[]>();
  for (const r of requests) {
    const runtime = RUNTIMES.find((id) => r.raw.includes(`You are the runtime ${id} `));
    if (!runtime) throw new Error(`a request of no known runtime: ${r.raw.slice(0, 200)}`);
    keys.set(runtime, [...(keys.get(runtime) ?? []), (r.body as { prompt_cache_key?: unknown }).prompt_cache_key]);
  }
  return keys;
}

/** The one key a runtime sent in a turn (every request of it the same). */
function keyOf(keys: Map<string, unknown[]>, runtime: string): string {
  const sent = keys.get(runtime) ?? [];
  expect(sent.length).toBeGreaterThan(0);
  expect(new Set(sent).size).toBe(1);
  expect(typeof sent[0]).toBe('string');
  return sent[0] as string;
}

// spec §5: "The two OpenAI protocols additionally send a prompt_cache_key generated per session and per runtime."
describe.each(['openai-chat', 'openai-responses'] as const)('prompt_cache_key on the wire (%s)', (protocol) => {
  let h: TurnHarness;
  beforeAll(async () => {
    h = await turnHarness({ handlers: (deps) => new TurnRunner(deps), llm: storySlot({ protocol }) });
  });
  afterAll(() => h.close());

  /** Plays one committed turn; the keys of the requests it sent, by runtime. */
  async function turn(session: { tenantId: string; sessionId: string }, text: string) {
    const from = h.emulator.requests.length;
    const { job, events } = await playTurn(h, session, text);
    expect(events.some((e) => e.type === 'turn.committed@1' && e.data.executionId === job.executionId)).toBe(true);
    return keysByRuntime(h.emulator.requests.slice(from));
  }

  it('one runtime sends the same key on every turn; two runtimes of one session, and two sessions of one runtime, send different keys', async () => {
    const a = await h.session();
    const b = await h.session();
    const a1 = await turn(a, 'Open the door');
    const a2 = await turn(a, 'Close the door');
    const b1 = await turn(b, 'Open the door');
    for (const keys of [a1, a2, b1]) expect([...keys.keys()].sort()).toEqual([...RUNTIMES].sort());

    // stable across turns, per runtime
    expect(RUNTIMES.map((r) => keyOf(a2, r))).toEqual(RUNTIMES.map((r) => keyOf(a1, r)));
    // one key per runtime within a session
    expect(new Set(RUNTIMES.map((r) => keyOf(a1, r))).size).toBe(RUNTIMES.length);
    // another session: every runtime's key differs from the first session's
    for (const r of RUNTIMES) expect(keyOf(b1, r)).not.toBe(keyOf(a1, r));
    expect(new Set(RUNTIMES.map((r) => keyOf(b1, r))).size).toBe(RUNTIMES.length);
  });
});
