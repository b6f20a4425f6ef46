import { PlayClient } from '../../apps/play/play-client';
import { ProviderEmulator } from '../../libs/emulator';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';
import { storyScript } from '../support/cancel';
import { expectOneEndEach, raceCancelsAgainstCommits } from '../support/cancel-race';

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
    expectOneEndEach(outcomes);
  }, 300_000);
});
