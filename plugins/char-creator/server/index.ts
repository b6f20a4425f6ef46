import { join } from 'node:path';
import type { PluginApi, ToolContext } from '../../../libs/plugins-sdk';
import { CHARACTERS_NAMESPACE, type KeptCharacter, publishedCharacters, sessionCharacters, worldCharacters } from './characters';
import { characterSegments } from './segments';
import { type CharacterChange, createdSummary, updatedSummary } from './summary';
import { CharacterToolError, checkFields } from './validate';

const TEMPLATES = ['roster-intro', 'schema-intro', 'fields-intro'] as const;
const ID = /^[a-z][a-z0-9-]*$/;

/**
 * The char-creator plugin. Written as a plugin outside the repository would be: only types come
 * from the SDK; templates, escaping and the data boundary through `api.sdk` / `ctx.sdk`.
 */
export function register(api: PluginApi): void {
  const root = api.sdk.pluginRoot;
  if (root === null) throw new Error('char-creator: the host gave no plugin folder (api.sdk.pluginRoot), so its templates cannot be read');
  const prompts = api.sdk.createPromptLoader(join(root, 'prompts', 'server'));
  for (const name of TEMPLATES) for (const locale of ['en', 'zh-Hans'] as const) prompts.loadOrThrow(name, locale);

  api.provideExtension('prompt.segment@1', 'characters', {
    handler: (_input, ctx) => characterSegments({ ctx, prompts, characters: worldCharacters(ctx.world) }),
  });

  // the session's characters as this plugin keeps them, for every runtime's world (the narrator's sheets)
  api.provideExtension('session.world-context@1', 'characters', {
    handler: async (_input, ctx) => ({ characters: await publishedCharacters(ctx.world, ctx.pluginData) }),
  });

  api.registerTool('create-character', async (args, ctx: ToolContext) => {
    const id = String(args.id);
    if (!ID.test(id)) throw new CharacterToolError(`id: "${id}" is not an id (lower-case letters, digits and dashes, starting with a letter)`);
    const name = String(args.name).trim();
    if (name.length === 0) throw new CharacterToolError('name: give the character a name');
    const characters = await sessionCharacters(ctx.world, ctx.pluginData);
    const same = characters.find((c) => c.id === id);
    if (same) throw new CharacterToolError(`id: a character "${id}" exists already (${same.name}); update its fields instead`);
    const fields = checkFields(ctx.world?.characterSchema, args.fields ?? {}, 'fields');
    const type = typeof args.type === 'string' && args.type.trim().length > 0 ? args.type.trim() : 'npc';
    const record: KeptCharacter = { name, type, description: String(args.description).trim(), fields };
    await ctx.pluginData.set(CHARACTERS_NAMESPACE, id, record);
    return { created: id, summary: createdSummary(ctx.sdk, name, ctx.locale) };
  });

  api.registerTool('update-character-fields', async (args, ctx: ToolContext) => {
    const updates = Array.isArray(args.updates) ? (args.updates as { id?: unknown; fields?: unknown }[]) : [];
    const characters = new Map((await sessionCharacters(ctx.world, ctx.pluginData)).map((c) => [c.id, c]));
    // every update is checked before anything is written: a bad value changes nothing
    const changed = new Map<string, KeptCharacter>();
    updates.forEach((u, i) => {
      const id = String(u.id);
      const character = changed.get(id) ?? characters.get(id);
      if (!character) throw new CharacterToolError(`updates[${i}].id: no character "${id}"; the characters are: ${[...characters.keys()].join(', ')}`);
      const fields = checkFields(ctx.world?.characterSchema, u.fields, `updates[${i}].fields`);
      changed.set(id, { name: character.name, type: character.type, description: character.description, fields: { ...character.fields, ...fields } });
    });
    for (const [id, record] of changed) await ctx.pluginData.set(CHARACTERS_NAMESPACE, id, record);
    const summaries: CharacterChange[] = [...changed].map(([id, after]) => ({ before: characters.get(id) ?? after, after }));
    const order = Object.keys(ctx.world?.characterSchema.properties ?? {});
    return { updated: [...changed.keys()], summary: updatedSummary(ctx.sdk, summaries, order, ctx.locale) };
  });
}
