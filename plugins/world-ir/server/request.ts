import type { HookContext, WorldView } from '../../../libs/plugins-sdk';
import { irText } from './text';

export const VOCABULARY = 'vocabulary';
/** Terms listed in `<vocabulary>`; the rest are counted. */
export const LISTED_TERMS = 300;

export interface Term {
  term: string;
  kind: string;
}

/** The world's character ids (what a fact's subject or object may name besides a term). */
export const characterIds = (world: WorldView | null): string[] => (world?.characters ?? []).map((c) => c.id);

/** The story text this turn's narrative produced, from the runtime's `story` input (its original values). */
export function storyText(inputSlots: readonly unknown[]): string {
  const slot = inputSlots.find((s): s is { binding: string; items?: unknown[]; value?: unknown } => (s as { binding?: unknown })?.binding === 'story');
  const values = slot?.items ?? (slot?.value !== undefined ? [slot.value] : []);
  return values.filter((v): v is string => typeof v === 'string' && v.trim() !== '').join('\n\n');
}

/**
 * The one user message world-ir sends, fields that change least first (spec §2): the character
 * roster (changes only with the roster), the vocabulary (grows now and then), this turn's story
 * text (new every turn). Everything is XML-escaped data.
 */
export async function userMessage(ctx: HookContext, story: string): Promise<string> {
  const t = irText(ctx.locale);
  const esc = ctx.sdk.escapeXml;
  const characters = ctx.sdk.rosterLines(ctx.world?.characters ?? [], { seats: ctx.world?.seats });
  const rows = (await ctx.pluginData.list(VOCABULARY, { limit: 1000 })).sort((a, b) => ctx.sdk.byCodeUnits(a.key, b.key));
  const terms = rows.slice(0, LISTED_TERMS).map((r) => {
    const term = ctx.sdk.modelFacingJson(r.value) as Term;
    return `- ${esc(term.term)} [${esc(term.kind)}]`;
  });
  return [
    ['<character-roster>', ...(characters.length ? characters : [t.noCharacters]), '</character-roster>'].join('\n'),
    [
      '<vocabulary>',
      ...(terms.length ? terms : [t.noTerms]),
      ...(rows.length > LISTED_TERMS ? [t.more(rows.length - LISTED_TERMS)] : []),
      '</vocabulary>',
    ].join('\n'),
    ['<story-text>', esc(story), '</story-text>'].join('\n'),
  ].join('\n\n');
}
