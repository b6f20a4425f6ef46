import { z } from 'zod';
import type { HandlerContext, MemoryBlockDefinition, ServiceResult } from '../../../libs/plugins-sdk';

/** The id this plugin's own `memory.block-definitions@1` provider has (`contributes.extensions`). */
export const WORLD_BLOCKS_ID = 'world-blocks';

/** A block as the world configures it (`pluginConfig.memory.blocks[]` in WORLD.md). */
const WorldBlock = z
  .object({
    id: z.string().regex(/^[a-z][a-z0-9-]*$/, 'a block id: lower-case letters, digits, dashes'),
    label: z.string().min(1),
    description: z.string().optional(),
    limit: z.number().int().positive(),
    initial: z.string().optional(),
  })
  .strict()
  .refine((b) => b.initial === undefined || codePoints(b.initial) <= b.limit, { message: 'initial is longer than limit (characters)', path: ['initial'] });

const WorldMemoryConfig = z
  .object({ blocks: z.array(WorldBlock).default([]) })
  .strict()
  .superRefine((c, ctx) => {
    const seen = new Set<string>();
    c.blocks.forEach((b, i) => {
      if (seen.has(b.id)) ctx.addIssue({ code: 'custom', path: ['blocks', i, 'id'], message: `duplicate block id "${b.id}"` });
      seen.add(b.id);
    });
  });

/** Length in characters: Unicode code points (an emoji is one, never two UTF-16 units). */
export function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n += 1;
  return n;
}

/** The world's blocks (`ctx.world.pluginConfig.memory`); a bad configuration is an error naming the field. */
export function worldBlocks(world: HandlerContext['world']): MemoryBlockDefinition[] {
  const config = world?.pluginConfig.memory;
  if (config === undefined) return [];
  const parsed = WorldMemoryConfig.safeParse(config);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `pluginConfig.memory.${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`world ${world?.id ?? '?'}: ${issues}`);
  }
  return parsed.data.blocks.map((b) => ({ ...b }));
}

/** A block definition with the plugin that defined it. */
export interface DefinedBlock extends MemoryBlockDefinition {
  readonly providerPluginId: string;
}

/**
 * Every provider's blocks, in the order `ctx.services` answers (plugin id order), each provider's
 * in its own order. An id defined twice keeps its first definition.
 */
export function mergeDefinitions(answers: readonly ServiceResult<'memory.block-definitions@1'>[]): DefinedBlock[] {
  const out: DefinedBlock[] = [];
  const seen = new Set<string>();
  for (const answer of answers)
    for (const block of answer.result.blocks) {
      if (seen.has(block.id)) continue;
      seen.add(block.id);
      out.push({ ...block, providerPluginId: answer.providerPluginId });
    }
  return out;
}

/** The session's block definitions, from every `memory.block-definitions@1` provider. */
export async function definedBlocks(ctx: Pick<HandlerContext, 'services'>): Promise<DefinedBlock[]> {
  return mergeDefinitions(await ctx.services('memory.block-definitions@1'));
}
