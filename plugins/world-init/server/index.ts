import type { HandlerContext, PluginApi, ReturnedSegment, WorldContextResult } from '../../../libs/plugins-sdk';
import { declaredDimensions, trackedDimensions } from './dimensions';
import { dimensionRulesSegment, dimensionValuesSegment, worldDimensionsIntroSegment, worldDimensionsSegment } from './segments';
import { currentSnapshot, PUBLISHED, turnKey } from './state';
import { dimensionRuleGet, updateDimensions } from './tools';

/** The id of this plugin's `prompt.segment@1` and `session.world-context@1` providers. */
export const PROVIDER_ID = 'dimensions';

const snapshotOf = (ctx: HandlerContext) => currentSnapshot(ctx.pluginData, ctx.world, ctx.session);

/**
 * world-init: the session's dimensions, published read-only once per turn (Sₙ), shown to the story,
 * and kept up to date after the narrative by `dimension-tracker`. Written as a plugin outside the
 * repository would be: only types come from the SDK, `modelFacingJson` / `escapeXml` through `ctx.sdk`.
 */
export function register(api: PluginApi): void {
  // pre-turn: publish Sₙ (a regeneration keeps the artifact its source turn published) and say
  // whether the tracker has anything to do (`schedule.when` of dimension-tracker reads `/track`)
  api.runFunction('publish', async (ctx) => {
    if (!ctx.world || declaredDimensions(ctx.world).length === 0) return { track: false };
    const key = turnKey(ctx.session.turnNumber);
    if ((await ctx.pluginData.get(PUBLISHED, key)) === null) {
      await ctx.pluginData.set(PUBLISHED, key, await currentSnapshot(ctx.pluginData, ctx.world, ctx.session));
    }
    return { track: trackedDimensions(ctx.world).length > 0 };
  });

  // Sₙ for {{ world.dimensions }} and the world-dimension-get / -list tools: the story-facing view (no updateRule)
  api.provideExtension('session.world-context@1', PROVIDER_ID, {
    async handler(_input, ctx): Promise<WorldContextResult> {
      const dims = declaredDimensions(ctx.world);
      if (dims.length === 0) return {};
      const snapshot = await snapshotOf(ctx);
      return {
        dimensions: Object.fromEntries(
          dims.map(([id, d]) => [
            id,
            {
              name: d.name,
              ...(d.description !== undefined ? { description: d.description } : {}),
              schema: d.schema,
              value: snapshot.dimensions[id].value as NonNullable<unknown> | null,
              version: snapshot.dimensions[id].version,
            },
          ]),
        ),
      };
    },
  });

  api.provideExtension('prompt.segment@1', PROVIDER_ID, {
    async handler(_input, ctx): Promise<ReturnedSegment[]> {
      const world = ctx.world;
      if (!world || declaredDimensions(world).length === 0) return [];
      const snapshot = await snapshotOf(ctx);
      return [
        worldDimensionsIntroSegment(world, ctx.locale),
        worldDimensionsSegment(world, snapshot, ctx.locale, ctx.sdk),
        dimensionRulesSegment(world, ctx.locale, ctx.sdk),
        dimensionValuesSegment(world, snapshot, ctx.locale, ctx.sdk),
      ].filter((s): s is ReturnedSegment => s !== null);
    },
  });

  api.registerTool('update-dimensions', updateDimensions);
  api.registerTool('dimension-rule-get', dimensionRuleGet);
}
