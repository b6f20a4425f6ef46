import type { HandlerContext, PluginApi, PluginSdk, ReturnedSegment, ToolContext, WorldView } from '../../../libs/plugins-sdk';
import type { CodexEntry } from './entries';
import { codexSummary, type RecordedEntry } from './summary';
import { codexText } from './text';

export const NAMESPACE = 'entries';
export const DISCOVERED = 'codex.entry-discovered';
/** Entries listed in `<codex-entries>`; the rest are counted. */
export const LISTED_ENTRIES = 200;

interface EntryArgs {
  term: string;
  category: string;
  summary: string;
}

/** Names and aliases of the world's characters, lower-cased (a character is never a codex entry). */
function characterNames(world: WorldView | null, sdk: PluginSdk): Map<string, string> {
  const names = new Map<string, string>();
  for (const c of world?.characters ?? []) for (const name of [c.name, ...c.aliases]) names.set(sdk.foldKey(name), c.name);
  return names;
}

/** The entry as the prompt shows it, in a fixed key order (the store may return JSON keys in any order). */
const shown = (e: CodexEntry) => ({ term: e.term, category: e.category, summary: e.summary, discoveredOnTurn: e.discoveredOnTurn });

async function segments(ctx: HandlerContext): Promise<ReturnedSegment[]> {
  const t = codexText(ctx.locale);
  const esc = ctx.sdk.escapeXml;
  const characters = [...(ctx.world?.characters ?? [])].sort((a, b) => ctx.sdk.byCodeUnits(a.id, b.id));
  const scope = [
    '<codex-scope>',
    t.categories,
    t.characters,
    ...(characters.length ? characters.map((c) => `- ${esc([c.name, ...c.aliases].join(' / '))}`) : [t.noCharacters]),
    '</codex-scope>',
  ];
  const rows = (await ctx.pluginData.list(NAMESPACE, { limit: 1000 })).sort((a, b) => ctx.sdk.byCodeUnits(a.key, b.key));
  const listed = rows.slice(0, LISTED_ENTRIES).map((r) => `- ${esc(r.key)} | ${esc(JSON.stringify(ctx.sdk.modelFacingJson(shown(r.value as CodexEntry))))}`);
  const entries = [
    '<codex-entries>',
    t.entriesIntro,
    ...(listed.length ? listed : [t.noEntries]),
    ...(rows.length > LISTED_ENTRIES ? [t.more(rows.length - LISTED_ENTRIES)] : []),
    '</codex-entries>',
  ];
  return [
    { id: 'codex-scope', content: scope.join('\n'), position: 'system', audience: 'self', volatility: 'session' },
    { id: 'codex-entries', content: entries.join('\n'), position: 'system', audience: 'self', volatility: 'turn' },
  ];
}

/**
 * `record-codex-entries`: adds or updates entries by key; a character's name, or a term twice in
 * one call, fails the whole call (no write kept). New entries are announced once per call.
 */
async function recordEntries(args: Record<string, unknown>, ctx: ToolContext): Promise<{ added: string[]; updated: string[]; summary?: string }> {
  const input = args.entries as EntryArgs[];
  const characters = characterNames(ctx.world, ctx.sdk);
  const keys = new Set<string>();
  for (const e of input) {
    const key = ctx.sdk.foldKey(e.term);
    if (key === '') throw new Error('a term must have visible characters');
    const character = characters.get(key);
    if (character) throw new Error(`"${e.term}" is the character ${character}: characters have their own records, not codex entries`);
    if (keys.has(key)) throw new Error(`"${e.term}" appears twice in entries`);
    keys.add(key);
  }
  const added: { key: string; term: string; category: string }[] = [];
  const updated: string[] = [];
  const recorded: RecordedEntry[] = [];
  for (const e of input) {
    const key = ctx.sdk.foldKey(e.term);
    const previous = (await ctx.pluginData.get(NAMESPACE, key)) as CodexEntry | null;
    const entry: CodexEntry = {
      term: e.term.trim(),
      category: e.category,
      summary: e.summary.trim(),
      discoveredOnTurn: previous?.discoveredOnTurn ?? ctx.session.turnNumber,
    };
    await ctx.pluginData.set(NAMESPACE, key, entry);
    recorded.push({ term: entry.term, added: previous === null });
    if (previous) updated.push(key);
    else added.push({ key, term: entry.term, category: entry.category });
  }
  if (added.length > 0) ctx.emit(DISCOVERED, { entries: added });
  return { added: added.map((a) => a.key), updated, summary: codexSummary(ctx.sdk, recorded, ctx.locale) };
}

export function register(api: PluginApi): void {
  api.provideExtension('prompt.segment@1', 'codex-blocks', { handler: (_input, ctx) => segments(ctx) });
  api.registerTool('record-codex-entries', recordEntries);
}
