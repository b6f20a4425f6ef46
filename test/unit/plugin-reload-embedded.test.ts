import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbedded } from '../support/embedded';

const plugin = (version: string) =>
  `---\nid: teller\nname: Teller\nversion: 0.0.1\nruntime:\n  schedule:\n    stage: narrative\n  outputKind: story\n---\nTell the story (${version}) of turn {{ session.turnNumber }}.\n`;

describe('engine.reloadPlugins (SIGHUP): the embedded engine reads the plugin folders again', () => {
  it('the next turn uses the new body; the audit of the earlier turn, through the API, still rebuilds it byte for byte', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'covel-reload-'));
    mkdirSync(join(dir, 'teller'));
    writeFileSync(join(dir, 'teller', 'PLUGIN.md'), plugin('v1'));
    const covel = await startEmbedded({ COVEL_PLUGINS_DIR: dir });
    try {
      const client = await covel.newTenant();
      const { id } = await client.createSession({});
      const first = await client.submit(id, 'One');
      expect(await client.waitFor(first.executionId, 20_000)).toBe('committed');
      const before = covel.engine.catalog.generation;

      writeFileSync(join(dir, 'teller', 'PLUGIN.md'), plugin('v2'));
      const reload = await covel.engine.reloadPlugins();
      expect(reload).toMatchObject({ changed: true, held: [before, reload.generation] });
      expect(covel.engine.catalog.generation).toBe(reload.generation);

      const second = await client.submit(id, 'Two');
      expect(await client.waitFor(second.executionId, 20_000)).toBe('committed');
      const systems = (await covel.engine.store.readStream(id))
        .filter((e) => e.type === 'llm.calling@1')
        .map((e) => (JSON.parse((e.data as { body: string }).body) as { messages: { content: string }[] }).messages[0].content);
      expect(systems[0]).toContain('Tell the story (v1) of turn 1.');
      expect(systems[1]).toContain('Tell the story (v2) of turn 2.');

      for (const turnId of [first.turnId, second.turnId]) {
        const audit = await client.request<{ identical: boolean }>('GET', `/v1/sessions/${id}/turns/${turnId}/audit`);
        expect(audit.identical).toBe(true);
      }
    } finally {
      await covel.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
