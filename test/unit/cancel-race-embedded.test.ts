import { PlayClient } from '../../apps/play/play-client';
import { ProviderEmulator } from '../../libs/emulator';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';
import { SHORT_STORY, storyScript } from '../support/cancel';
import { raceCancelsAgainstCommits } from '../support/cancel-race';

/** 100 cancels sent as their turn commits, on the embedded default (PGlite, in-process queue): each turn ends as exactly one of the two. */
describe('cancel against commit (embedded default)', () => {
  let emulator: ProviderEmulator;
  let covel: EmbeddedEngine;

  beforeAll(async () => {
    emulator = await new ProviderEmulator({ chunkDelayMs: 5, script: storyScript() }).start();
    covel = await startEmbedded({ COVEL_EMULATOR_URL: emulator.url });
  }, 60_000);

  afterAll(async () => {
    await covel?.stop();
    await emulator?.stop();
  });

  it('100 races: committed xor cancelled, never both, never neither; the answer, the status and the log agree', async () => {
    const { apiKey } = await covel.engine.tenants.create('racer');
    const client = new PlayClient(covel.baseUrl, apiKey);
    const outcomes = await raceCancelsAgainstCommits(
      {
        client,
        baseUrl: covel.baseUrl,
        apiKey,
        newSession: async () => (await client.createSession({ worldId: 'emberback', plugins: ['narrator'] })).id,
        readStream: (sessionId) => covel.engine.store.readStream(sessionId),
      },
      100,
    );
    for (const o of outcomes) {
      expect(o.ends.committed + o.ends.cancelled).toBe(1);
      expect(o.status).toBe(o.ends.cancelled === 1 ? 'cancelled' : 'committed');
      expect(o.answer).toBe(o.status === 'cancelled' ? 200 : 409);
      // the history holds the commit's messages, the kept ones, or (a cancel without keepPartial) none
      if (o.status === 'committed') expect(o.history).toEqual([expect.stringMatching(/^Race \d+$/), SHORT_STORY]);
      else if (!o.keepPartial) expect(o.history).toEqual([]);
      else {
        // the client saw a word before it cancelled: there was story text to keep
        expect(o.kept).toEqual([expect.stringMatching(/^Race \d+$/), expect.any(String)]);
        expect(o.kept[1] !== '' && SHORT_STORY.startsWith(o.kept[1])).toBe(true);
        expect(o.history).toEqual(o.kept);
      }
    }
    // the races met the commit: both ends happened
    expect(outcomes.filter((o) => o.status === 'cancelled').length).toBeGreaterThan(0);
    expect(outcomes.filter((o) => o.status === 'committed').length).toBeGreaterThan(0);
  }, 300_000);
});
