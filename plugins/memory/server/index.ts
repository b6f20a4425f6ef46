import { join } from 'node:path';
import type { PluginApi, ToolContext } from '../../../libs/plugins-sdk';
import { BLOCKS_NAMESPACE, blockText, memorySegments } from './blocks';
import { definedBlocks, WORLD_BLOCKS_ID, worldBlocks } from './definitions';
import { applyEdit, type MemoryEdit, MemoryEditError } from './edit';
import { editSummary } from './summary';

/** Templates every locale must have (checked at start-up). */
const TEMPLATES = ['blocks-intro', 'story-blocks-intro', 'definitions-intro', 'empty-block'] as const;

/**
 * The memory plugin. Written as a plugin outside the repository would be: only types come from
 * the SDK; the prompt loader, its folder and `escapeXml` come through `api.sdk` / `ctx.sdk`, the
 * block definitions through `ctx.services('memory.block-definitions@1')` (every provider's, this
 * plugin's own `world-blocks` among them). The kernel never reads this plugin's namespace.
 */
export function register(api: PluginApi): void {
  const root = api.sdk.pluginRoot;
  if (root === null) throw new Error('memory: the host gave no plugin folder (api.sdk.pluginRoot), so its templates cannot be read');
  const prompts = api.sdk.createPromptLoader(join(root, 'prompts', 'server'));
  for (const name of TEMPLATES) for (const locale of ['en', 'zh-Hans'] as const) prompts.loadOrThrow(name, locale);

  api.provideExtension('memory.block-definitions@1', WORLD_BLOCKS_ID, { handler: (_input, ctx) => ({ blocks: worldBlocks(ctx.world) }) });

  api.provideExtension('prompt.segment@1', 'blocks', {
    handler: async (_input, ctx) => memorySegments({ ctx, prompts, blocks: await definedBlocks(ctx) }),
  });

  const edit = (toEdit: (args: Record<string, unknown>) => MemoryEdit) => async (args: Record<string, unknown>, ctx: ToolContext) => {
    const blocks = await definedBlocks(ctx);
    const block = blocks.find((b) => b.id === args.block);
    if (!block) throw new MemoryEditError(`no memory block "${String(args.block)}"; the blocks are: ${blocks.map((b) => b.id).join(', ') || '(none defined)'}`);
    const current = await blockText(ctx.pluginData, block);
    const change = toEdit(args);
    const text = applyEdit(block, current, change);
    await ctx.pluginData.set(BLOCKS_NAMESPACE, block.id, { text });
    return { block: block.id, used: [...text].length, limit: block.limit, summary: editSummary(ctx.sdk, block.label, change, ctx.locale) };
  };
  api.registerTool(
    'memory-append',
    edit((a) => ({ kind: 'append', line: String(a.line) })),
  );
  api.registerTool(
    'memory-replace',
    edit((a) => ({ kind: 'replace', old: String(a.old), new: String(a.new) })),
  );
  api.registerTool(
    'memory-clear',
    edit(() => ({ kind: 'clear' })),
  );
}
