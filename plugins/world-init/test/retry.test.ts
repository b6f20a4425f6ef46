import type { PluginHarness } from '../../../libs/plugin-testing';
import { blockOf, EMBERBACK, TRACKER, trackerTurn, worldInitHarness } from './support';

jest.setTimeout(120_000);

interface Message {
  role: string;
  content: string | { text?: string }[] | null;
}

/** Regenerates a turn through the engine (what `POST …/turns/:turnId/retry` does) and waits for it to end. */
async function retry(h: PluginHarness, turnId: string): Promise<string> {
  const { answer } = await h.engine.alternatives.retry({ tenantId: h.tenantId, sessionId: h.sessionId, turnId });
  for (;;) {
    const view = await h.engine.readModels.execution(h.tenantId, answer.executionId);
    if (view?.status === 'committed') return answer.executionId;
    if (view?.status === 'failed') throw new Error(`the retry failed: ${JSON.stringify(view)}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The text of every message a runtime's requests in an execution sent. */
async function sentText(h: PluginHarness, executionId: string, runtimeId: string): Promise<string[]> {
  const events = await h.events();
  return events.flatMap((e) => {
    if (e.type !== 'llm.calling@1' || e.data.executionId !== executionId || e.data.runtimeId !== runtimeId) return [];
    const body = JSON.parse(e.data.body) as { messages: Message[] };
    return [body.messages.map((m) => (typeof m.content === 'string' ? m.content : (m.content ?? []).map((p) => p.text ?? '').join(''))).join('\n')];
  });
}

describe('world-init: a regenerated turn reads the artifact its source turn read (retryFromTurnId)', () => {
  it('the retry’s narrative and tracker read Sₙ as published before the original turn, not what the replaced turn wrote; the retry’s write (alone) is what the next turn reads', async () => {
    const h = await worldInitHarness({
      world: EMBERBACK,
      replies: {
        [TRACKER]: [
          ...trackerTurn([{ id: 'dragon-sleep', value: 7 }]), // turn 1
          ...trackerTurn([{ id: 'dragon-sleep', value: 6 }]), // turn 2 (to be replaced)
          ...trackerTurn([{ id: 'season', value: 'winter' }]), // turn 2, regenerated: another dimension
          ...trackerTurn([]), // turn 3
        ],
        default: 'A tremor runs through the terraces.',
      },
    });
    try {
      await h.turn('I listen');
      const two = await h.turn('I stamp on the vent');
      expect(two.request('narrator').turnContext).toContain('- dragon-sleep (v2): 7\n');

      const again = await retry(h, two.turnId);
      const events = await h.events();
      expect(events.find((e) => e.type === 'player-input.submitted@1' && e.data.executionId === again)?.data).toMatchObject({ retryFromTurnId: two.turnId });
      const [narrative] = await sentText(h, again, 'narrator');
      // the original turn's artifact (dragon-sleep 7, v2), not the replaced turn's write (6)
      expect(blockOf(narrative, 'world-dimensions')).toContain('- dragon-sleep (v2): 7\n');
      const [tracker] = await sentText(h, again, 'dimension-tracker');
      expect(blockOf(tracker, 'dimension-values')).toContain('dragon-sleep: 7\n');
      // the artifact is published once per turn number: the regeneration did not publish another
      const published = await h.pluginData('world-init', 'published');
      expect(published.map((r) => r.key)).toEqual(['turn-000001', 'turn-000002']);

      const three = await h.turn('I wait');
      // the regeneration's write, built on the artifact: nothing of the replaced turn's write (6) leaks through
      expect(three.request('narrator').turnContext).toContain('- dragon-sleep (v2): 7\n');
      expect(three.request('narrator').turnContext).toContain('- season (v2): "winter"\n');
      expect(await h.audit()).toMatchObject({ identical: true });
    } finally {
      await h.close();
    }
  });

  it('after select picks the original alternative again, the next turn reads what the original’s tracker staged, not the regeneration’s', async () => {
    const h = await worldInitHarness({
      world: EMBERBACK,
      replies: {
        [TRACKER]: [
          ...trackerTurn([{ id: 'dragon-sleep', value: 7 }]), // turn 1, the original
          ...trackerTurn([{ id: 'dragon-sleep', value: 3 }]), // turn 1, regenerated
          ...trackerTurn([]), // turn 2
        ],
        default: 'A tremor runs through the terraces.',
      },
    });
    try {
      const one = await h.turn('I listen');
      const again = await retry(h, one.turnId);
      const regenerated = (await h.events()).find((e) => e.type === 'player-input.submitted@1' && e.data.executionId === again)!;
      const turnIdOfRetry = (regenerated.data as { turnId: string }).turnId;
      expect(turnIdOfRetry).not.toBe(one.turnId);
      await h.engine.alternatives.select({ tenantId: h.tenantId, sessionId: h.sessionId, turnId: turnIdOfRetry, alternativeId: one.executionId });
      const two = await h.turn('I wait');
      expect(two.request('narrator').turnContext).toContain('- dragon-sleep (v2): 7\n');
      expect(await h.audit()).toMatchObject({ identical: true });
    } finally {
      await h.close();
    }
  });
});
