import type { HandlerContext, PluginDataReader, PluginSdk } from '../../plugins-sdk';
import {
  characterSheetSegments,
  worldCharacterSheets,
  createPromptLoader,
  currentCharacterOf,
  type LoadedPlugin,
  type LoadedWorld,
  type Locale,
  primarySeat,
  byCodeUnits,
  clipLine,
  foldKey,
  rosterLines,
} from '../../plugins-sdk';
import { escapeXml, modelFacingJson } from '../../context';
import type { PluginSettings } from './plugin-settings';
import { pluginSdkFor, pluginSettingsFor } from './plugin-scope';
import { serviceReader } from './services';
import { isSharedCharacters } from './published-characters';

/** The SDK helpers every handler reaches through `api.sdk` / `ctx.sdk` (a plugin outside the repo cannot import them). */
export const pluginSdk: PluginSdk = Object.freeze({
  modelFacingJson,
  escapeXml,
  characterSheetSegments,
  worldCharacterSheets,
  currentCharacterOf,
  primarySeat,
  createPromptLoader,
  rosterLines,
  foldKey,
  byCodeUnits,
  clipLine,
  pluginRoot: null,
});

/** Where `ctx.pluginData` reads from: one reader per plugin namespace owner and session (the store is slice S3's). */
export interface PluginDataSource {
  reader(args: { tenantId: string; sessionId: string; pluginId: string }): PluginDataReader;
}

/** Until the plugin data store exists: every namespace is empty. */
export const emptyPluginData: PluginDataSource = {
  reader: () => Object.freeze({ get: async () => null, list: async () => [] }),
};

export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}

const frozenWorlds = new WeakMap<LoadedWorld, LoadedWorld>();
/** The views of a world with `publishedCharacters`' own characters (deep-frozen already), by those characters. */
const withShared = new WeakMap<LoadedWorld['characters'], { view: LoadedWorld; world: LoadedWorld }>();

/**
 * A frozen copy of the world, made once per loaded world; with `characters` (the session's, as the
 * `session.world-context@1` providers publish them), the same view with those characters instead
 * (made once per world and characters when they are `publishedCharacters`' own, which never change).
 */
export function worldView(world: LoadedWorld | null, characters?: LoadedWorld['characters']): LoadedWorld | null {
  if (!world) return null;
  let view = frozenWorlds.get(world);
  if (!view) frozenWorlds.set(world, (view = deepFreeze(structuredClone(world))));
  if (!characters) return view;
  if (!isSharedCharacters(characters)) return Object.freeze({ ...view, characters: deepFreeze(structuredClone(characters)) });
  const known = withShared.get(characters);
  if (known?.view === view) return known.world;
  const made = Object.freeze({ ...view, characters });
  withShared.set(characters, { view, world: made });
  return made;
}

/** What a handler of this execution is told: the same for every runtime of the execution. */
export interface ExecutionScope {
  tenantId: string;
  sessionId: string;
  turnNumber: number;
  locale: Locale;
  world: LoadedWorld | null;
  /**
   * The session's characters as the `session.world-context@1` providers publish them
   * (`publishedCharacters`), which `ctx.world.characters` shows instead of the world's; none: the world's.
   */
  characters?: LoadedWorld['characters'];
  /** The player's configuration of plugins (`ctx.settings` composes it over each plugin's defaults). */
  pluginSettings?: PluginSettings;
  /** A regenerated turn: the turn it re-runs (`ctx.session.retryFromTurnId`; its artifacts are read through it). */
  retryFromTurnId?: string;
  /**
   * The execution's own turn id (`ctx.session.turnId`): a regeneration or a turn submitted again
   * after a failure has a new one, so a plugin can key a turn's artifacts by it.
   */
  turnId?: string;
  /** The previous turn as the history has it (`ctx.session.previousTurnId`, `previousTurnScope`). */
  previousTurnId?: string;
}

/**
 * `services`: how `ctx.services` resolves a service point's providers (`serviceReader`); without it
 * the call is refused (a context with no registry at hand).
 */
export function handlerContext(
  scope: ExecutionScope,
  pluginId: string,
  pluginData: PluginDataSource,
  plugin?: LoadedPlugin,
  services?: HandlerContext['services'],
): HandlerContext {
  return Object.freeze({
    pluginId,
    locale: scope.locale,
    session: Object.freeze({
      id: scope.sessionId,
      turnNumber: scope.turnNumber,
      ...(scope.turnId !== undefined ? { turnId: scope.turnId } : {}),
      ...(scope.previousTurnId !== undefined ? { previousTurnId: scope.previousTurnId } : {}),
      ...(scope.retryFromTurnId !== undefined ? { retryFromTurnId: scope.retryFromTurnId } : {}),
    }),
    world: worldView(scope.world, scope.characters),
    settings: pluginSettingsFor(plugin, scope.pluginSettings),
    pluginData: pluginData.reader({ tenantId: scope.tenantId, sessionId: scope.sessionId, pluginId }),
    sdk: pluginSdkFor(plugin, pluginSdk),
    services: services ?? serviceReader({ pluginId, registry: null, run: null, refusal: 'not available in this context' }),
  });
}
