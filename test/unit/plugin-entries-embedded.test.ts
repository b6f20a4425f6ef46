import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { auditTurn, DEFAULT_HISTORY_READ_LIMIT } from '../../libs/engine';
import { calls } from '../fixtures/host-plugins/status/server';
import { startEmbedded } from '../support/embedded';

const HOST_PLUGINS = join(__dirname, '..', 'fixtures', 'host-plugins');

describe('the engine loads plugin server entries at start-up (COVEL_PLUGINS_DIR)', () => {
  it('a turn through the API carries the dynamic segment; the audit rebuilds it byte for byte without calling the handler', async () => {
    const covel = await startEmbedded({ COVEL_PLUGINS_DIR: HOST_PLUGINS });
    try {
      const client = await covel.newTenant();
      const { id } = await client.createSession({});
      const { executionId, turnId } = await client.submit(id, 'Check the lantern');
      expect(await client.waitFor(executionId, 20_000)).toBe('committed');
      const bodies = (await covel.engine.store.readStream(id)).filter((e) => e.type === 'llm.calling@1').map((e) => (e.data as { body: string }).body);
      expect(bodies).toHaveLength(2);
      for (const body of bodies) expect(body).toContain('Lantern: lit. Player said: Check the lantern.');
      const counted = { ...calls };
      const audit = await auditTurn({ ...covel.engine, historyReadLimit: DEFAULT_HISTORY_READ_LIMIT }, id, turnId);
      expect(audit.identical).toBe(true);
      expect(calls).toEqual(counted);
    } finally {
      await covel.stop();
    }
  }, 60_000);

  it('an entry whose register throws stops start-up, naming the plugin', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'covel-plugins-'));
    const dataDir = mkdtempSync(join(tmpdir(), 'covel-data-'));
    try {
      mkdirSync(join(dir, 'broken', 'server'), { recursive: true });
      writeFileSync(join(dir, 'broken', 'PLUGIN.md'), '---\nid: broken\nname: Broken\nversion: 0.0.1\nentry: server/index.js\n---\n');
      writeFileSync(join(dir, 'broken', 'server', 'index.js'), "exports.register = () => { throw new Error('boom'); };\n");
      await expect(startEmbedded({ COVEL_PLUGINS_DIR: dir }, dataDir)).rejects.toThrow('plugin broken: register(api) threw: boom');
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
