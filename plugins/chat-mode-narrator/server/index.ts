import type { HandlerContext, PluginApi, ReturnedSegment } from '../../../libs/plugins-sdk';

/**
 * The chat-mode narrator's character sheets (spec §4 "Writing that keeps the system prompt unchanged"): the
 * body only names `<player-character>` and `<character-profiles>`; their content comes as turn
 * segments (position system, volatility turn → the turn context), so the system prompt stays
 * byte-identical from turn to turn while the characters change. Audience `self`: only this
 * plugin's runtime reads them (another story runtime provides its own).
 *
 * Written as a plugin outside the repository would be: only types are imported from the SDK, the
 * helpers come through `ctx.sdk`.
 */
export function characterSheets(ctx: HandlerContext): ReturnedSegment[] {
  const world = ctx.world;
  if (!world) return [];
  const current = ctx.sdk.currentCharacterOf(ctx.sdk.primarySeat(world.seats), world.characters, world.seats);
  return ctx.sdk.characterSheetSegments(world.characters, {
    currentCharacterId: current?.id,
    profiles: true,
    locale: ctx.locale,
    schema: world.characterSchema,
    seats: world.seats,
    audience: 'self',
  });
}

export function register(api: PluginApi): void {
  api.provideExtension('prompt.segment@1', 'character-sheets', { handler: (_input, ctx) => characterSheets(ctx) });
}
