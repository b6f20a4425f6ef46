import { join } from 'node:path';
import { calls as second } from '../../../../test/fixtures/host-chain-plugins/b-second/server';
import { historyReadLimit } from '../../execution/deps';
import { TurnRunner } from '../../turn/turn-runner';
import { eventually, type TurnHarness, turnHarness } from '../../turn/test/harness';
import { rebuildRequests } from '../../audit/request-rebuild';

const CHAIN_PLUGINS = join(__dirname, '..', '..', '..', '..', 'test', 'fixtures', 'host-chain-plugins');
// the same module instance the host loaded (Jest's registry)
// eslint-disable-next-line @typescript-eslint/no-require-imports
const first = (require(join(CHAIN_PLUGINS, 'a-first', 'server', 'index.js')) as { calls: { transform: number } }).calls;

describe('prompt.history-transform@1 as a chain, and PreLLMCall, in real turns', () => {
  let h: TurnHarness;
  beforeAll(async () => {
    h = await turnHarness({ pluginsDir: CHAIN_PLUGINS, handlers: (deps) => new TurnRunner(deps) });
  });
  afterAll(() => h.close());

  it('each provider gets the previous one’s result on a copy; the stored history is untouched; the hook rewrites the request; the rebuild runs nothing', async () => {
    const session = await h.session();
    for (const text of ['Knock twice', 'Knock again']) {
      const job = await h.input(session, text);
      await h.queue.enqueue(job);
      await eventually(async () => (await h.deps.readModels.execution(job.tenantId, job.executionId))?.status === 'committed', 'committed');
    }
    expect(first.transform).toBe(2);
    expect(second.transform).toBe(2);
    expect(second.preLlm).toBe(2);

    const calling = (await h.events(session.sessionId)).filter((e) => e.type === 'llm.calling@1');
    const last = calling.at(-1)!.data as { body: string; layout: { messageSections: string[] } };
    const body = JSON.parse(last.body) as { model: string; messages: { role: string; content: string }[] };
    const history = body.messages.filter((_, i) => last.layout.messageSections[i] === 'history');
    // a-first (CommonJS entry) ran first, b-second on its result
    expect(history.map((m) => m.content)).toEqual(['Knock twice ¹ ²', expect.stringMatching(/ ¹ ²$/)]);
    expect(body.messages[0].content).toMatch(new RegExp(`\\[before the call: ${body.model}\\]$`));
    // the store keeps what was said (a-first edited its input in place: a copy)
    const stored = await h.deps.readModels.messages(session.tenantId, session.sessionId);
    expect(stored.map((m) => m.text)).toEqual(['Knock twice', expect.not.stringMatching(/¹|²/), 'Knock again', expect.not.stringMatching(/¹|²/)]);

    const counts = [first.transform, second.transform, second.preLlm];
    const rebuilt = await rebuildRequests(await h.events(session.sessionId), h.deps.catalog, h.deps.providers, h.deps.worlds, {
      historyReadLimit: historyReadLimit(h.deps),
    });
    expect(rebuilt.map((c) => c.identical)).toEqual([true, true]);
    expect([first.transform, second.transform, second.preLlm]).toEqual(counts);
  });
});
