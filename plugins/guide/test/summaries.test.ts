import { join } from 'node:path';
import { createPluginHarness, type HarnessTurn, type PluginHarness } from '../../../libs/plugin-testing';

jest.setTimeout(300_000);

const ROOT = join(__dirname, '..', '..', '..');

/**
 * `includeSummaries: true` through the real compaction: history-compaction (the default
 * history.compact@2 provider) is loaded here only to produce summaries on a small window.
 */
describe('guide with summaries (maxTurns 2, includeSummaries: true)', () => {
  let h: PluginHarness;
  const turns: HarnessTurn[] = [];
  beforeAll(async () => {
    h = await createPluginHarness({
      plugins: [join(ROOT, 'plugins', 'narrator'), join(ROOT, 'plugins', 'history-compaction'), join(__dirname, '..')],
      world: join(ROOT, 'worlds', 'emberback'),
      llmConfig: join(__dirname, 'fixtures', 'small-window.toml'),
      turnTimeoutMs: 120_000,
    });
    for (let i = 1; i <= 14; i++) turns.push(await h.turn(`Turn ${i}: ${'I search the ferry landing plank by plank, reading every mark aloud. '.repeat(40)}`));
  });
  afterAll(() => h.close());

  it('reads the saved summaries, as the narrator does, and still only the last two turns of history', async () => {
    expect((await h.events()).some((e) => e.type === 'history.compacted@1')).toBe(true);
    const later = turns.filter((t) => t.request('narrator').messages.some((m) => m.section === 'summary'));
    expect(later.length).toBeGreaterThan(0);
    for (const turn of later) {
      const request = turn.request('guide');
      const summary = request.messages.filter((m) => m.section === 'summary');
      expect(summary).toHaveLength(1);
      expect(summary[0].content).toContain('<compacted_history>');
      const inputs = request.messages.filter((m) => m.section === 'history' && m.role === 'user');
      expect(inputs.length).toBeLessThanOrEqual(2);
    }
  });
});
