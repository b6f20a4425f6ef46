import type { HookContext, HookPayloads, HookResults, PluginApi, ToolContext } from '../../../libs/plugins-sdk';
import { characterIds, storyText, type Term, userMessage, VOCABULARY } from './request';
import { recordSummary } from './summary';

/** Namespace of the facts, one row per turn: key `turn-<n>`, value `{ facts: [{ subject, predicate, object }] }`. */
export const FACTS = 'facts';

interface Fact {
  subject: string;
  predicate: string;
  object: string;
}

/**
 * Spec §3 "How the built-in plugins use it": world-ir's PostContextAssembly trims its own history
 * output and related memories, and appends no segment. It keeps none of the assembled messages
 * (history, summaries, memory blocks, the turn context, the player's input, the ending hint) and
 * sends one user message it builds itself; the system prompt (preamble + body) stays as assembled.
 * Other runtimes' requests are left alone.
 */
async function ownRequest(payload: HookPayloads['PostContextAssembly'], ctx: HookContext): Promise<HookResults['PostContextAssembly']> {
  // registered for its own runtimes only (other runtimes' requests never ask it); kept for a host that asks anyway
  if (ctx.runtime.pluginId !== ctx.pluginId) return null;
  return { messages: [{ role: 'user', content: await userMessage(ctx, storyText(payload.sources.inputSlots)) }] };
}

/** `record-world-ir`: adds new terms to the vocabulary and stores the turn's facts; a subject or object that is no character or term fails the call. */
async function recordWorldIr(args: Record<string, unknown>, ctx: ToolContext): Promise<{ newTerms: string[]; facts: number; summary?: string }> {
  const terms = args.terms as Term[];
  const facts = args.facts as Fact[];
  const known = new Set(characterIds(ctx.world));
  const newTerms: string[] = [];
  const newNames: string[] = [];
  for (const t of terms) {
    const key = ctx.sdk.foldKey(t.term);
    if (key === '') throw new Error('a term must have visible characters');
    known.add(key);
    if ((await ctx.pluginData.get(VOCABULARY, key)) === null && !newTerms.includes(key)) {
      newTerms.push(key);
      newNames.push(t.term.trim());
    }
  }
  for (const row of await ctx.pluginData.list(VOCABULARY, { limit: 1000 })) known.add(row.key);
  for (const f of facts)
    for (const end of [f.subject, f.object])
      if (!known.has(end) && !known.has(ctx.sdk.foldKey(end)))
        throw new Error(`"${end}" is neither a character id nor a term: add it to "terms" in the same call`);
  for (const t of terms) {
    const key = ctx.sdk.foldKey(t.term);
    if (newTerms.includes(key)) await ctx.pluginData.set(VOCABULARY, key, { term: t.term.trim(), kind: t.kind });
  }
  if (facts.length > 0) {
    const key = `turn-${ctx.session.turnNumber}`;
    const previous = ((await ctx.pluginData.get(FACTS, key)) as { facts: Fact[] } | null)?.facts ?? [];
    await ctx.pluginData.set(FACTS, key, {
      facts: [...previous, ...facts.map((f) => ({ subject: f.subject, predicate: f.predicate.trim(), object: f.object }))],
    });
  }
  return { newTerms, facts: facts.length, summary: recordSummary(ctx.sdk, facts.length, newNames, ctx.locale) };
}

export function register(api: PluginApi): void {
  api.hook('PostContextAssembly', ownRequest, { runtimes: 'own' });
  api.registerTool('record-world-ir', recordWorldIr);
}
