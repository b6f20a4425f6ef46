import type { HandlerContext, PluginApi, ReturnedSegment } from '../../../libs/plugins-sdk';
import { characterNotes } from './notes';

/**
 * `<character-notes>` (spec §4 "Character notes for the narrative"): the roleplay notes of the
 * session's characters, for every story runtime. Volatility `session`, position `system`: it sits
 * in the stable part of the system prompt and changes only when the roster does. Only types are
 * imported from the SDK; the data boundary and escaping come through `ctx.sdk`.
 */
export function characterNotesSegments(ctx: HandlerContext): ReturnedSegment[] {
  const world = ctx.world;
  if (!world) return [];
  const content = characterNotes(world.characters, {
    locale: ctx.locale,
    seats: world.seats,
    project: (value) => ctx.sdk.modelFacingJson(value),
    escape: (text) => ctx.sdk.escapeXml(text),
  });
  return content === null ? [] : [{ id: 'character-notes', content, position: 'system', audience: 'story', volatility: 'session' }];
}

export function register(api: PluginApi): void {
  api.provideExtension('prompt.segment@1', 'character-notes', { handler: (_input, ctx) => characterNotesSegments(ctx) });
}
