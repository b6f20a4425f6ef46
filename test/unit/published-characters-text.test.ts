import { join } from 'node:path';
import type { StoredEvent } from '../../libs/events';
import type { PublishedCharacter } from '../../libs/plugins-sdk';
import { isWellFormedText } from '../../libs/text';
import { behaviour } from '../fixtures/roster-plugins/roster/server';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';
import { auditedIdentical } from '../support/turns';

const FIXTURES = join(__dirname, '..', 'fixtures');

/** Emoji with ZWJ and skin tone, CJK, Arabic and Hebrew (RTL, with their marks): text carried as it is. */
const NAME = '🧑🏽‍🚀 宇航员 رائد';
const DESCRIPTION = 'Family 👩‍👩‍👧‍👦, 墨と地図, ‏עברית‎ and مرحبا — 𝄞 outside the BMP';

/**
 * Hostile text in the characters a `session.world-context@1` provider publishes (issue 33): a
 * published character replaces the world's, and a world's characters are well-formed Unicode
 * without NUL (`WorldDocument`) — PostgreSQL text and jsonb cannot hold U+0000, and every plugin
 * reading `ctx.world` or writing what it read to its data relies on that. So a name, sheet or field
 * (key or value) holding U+0000 or a lone surrogate is refused at the result's schema: the plugin
 * fails visibly, naming the field, before anything is sent. Anything else — emoji with ZWJ, CJK,
 * RTL — reaches the request, `ctx.world` and the record intact, and the audit rebuilds it byte for byte.
 */
describe('published characters with hostile text (embedded engine)', () => {
  let covel: EmbeddedEngine;
  beforeAll(async () => {
    covel = await startEmbedded({ COVEL_PLUGINS_DIR: join(FIXTURES, 'roster-plugins'), COVEL_WORLDS_DIR: join(FIXTURES, 'template-worlds') });
  }, 60_000);
  afterAll(() => covel.stop());

  async function turnWith(characters: PublishedCharacter[]): Promise<{ status: string; turnId: string; events: StoredEvent[] }> {
    behaviour.characters = characters;
    const client = await covel.newTenant();
    const { id } = await client.createSession({ worldId: 'harbor' });
    const { executionId, turnId } = await client.submit(id, 'Who is on the quay?');
    // a failed turn: the message the player's client is given
    const status = await client.waitFor(executionId, 20_000).catch((error: Error) => error.message);
    return { status, turnId, events: await covel.engine.store.readStream(id) };
  }

  it('emoji/ZWJ, CJK and RTL reach the body and ctx.world intact, are recorded as published, and rebuild byte for byte', async () => {
    const published: PublishedCharacter[] = [
      { id: 'oren', name: `Oren ${NAME}`, description: DESCRIPTION, fields: { might: 3, [`墨 ${NAME}`]: DESCRIPTION } },
      { id: 'astro', name: NAME, description: DESCRIPTION },
    ];
    const { status, turnId, events } = await turnWith(published);
    expect(status).toBe('committed');
    const resolved = events.filter((e) => e.type === 'extension.resolved@1' && e.data.point === 'session.world-context@1');
    expect(resolved).toHaveLength(1);
    expect(JSON.parse((resolved[0].data as { result: string }).result)).toEqual({ characters: published });
    const body = (events.find((e) => e.type === 'llm.calling@1')!.data as { body: string }).body;
    const system = (JSON.parse(body) as { messages: { content: string }[] }).messages.map((m) => m.content).join('\n');
    const npcs = /<npcs>\n([\s\S]*?)\n<\/npcs>/.exec(system)![1];
    expect(npcs).toContain(`Oren ${NAME}`);
    expect(npcs).toContain(DESCRIPTION);
    expect(npcs).toContain(`${NAME} [npc] | ${DESCRIPTION}`);
    // a handler's ctx.world has them too, code point for code point
    expect(/<ctx-world>\n([\s\S]*?)\n<\/ctx-world>/.exec(system)![1].split('\n')).toEqual(
      expect.arrayContaining([`oren=Oren ${NAME}`, `astro=${NAME}`, 'wren=Wren']),
    );
    expect(await auditedIdentical(covel.engine, events[0].streamId, [turnId])).toEqual([true]);
  }, 60_000);

  it.each([
    [
      'refers to itself',
      () => {
        const fields: Record<string, unknown> = { mood: 'calm' };
        fields.self = fields;
        return fields;
      },
    ],
  ] as [string, () => Record<string, unknown>][])(
    'a character whose fields %s: the plugin fails visibly as an invalid result, once (not retried as an engine error)',
    async (_what, fields) => {
      const { status, events } = await turnWith([{ id: 'oren', name: 'Oren', fields: fields() }]);
      expect(status).toContain('turn failed: plugin roster: session.world-context@1 "roster" returned');
      const failed = events.filter((e) => e.type === 'execution.failed@1').map((e) => (e.data as { error: { code: string } }).error);
      expect(failed).toHaveLength(1);
      expect(failed[0].code).toBe('PLUGIN_RESULT_INVALID');
      expect(events.map((e) => e.type)).not.toContain('llm.calling@1');
    },
    60_000,
  );

  it.each([
    ['U+0000 in a name', [{ id: 'oren', name: 'Or\u0000en' }], 'characters.0.name'],
    ['a lone surrogate in a description', [{ id: 'astro', name: NAME, description: `${DESCRIPTION} \uD83E` }], 'characters.0.description'],
    ['U+0000 in a field value', [{ id: 'oren', name: 'Oren', fields: { might: 3, mood: ['calm', 'a\u0000b'] } }], 'characters.0.fields.mood.1'],
    ['a lone surrogate in a field key', [{ id: 'oren', name: 'Oren', fields: { ['\uDC00mood']: 1 } }], 'characters.0.fields."\\udc00mood"'],
    ['U+0000 in an alias', [{ id: 'oren', name: 'Oren', aliases: ['the Pilot', 'old\u0000'] }], 'characters.0.aliases.1'],
  ] as [string, PublishedCharacter[], string][])(
    '%s: the plugin fails visibly, naming the field; nothing is sent',
    async (_what, characters, field) => {
      const { status, events } = await turnWith(characters);
      expect(status).toContain(`turn failed: plugin roster: session.world-context@1 "roster" returned an invalid result: ${field}: must be`);
      const failed = events.filter((e) => e.type === 'execution.failed@1').map((e) => (e.data as { error: { code: string; message: string } }).error);
      expect(failed).toHaveLength(1);
      expect(failed[0].code).toBe('PLUGIN_RESULT_INVALID');
      expect(failed[0].message).toContain('plugin roster: session.world-context@1 "roster" returned an invalid result');
      expect(failed[0].message).toContain(`${field}: must be well-formed Unicode without NUL`);
      // what the event holds is well-formed and NUL-free (jsonb takes it)
      expect(failed[0].message).not.toContain('\u0000');
      expect(isWellFormedText(failed[0].message)).toBe(true);
      expect(events.map((e) => e.type)).not.toContain('llm.calling@1');
      expect(events.filter((e) => e.type === 'extension.resolved@1' && e.data.point === 'session.world-context@1')).toEqual([]);
    },
    60_000,
  );
});
