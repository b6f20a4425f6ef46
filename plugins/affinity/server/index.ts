import type { HandlerContext, PluginApi, ReturnedSegment, ToolContext } from '../../../libs/plugins-sdk';
import { trackedIds } from './characters';
import { affinitySummary } from './summary';
import { affinityText } from './text';

/** The plugin data namespace: one row per character id, `{ score, feeling }`. */
export const NAMESPACE = 'scores';

interface AffinityValue {
  score: number;
  feeling: string;
}

interface Update {
  character: string;
  score: number;
  feeling: string;
}

/**
 * Spec §2 "Layout for bookkeeping runtimes": the roster (rarely changes) is a session segment in
 * the system prompt; the current values (change every turn) a turn segment in the turn context.
 */
async function segments(ctx: HandlerContext): Promise<ReturnedSegment[]> {
  const t = affinityText(ctx.locale);
  const esc = ctx.sdk.escapeXml;
  const ids = trackedIds(ctx.world, ctx.sdk);
  const lines = ctx.sdk.rosterLines(ctx.world?.characters ?? [], { seats: ctx.world?.seats, players: 'omit' });
  const roster = lines.length ? lines : [t.noCharacters];
  const values = await Promise.all(
    ids.map(async (id) => {
      const value = await ctx.pluginData.get(NAMESPACE, id);
      // a fixed key order: the store may give JSON keys back in any order
      const row = value as AffinityValue | null;
      const shown = row === null ? t.noRecord : JSON.stringify(ctx.sdk.modelFacingJson({ score: row.score, feeling: row.feeling }));
      return `- ${esc(id)} | ${esc(shown)}`;
    }),
  );
  return [
    {
      id: 'affinity-characters',
      content: ['<affinity-characters>', t.charactersIntro, ...roster, '</affinity-characters>'].join('\n'),
      position: 'system',
      audience: 'self',
      volatility: 'session',
    },
    {
      id: 'affinity-values',
      content: ['<affinity-values>', t.valuesIntro, ...(values.length ? values : [t.noCharacters]), '</affinity-values>'].join('\n'),
      position: 'system',
      audience: 'self',
      volatility: 'turn',
    },
  ];
}

/** `update-affinity`: writes each update as the character's row; an unknown or repeated character fails the whole call (no write kept). The summary names the characters. */
async function updateAffinity(args: Record<string, unknown>, ctx: ToolContext): Promise<{ updated: string[]; summary?: string }> {
  const updates = args.updates as Update[];
  const known = new Set(trackedIds(ctx.world, ctx.sdk));
  const seen = new Set<string>();
  for (const u of updates) {
    if (!known.has(u.character)) throw new Error(`"${u.character}" is not a character listed in <affinity-characters> (${[...known].join(', ') || 'none'})`);
    if (seen.has(u.character)) throw new Error(`"${u.character}" appears twice in updates`);
    seen.add(u.character);
  }
  for (const u of updates) {
    const value: AffinityValue = { score: u.score, feeling: u.feeling.trim() };
    await ctx.pluginData.set(NAMESPACE, u.character, value);
  }
  const summary = affinitySummary(
    ctx.sdk,
    updates.map((u) => ({ character: u.character, score: u.score, feeling: u.feeling.trim() })),
    ctx.world,
    ctx.locale,
  );
  return { updated: updates.map((u) => u.character), summary };
}

export function register(api: PluginApi): void {
  api.provideExtension('prompt.segment@1', 'affinity-blocks', { handler: (_input, ctx) => segments(ctx) });
  api.registerTool('update-affinity', updateAffinity);
}
