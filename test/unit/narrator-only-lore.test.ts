import { type EmbeddedEngine, startEmbedded } from '../support/embedded';
import { auditedIdentical, playTurns } from '../support/turns';

const SECRET = 'Warden Tomas hides the true tremor count';

/** Issue 28 item 4: Emberback's narrator-only secret reaches the story runtime and no other. */
describe("Emberback's narrator-only lore through real turns", () => {
  let covel: EmbeddedEngine;
  beforeAll(async () => {
    covel = await startEmbedded();
  }, 60_000);
  afterAll(() => covel?.stop());

  it("the narrator's requests hold the secret; the guide's and the bookkeepers' never do, nor any marker line", async () => {
    const client = await covel.newTenant();
    const { id } = await client.createSession({ worldId: 'emberback' });
    const turnIds = await playTurns(client, id, ['Ring the bell three times', 'Ask Tomas about the ledger']);
    const events = await covel.engine.store.readStream(id);
    const storyRuntimes = new Set(
      events
        .filter((e) => e.type === 'runtime.output.produced@1' && (e.data as { outputKind: string }).outputKind === 'story')
        .map((e) => (e.data as { runtimeId: string }).runtimeId),
    );
    expect([...storyRuntimes]).toEqual(['narrator']);
    const calls = events.filter((e) => e.type === 'llm.calling@1').map((e) => e.data as { pluginId: string; runtimeId: string; body: string });
    const story = calls.filter((c) => storyRuntimes.has(c.runtimeId));
    const others = calls.filter((c) => !storyRuntimes.has(c.runtimeId));
    expect(story.length).toBeGreaterThanOrEqual(2);
    for (const c of story) expect(c.body).toContain(SECRET);
    // the guide and the bookkeepers ran, and got the rest of the lore
    const plugins = new Set(others.map((c) => c.pluginId));
    for (const plugin of ['guide', 'memory', 'codex', 'char-creator', 'world-init']) expect([plugin, plugins.has(plugin)]).toEqual([plugin, true]);
    for (const c of others) {
      expect([c.pluginId, c.body.includes(SECRET)]).toEqual([c.pluginId, false]);
      if (c.body.includes('<world-lore>')) expect([c.pluginId, c.body.includes('three terraces')]).toEqual([c.pluginId, true]);
    }
    expect(others.filter((c) => c.body.includes('<world-lore>')).length).toBeGreaterThan(0);
    for (const c of calls) expect(c.body).not.toContain('narrator-only');
    expect(await auditedIdentical(covel.engine, id, turnIds)).toEqual([true, true]);
  }, 120_000);
});
