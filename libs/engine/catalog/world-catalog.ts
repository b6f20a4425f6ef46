import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { escapeXml, type LorebookEntryInput } from '../../context';
import { type LoadedWorld, loadWorld } from '../../plugins-sdk';
import { EngineError } from '../../errors';

export class WorldNotFoundError extends EngineError {
  readonly code = 'WORLD_NOT_FOUND';
  readonly category = 'not-found';
  constructor(readonly worldId: string) {
    super(`world "${worldId}" not found`);
  }
}

const WORLD_ID = /^[a-z][a-z0-9-]*$/;

/** Worlds under the worlds directory (`<id>/WORLD.md`), loaded once each. */
export class WorldCatalog {
  private readonly cache = new Map<string, LoadedWorld>();
  constructor(private readonly dir: string) {}

  has(worldId: string): boolean {
    return WORLD_ID.test(worldId) && existsSync(join(this.dir, worldId, 'WORLD.md'));
  }

  get(worldId: string): LoadedWorld {
    const cached = this.cache.get(worldId);
    if (cached) return cached;
    if (!this.has(worldId)) throw new WorldNotFoundError(worldId);
    const world = loadWorld(join(this.dir, worldId, 'WORLD.md'));
    this.cache.set(worldId, world);
    return world;
  }

  /**
   * Loads and validates every world, so that a bad world file stops start-up with an error
   * naming the file and the field path (instead of failing the first session that uses it).
   */
  loadAll(): LoadedWorld[] {
    if (!existsSync(this.dir)) return [];
    return readdirSync(this.dir, { withFileTypes: true })
      .filter((d) => d.isDirectory() && this.has(d.name))
      .map((d) => d.name)
      .sort()
      .map((id) => this.get(id));
  }

  /**
   * The reply books of the worlds for the offline emulator (`<id>/emulator-replies.json`, optional):
   * their paths, worlds in id order (read and validated by `worldReplyRules` in offline-emulator.ts).
   */
  replyBookFiles(): string[] {
    return this.loadAll()
      .map((world) => join(this.dir, world.id, REPLY_BOOK_FILE))
      .filter((file) => existsSync(file));
  }
}

/** A world's reply book for the offline emulator (see `ReplyBook` in libs/emulator). */
export const REPLY_BOOK_FILE = 'emulator-replies.json';

/**
 * The world's lorebook as assembly takes it: the lore text and the character list as constant
 * before-plugin entries the kernel writes itself, then the world's own entries. The lore is the
 * whole body for a story runtime (`story: true`); every other runtime (the player-facing guide,
 * the bookkeepers) gets it without its narrator-only parts.
 */
export function worldLorebook(world: LoadedWorld, options: { story: boolean }): LorebookEntryInput[] {
  const constant = { keys: [], constant: true, position: 'before-plugin' as const, scanDepth: 0 };
  const lore = (options.story ? world.lore : world.sharedLore).replace(/<\/world-lore>/g, '&lt;/world-lore>'); // spec §4: only this tag is rewritten
  const entries: LorebookEntryInput[] = [{ ...constant, id: 'world-lore', order: -2, content: `<world-lore>\n${lore}\n</world-lore>` }];
  if (world.characters.length) {
    entries.push({
      ...constant,
      id: 'world-characters',
      order: -1,
      // character text is data: escaped, so a `</world-characters>` in a description cannot close the block
      content: `<world-characters>\n${world.characters.map((c) => escapeXml(`- ${c.name}${aka(c.aliases)} [${c.type}] | ${c.description}`)).join('\n')}\n</world-characters>`,
    });
  }
  return [
    ...entries,
    ...world.lorebook.map((e) => ({
      id: e.id,
      keys: e.keys,
      constant: e.constant,
      content: e.content,
      position: e.position,
      order: e.order,
      scanDepth: e.extra.scanDepth,
    })),
  ];
}

/** Spec §4 `characters.npcs`: "(aka alias, …)" follows the name when a character has aliases. */
const aka = (aliases: readonly string[]) => (aliases.length > 0 ? ` (aka ${aliases.join(', ')})` : '');
