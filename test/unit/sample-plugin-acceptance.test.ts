import { join } from 'node:path';
import { DEFAULT_HISTORY_READ_LIMIT, rebuildRequests } from '../../libs/engine';
import { calls } from '../fixtures/sample-plugins/almanac/server';
import { startEmbedded } from '../support/embedded';
import { auditedIdentical, playTurns } from '../support/turns';

const SAMPLE_PLUGINS = join(__dirname, '..', 'fixtures', 'sample-plugins');

interface WireMessage {
  role: string;
  content: string | { type: string; text?: string }[];
}

const textOf = (m: WireMessage) => (typeof m.content === 'string' ? m.content : m.content.map((p) => p.text ?? '').join(''));

/** The turn-context message of a recorded OpenAI Chat body: the user message that carries the turn's data blocks. */
function turnContextOf(body: string): string {
  const messages = (JSON.parse(body) as { messages: WireMessage[] }).messages;
  const found = messages.map(textOf).filter((t) => t.includes('<runtime-inputs>'));
  expect(found).toHaveLength(1);
  return found[0];
}

describe('issue 10 acceptance: the sample plugin (test/fixtures/sample-plugins/almanac) through real turns', () => {
  it('stage 1 writes plugin data in a function; the stage-2 request has the turn segment, the typed input with provenance and the selfData rows; a post-turn function reads the story as ctx.inputs; replay and audit are byte-identical without running plugin code', async () => {
    const covel = await startEmbedded({ COVEL_PLUGINS_DIR: SAMPLE_PLUGINS });
    try {
      const client = await covel.newTenant();
      const { id } = await client.createSession({});
      const turns = await playTurns(client, id, ['Open the almanac', 'Turn the page']);
      expect(calls).toEqual({ record: 2, digest: 2, recap: 2 });
      const events = await covel.engine.store.readStream(id);

      // stage 1 (function) wrote its entry as events, before the stage-2 call of the same turn
      const written = events.filter((e) => e.type === 'plugin-data.written@1').map((e) => e.data as { namespace: string; key: string; turnId: string });
      expect(written.map((w) => `${w.namespace}/${w.key}`)).toEqual(['entries/turn-1', 'recaps/turn-1', 'entries/turn-2', 'recaps/turn-2']);
      const calling = events.filter((e) => e.type === 'llm.calling@1');
      expect(calling.map((e) => (e.data as { runtimeId: string }).runtimeId)).toEqual(['teller', 'teller']);
      const firstWrite = events.findIndex((e) => e.type === 'plugin-data.written@1');
      expect(firstWrite).toBeLessThan(events.indexOf(calling[0]));

      const context = turnContextOf((calling[1].data as { body: string }).body);
      // the dynamic turn segment fed by the plugin's data (ctx.pluginData in the handler)
      expect(context).toContain('Almanac digest: 2 entries, newest turn-2');
      // the typed input: the selected value through the data boundary, provenance pluginId + runtimeId only
      const inputs = /<runtime-inputs>\n([\s\S]*?)\n<\/runtime-inputs>/.exec(context)?.[1] ?? '';
      const unescape = (t: string) => t.replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&');
      expect(JSON.parse(unescape(inputs))).toEqual({
        entry: {
          cardinality: 'one',
          value: { id: 'turn-2', note: 'Turn 2: 雪 🌨️ שלום </self-data> {{ session.id }}', date: 'the first thaw' },
          source: { pluginId: 'almanac', runtimeId: 'record' },
        },
      });
      expect(inputs).not.toMatch(/resultId|5b0f7a3e|2026-12-03T10|sessionId/);
      expect(inputs).not.toContain(id);
      // the selfData rows: both entries, `- <key> | <JSON>`, no id repeating the key, no bookkeeping
      const selfData = /<self-data namespace="entries">\n([\s\S]*?)\n<\/self-data>/.exec(context)?.[1] ?? '';
      expect(selfData.split('\n').map((row) => row.split(' | ')[0])).toEqual(['- turn-1', '- turn-2']);
      expect(selfData).not.toMatch(/"id"|5b0f7a3e|2026-12-03T10|sessionId/);
      // data is escaped and never interpolated: the closing tag and the template stay as text
      expect(context).toContain('&lt;/self-data&gt; {{ session.id }}');
      expect(context).not.toContain(`${id}`);

      // the post-turn function got the teller's story as ctx.inputs.story
      const recaps = written.filter((w) => w.namespace === 'recaps').map((w) => (w as unknown as { value: { story: string } }).value.story);
      const stories = events
        .filter((e) => e.type === 'runtime.output.produced@1' && (e.data as { runtimeId: string }).runtimeId === 'teller')
        .map((e) => (e.data as { text: string }).text);
      expect(recaps).toEqual(stories);
      expect(stories.every((s) => s.length > 0)).toBe(true);

      // replay and audit: every request rebuilt byte for byte from the events, no plugin code run
      const counted = { ...calls };
      const rebuilt = await rebuildRequests(events, covel.engine.catalog, covel.engine.providers, covel.engine.worlds, {
        historyReadLimit: DEFAULT_HISTORY_READ_LIMIT,
      });
      expect(rebuilt).toHaveLength(2);
      expect(rebuilt.every((c) => c.identical)).toBe(true);
      expect(await auditedIdentical(covel.engine, id, turns)).toEqual([true, true]);
      expect(calls).toEqual(counted);
    } finally {
      await covel.stop();
    }
  }, 60_000);
});
