import type { HandlerContext, PluginApi, ReturnedSegment, ToolContext, WorldView } from '../../../libs/plugins-sdk';
import { relationsSummary } from './summary';
import { graphText } from './text';

/** Plugin data namespace: one row per directed pair, key `<from>-><to>`, value `{ from, to, relation }`. */
export const NAMESPACE = 'relations';

interface Relation {
  from: string;
  to: string;
  relation: string;
}

interface RelationArgs {
  from: string;
  to: string;
  relation: string | null;
}

export const edgeKey = (from: string, to: string): string => `${from}->${to}`;

const characterIds = (world: WorldView | null): string[] => (world?.characters ?? []).map((c) => c.id);

async function segments(ctx: HandlerContext): Promise<ReturnedSegment[]> {
  const t = graphText(ctx.locale);
  const esc = ctx.sdk.escapeXml;
  const roster = ctx.sdk.rosterLines(ctx.world?.characters ?? [], { seats: ctx.world?.seats });
  const rows = (await ctx.pluginData.list(NAMESPACE, { limit: 1000 })).sort((a, b) => ctx.sdk.byCodeUnits(a.key, b.key));
  const relations = rows.map((r) => {
    const edge = ctx.sdk.modelFacingJson(r.value) as Relation;
    return `- ${esc(edge.from)} -> ${esc(edge.to)} | ${esc(edge.relation)}`;
  });
  return [
    {
      id: 'npc-graph-characters',
      content: ['<npc-graph-characters>', t.charactersIntro, ...(roster.length ? roster : [t.noCharacters]), '</npc-graph-characters>'].join('\n'),
      position: 'system',
      audience: 'self',
      volatility: 'session',
    },
    {
      id: 'npc-graph-relations',
      content: ['<npc-graph-relations>', t.relationsIntro, ...(relations.length ? relations : [t.noRelations]), '</npc-graph-relations>'].join('\n'),
      position: 'system',
      audience: 'self',
      volatility: 'turn',
    },
  ];
}

/** `set-relations`: sets or removes directed relations; an unknown id, a self-relation or a pair given twice fails the call (nothing kept). */
async function setRelations(args: Record<string, unknown>, ctx: ToolContext): Promise<{ set: string[]; removed: string[]; summary?: string }> {
  const input = args.relations as RelationArgs[];
  const known = new Set(characterIds(ctx.world));
  const pairs = new Set<string>();
  for (const r of input) {
    for (const id of [r.from, r.to])
      if (!known.has(id)) throw new Error(`"${id}" is not a character id in <npc-graph-characters> (${[...known].sort(ctx.sdk.byCodeUnits).join(', ')})`);
    if (r.from === r.to) throw new Error(`a relation joins two different characters ("${r.from}" twice)`);
    const key = edgeKey(r.from, r.to);
    if (pairs.has(key)) throw new Error(`the pair ${key} appears twice`);
    pairs.add(key);
  }
  const set: string[] = [];
  const removed: string[] = [];
  for (const r of input) {
    const key = edgeKey(r.from, r.to);
    if (r.relation === null) {
      await ctx.pluginData.delete(NAMESPACE, key);
      removed.push(key);
    } else {
      const value: Relation = { from: r.from, to: r.to, relation: r.relation.trim() };
      await ctx.pluginData.set(NAMESPACE, key, value);
      set.push(key);
    }
  }
  const written = input.map((r) => ({ from: r.from, to: r.to, relation: r.relation === null ? null : r.relation.trim() }));
  return { set, removed, summary: relationsSummary(ctx.sdk, written, ctx.world, ctx.locale) };
}

export function register(api: PluginApi): void {
  api.provideExtension('prompt.segment@1', 'graph-blocks', { handler: (_input, ctx) => segments(ctx) });
  api.registerTool('set-relations', setRelations);
}
