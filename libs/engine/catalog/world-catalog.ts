import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { escapeXml, type LorebookEntryInput } from '../../context';
import { type LoadedWorld, parseWorldFile, toLoadedWorld, type WorldDocument } from '../../plugins-sdk';
import { EngineError } from '../../errors';
import { deepFreeze } from '../../memo';

export class WorldNotFoundError extends EngineError {
  readonly code = 'WORLD_NOT_FOUND';
  readonly category = 'not-found';
  constructor(readonly worldId: string) {
    super(`world "${worldId}" not found`);
  }
}

/** Which world a session runs: a built-in one (no revision) or a revision of one of its tenant's. */
export interface WorldRef {
  tenantId: string;
  worldId: string;
  revision?: number;
}

/** What a turn, an audit and a rebuild read a session's world through. */
export interface WorldLoader {
  load(ref: WorldRef): Promise<LoadedWorld | null>;
}

const WORLD_ID = /^[a-z][a-z0-9-]*$/;

/** A tenant's world id: a UUID (any letter case names it; the log spells it in lower case). */
export const TENANT_WORLD_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A world id as the log spells it: a tenant's world's UUID in lower case; a built-in world's id as it is. */
export const loggedWorldId = (worldId: string): string => (TENANT_WORLD_ID.test(worldId) ? worldId.toLowerCase() : worldId);

/** Worlds under the worlds directory (`<id>/WORLD.md`), loaded once each: the deployment's built-in worlds. */
export class WorldCatalog implements WorldLoader {
  private readonly cache = new Map<string, { world: LoadedWorld; document: WorldDocument }>();
  constructor(private readonly dir: string) {}

  has(worldId: string): boolean {
    return WORLD_ID.test(worldId) && existsSync(join(this.dir, worldId, 'WORLD.md'));
  }

  get(worldId: string): LoadedWorld {
    return this.entry(worldId).world;
  }

  /** The world's document as its WORLD.md holds it (front matter without the id, the body as `lore`). */
  document(worldId: string): WorldDocument {
    return this.entry(worldId).document;
  }

  /** A built-in world by id (a `WorldLoader` of file worlds alone: a reference with a revision is a tenant's world, not here). */
  async load(ref: WorldRef): Promise<LoadedWorld | null> {
    return ref.revision === undefined && this.has(ref.worldId) ? this.get(ref.worldId) : null;
  }

  /** The ids of the built-in worlds, sorted. */
  ids(): string[] {
    return this.loadAll().map((world) => world.id);
  }

  private entry(worldId: string): { world: LoadedWorld; document: WorldDocument } {
    const cached = this.cache.get(worldId);
    if (cached) return cached;
    if (!this.has(worldId)) throw new WorldNotFoundError(worldId);
    const file = join(this.dir, worldId, 'WORLD.md');
    const { document } = parseWorldFile(readFileSync(file, 'utf8'), file, worldId);
    // the folder names the world (its front matter's id, if any, must not say otherwise to the catalog)
    const entry = { world: toLoadedWorld(worldId, document), document };
    this.cache.set(worldId, entry);
    return entry;
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
 * the bookkeepers) gets it without its narrator-only parts, and only the world's constant entries:
 * an entry a keyword fires is background for writing the story (spec §4: world content selected
 * for the task). A runtime after the narrative records what the story text shows; a fired entry
 * would be sent to it new every turn (at a depth, uncached) or break its system prompt (spec §2:
 * "a lorebook entry triggered by a keyword has changed"), for text it has no use for.
 */
export function worldLorebook(world: LoadedWorld, options: { story: boolean }): readonly LorebookEntryInput[] {
  let kept = lorebooks.get(world);
  if (!kept) lorebooks.set(world, (kept = {}));
  const kind = options.story ? 'story' : 'other';
  return (kept[kind] ??= deepFreeze(lorebookOf(world, options)));
}

/**
 * `worldLorebook`'s answers per loaded world (frozen): each runtime's request of every turn takes
 * its world's lorebook, whose lore text and character list are rebuilt and escaped otherwise
 * (issue 33: ten requests an Emberback turn). A world is loaded once and not changed (its catalog
 * loads a new object for a changed file), so the answer for an object holds as long as it lives.
 */
const lorebooks = new WeakMap<LoadedWorld, { story?: readonly LorebookEntryInput[]; other?: readonly LorebookEntryInput[] }>();

function lorebookOf(world: LoadedWorld, options: { story: boolean }): LorebookEntryInput[] {
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
    ...world.lorebook
      .filter((e) => options.story || e.constant)
      .map((e) => ({
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
