import type { HandlerContext, PluginApi, ReturnedSegment } from '../../../libs/plugins-sdk';

/**
 * The chat-mode narrator's character sheets: `<player-character>` and `<character-profiles>` as turn segments
 * (`ctx.sdk.worldCharacterSheets`), audience `self`: only this plugin's runtime reads them
 * (another story runtime provides its own). Only types are imported from the SDK, as a plugin
 * outside the repository would.
 */
export function characterSheets(ctx: HandlerContext): ReturnedSegment[] {
  return ctx.sdk.worldCharacterSheets(ctx.world, { locale: ctx.locale, audience: 'self' });
}

export function register(api: PluginApi): void {
  api.provideExtension('prompt.segment@1', 'character-sheets', { handler: (_input, ctx) => characterSheets(ctx) });
}
