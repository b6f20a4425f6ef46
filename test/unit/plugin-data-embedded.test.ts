import { join } from 'node:path';
import { calls } from '../fixtures/data-plugins/ledger/server';
import { startEmbedded } from '../support/embedded';
import { auditedIdentical, playTurns } from '../support/turns';

const DATA_PLUGINS = join(__dirname, '..', 'fixtures', 'data-plugins');

describe('plugin data in the embedded engine (COVEL_PLUGINS_DIR)', () => {
  it('a function runtime writes in pre-turn, the narrative agent reads the rows (io.selfData) and the segment (ctx.pluginData); the audit rebuilds both turns without running plugin code', async () => {
    const covel = await startEmbedded({ COVEL_PLUGINS_DIR: DATA_PLUGINS });
    try {
      const client = await covel.newTenant();
      const { id } = await client.createSession({});
      const turns = await playTurns(client, id, ['Open the ledger', 'Turn the page']);
      const events = await covel.engine.store.readStream(id);
      expect(events.filter((e) => e.type.startsWith('plugin-data.')).map((e) => e.type)).toEqual([
        ...Array(3).fill('plugin-data.written@1'),
        ...Array(3).fill('plugin-data.written@1'),
        'plugin-data.deleted@1',
      ]);
      const bodies = events.filter((e) => e.type === 'llm.calling@1').map((e) => (e.data as { body: string }).body);
      expect(bodies).toHaveLength(2);
      expect(bodies[1]).toContain(String.raw`- latest | {\"turn\":2}\n- turn-2 | {\"date\":\"the third day of Frost\",\"note\":\"Turn 2: 墨 🙂\"}`);
      expect(bodies[1]).toContain(String.raw`Ledger latest: {\"turn\":2}`);
      const counted = { ...calls };
      expect(await auditedIdentical(covel.engine, id, turns)).toEqual([true, true]);
      expect(calls).toEqual(counted);
    } finally {
      await covel.stop();
    }
  }, 60_000);
});
