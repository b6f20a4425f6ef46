import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parsePluginFile, splitFrontMatter } from '../../libs/plugins-sdk';
import { seen } from '../fixtures/hook-source-plugins/scribe/server';
import { startEmbedded } from '../support/embedded';
import { auditedIdentical, playTurns } from '../support/turns';

const FIXTURES = join(__dirname, '..', 'fixtures');
const SCRIBE = join(FIXTURES, 'hook-source-plugins', 'scribe');

/** The harbor world's primary seat plays Wren: her sheet, the JSON of `{{ player.character }}` (might 2 of 0–5). */
const WREN = '{"id":"wren","name":"Wren","type":"player","description":"A deckhand with salt in her hair.","fields":{"might":"2/5"}}';

describe('PostContextAssembly hooks get the raw sources, read-only (spec §3), in real turns', () => {
  it('the localized template with its placeholders unrendered and the played character’s summary; frozen, so a hook cannot change them; the audit rebuilds the turn', async () => {
    const covel = await startEmbedded({ COVEL_PLUGINS_DIR: join(FIXTURES, 'hook-source-plugins'), COVEL_WORLDS_DIR: join(FIXTURES, 'template-worlds') });
    try {
      const client = await covel.newTenant();
      const templates = {
        en: parsePluginFile(readFileSync(join(SCRIBE, 'PLUGIN.md'), 'utf8')).body,
        'zh-CN': splitFrontMatter(readFileSync(join(SCRIBE, 'PLUGIN.zh-Hans.md'), 'utf8'), 'PLUGIN.zh-Hans.md').body,
      };
      for (const [locale, template] of Object.entries(templates)) {
        const { id } = await client.createSession({ worldId: 'harbor', locale });
        const from = seen.length;
        const turns = await playTurns(client, id, ['Ring the harbor bell']);
        const calls = seen.slice(from);
        expect(calls).toHaveLength(1);
        const [call] = calls;

        // the body as written, in the session's locale: every placeholder still there
        expect(call.promptTemplate).toBe(template);
        expect(call.promptTemplate).toContain('{{ player.message }}');
        expect(call.promptTemplate).toContain('{{ player.character }}');
        // the request itself has the rendered body (the hook's systemPrompt), not the template
        const body = (await covel.engine.store.readStream(id)).find((e) => e.type === 'llm.calling@1')!.data as { body: string };
        const system = (JSON.parse(body.body) as { messages: { content: string }[] }).messages[0].content;
        expect(system).toContain('Ring the harbor bell');
        expect(system).not.toContain('{{');

        // the character the primary seat plays: the same JSON the body renders in <player-character>
        expect(call.characterSummary).toBe(WREN);
        expect(system).toContain(`<player-character>\n${WREN}\n</player-character>`);

        // read-only: frozen, each attempt to change them throws, and they stay as they were
        expect(call.frozen).toBe(true);
        expect(call.attempts).toEqual({ promptTemplate: 'TypeError', characterSummary: 'TypeError', inputSlots: 'TypeError' });
        expect(call.after).toEqual({ promptTemplate: template, characterSummary: WREN, inputSlots: 0 });

        expect(await auditedIdentical(covel.engine, id, turns)).toEqual([true]);
      }
    } finally {
      await covel.stop();
    }
  }, 60_000);
});
