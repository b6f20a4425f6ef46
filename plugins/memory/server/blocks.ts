import type { HandlerContext, PluginDataReader, PromptLoader, ReturnedSegment } from '../../../libs/plugins-sdk';
import { codePoints, type DefinedBlock } from './definitions';

/** The namespace of the blocks' text: key = block id, value = `{ text }`. */
export const BLOCKS_NAMESPACE = 'blocks';

/** A block's current text: what the keeper wrote, else its definition's `initial`, else empty. */
export async function blockText(data: PluginDataReader, block: DefinedBlock): Promise<string> {
  const stored = (await data.get(BLOCKS_NAMESPACE, block.id)) as { text?: unknown } | null;
  return stored && typeof stored.text === 'string' ? stored.text : (block.initial ?? '');
}

const attr = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export interface RenderOptions {
  ctx: Pick<HandlerContext, 'locale' | 'sdk' | 'pluginData'>;
  prompts: Pick<PromptLoader, 'loadOrThrow'>;
  blocks: readonly DefinedBlock[];
}

/**
 * The `<memory-blocks>` body: one `<block>` per block in definition order, its text XML-escaped;
 * `usage` adds `used` / `limit` (for the keeper, which must stay within the limits, and which writes
 * the empty blocks too) and the intro line, which the story reads once in its system prompt instead
 * (`memory-blocks-intro`). The story's view leaves out the empty blocks: they tell it nothing, and
 * its turn context follows its history, so it is sent uncached every turn. `shown`: the blocks listed.
 */
async function renderBlocks(options: RenderOptions, usage: boolean): Promise<{ text: string; shown: number }> {
  const { ctx, prompts } = options;
  const empty = prompts.loadOrThrow('empty-block', ctx.locale);
  const lines = ['<memory-blocks>', ...(usage ? [prompts.loadOrThrow('blocks-intro', ctx.locale)] : [])];
  let shown = 0;
  for (const block of options.blocks) {
    const text = await blockText(ctx.pluginData, block);
    if (!usage && text.length === 0) continue;
    const counts = usage ? ` used="${codePoints(text)}" limit="${block.limit}"` : '';
    lines.push(`<block id="${attr(block.id)}" label="${attr(block.label)}"${counts}>`, text.length > 0 ? ctx.sdk.escapeXml(text) : empty, '</block>');
    shown += 1;
  }
  lines.push('</memory-blocks>');
  return { text: lines.join('\n'), shown };
}

/** `<memory-block-definitions>`: what the keeper keeps; the same for the whole session. */
function renderDefinitions(options: RenderOptions): string {
  const { ctx, prompts } = options;
  const one = (s: string) => ctx.sdk.escapeXml(s.replace(/\s+/g, ' ').trim());
  return [
    '<memory-block-definitions>',
    prompts.loadOrThrow('definitions-intro', ctx.locale),
    ...options.blocks.map((b) => `- ${b.id} | ${one(b.label)} | ${b.limit} | ${one(b.description ?? '')}`.trimEnd()),
    '</memory-block-definitions>',
  ].join('\n');
}

/**
 * The plugin's segments: the blocks for the story (turn) with the line that says what they are
 * (session: spec §2 "Layout for bookkeeping runtimes", what stays the same for the whole game goes
 * in the system prompt, so the story's turn context carries only the values; none while every block
 * is empty), the blocks with their usage for the keeper (turn), and the definitions for the keeper
 * (session).
 */
export async function memorySegments(options: RenderOptions): Promise<ReturnedSegment[]> {
  if (options.blocks.length === 0) return [];
  const { ctx, prompts } = options;
  const story = await renderBlocks(options, false);
  return [
    {
      id: 'memory-blocks-intro',
      content: prompts.loadOrThrow('story-blocks-intro', ctx.locale),
      position: 'system',
      audience: 'story',
      volatility: 'session',
    },
    ...(story.shown === 0
      ? []
      : [{ id: 'memory-blocks', content: story.text, position: 'system', audience: 'story', volatility: 'turn' } satisfies ReturnedSegment]),
    { id: 'memory-block-definitions', content: renderDefinitions(options), position: 'system', audience: 'self', volatility: 'session' },
    { id: 'memory-blocks-usage', content: (await renderBlocks(options, true)).text, position: 'system', audience: 'self', volatility: 'turn' },
  ];
}
