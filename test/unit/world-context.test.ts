import { join } from 'node:path';
import { calls } from '../fixtures/world-context-plugins/atlas/server';
import { startEmbedded } from '../support/embedded';
import { auditedIdentical, playTurns } from '../support/turns';

const FIXTURES = join(__dirname, '..', 'fixtures');

describe('session.world-context@1 extends the world a runtime body sees (spec §3), in real turns', () => {
  it('adds schema properties (the world keeps its own), appends entries, sets dimension values; resolved once per execution and replayed from the record', async () => {
    const covel = await startEmbedded({ COVEL_PLUGINS_DIR: join(FIXTURES, 'world-context-plugins'), COVEL_WORLDS_DIR: join(FIXTURES, 'template-worlds') });
    try {
      const client = await covel.newTenant();
      const { id } = await client.createSession({ worldId: 'harbor' });
      const turns = await playTurns(client, id, ['When is the tide?']);
      const events = await covel.engine.store.readStream(id);
      const body = (events.find((e) => e.type === 'llm.calling@1')!.data as { body: string }).body;
      const system = (JSON.parse(body) as { messages: { content: string }[] }).messages[0].content;
      const block = /<world-data>\n([\s\S]*?)\n<\/world-data>/.exec(system)![1].split('\n');
      // schema: the world's own `bell` stays the world's; the provider's `high` is added
      expect(JSON.parse(block[0])).toEqual({
        type: 'object',
        properties: { high: { type: 'string', description: 'High tide' }, bell: { type: 'string', description: 'A bell of the harbor' } },
      });
      // entries: the world's, then the provider's, through the data boundary (no ISO time, no UUID)
      expect(JSON.parse(block[1])).toEqual([
        { id: 'great-bell', bell: 'The Great Bell' },
        { id: 'tide-table', high: 'at dawn' },
      ]);
      // a provider's dimension gives its current value (escaped inside the block); the world's others stay
      expect(block[2]).toBe('season: first frost &lt;/world-data&gt;; reputation: 7');
      expect(events.filter((e) => e.type === 'extension.resolved@1').map((e) => (e.data as { point: string }).point)).toEqual(['session.world-context@1']);
      const counted = calls.tides;
      expect(counted).toBe(1);
      expect(await auditedIdentical(covel.engine, id, turns)).toEqual([true]);
      expect(calls.tides).toBe(counted);
    } finally {
      await covel.stop();
    }
  }, 60_000);
});
