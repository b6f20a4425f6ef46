import { randomUUID } from 'node:crypto';
import { renderTemplate, templateVariables } from '../../context';
import { InvalidInputError } from '../../errors';
import { type EventData, MAX_OPENING_TEXT_CHARS } from '../../events';
import { type LoadedWorld, promptLocaleOf } from '../../plugins-sdk';
import { codePointLength } from '../../text';

/** The error code of a bad `opening` (`POST /v1/sessions`): a 400 naming `opening`. */
export const INVALID_OPENING = 'INVALID_OPENING';

/**
 * Which of the world's openings a new session opens with (`POST /v1/sessions` `opening`): the
 * index asked for; absent, the first one when the world has openings, else none; `null`, none
 * (the session starts without one). An index the world does not have, or an index for a session
 * without a world or a world without openings, is a 400 naming `opening`.
 */
export function chooseOpening(world: LoadedWorld | null, requested: number | null | undefined): number | null {
  const count = world?.openings?.length ?? 0;
  if (requested === null) return null;
  if (requested === undefined) return count > 0 ? 0 : null;
  if (!world) throw invalidOpening('the session has no world (worldId), so it has no opening to choose');
  if (count === 0) throw invalidOpening(`world "${world.id}" has no openings`);
  if (!Number.isInteger(requested) || requested < 0 || requested >= count)
    throw invalidOpening(`world "${world.id}" has ${count} opening${count === 1 ? '' : 's'}: an index from 0 to ${count - 1}`);
  return requested;
}

/**
 * The opening as `session.opened@1` records it: the world's opening `index` rendered once, now,
 * with the template variables of spec §4 as they are at creation — `world.*` (its `lore` without
 * the narrator-only parts: the player reads the opening), `player.character` (the primary seat's
 * character), `characters.npcs`, `session.id`, `session.turnNumber` (0); `player.message`,
 * `inputs` and `userSettings` are empty (no turn, no plugin). A token whose first name is none of
 * these (a character card's `{{char}}`, `{{user}}`) stays as written; a value's own `{{ }}` is never
 * rendered. Replay and audit read the recorded text and never render it again. An opening that renders to nothing (or past
 * `MAX_OPENING_TEXT_CHARS`) is a 400 naming `opening`.
 */
export function renderOpening(args: { world: LoadedWorld; index: number; sessionId: string; locale: string }): EventData<'session.opened@1'> {
  const { world, index } = args;
  const template = world.openings?.[index];
  if (template === undefined) throw invalidOpening(`world "${world.id}" has no opening ${index}`);
  const variables = templateVariables({
    locale: promptLocaleOf(args.locale),
    session: { id: args.sessionId, turnNumber: 0 },
    world: { ...world, lore: world.sharedLore },
  });
  // a token that is no variable (a character card's `{{char}}`, `{{user}}`) stays as the world wrote it
  const text = renderTemplate(template, variables, { keepForeignTokens: true });
  if (text.trim() === '') throw invalidOpening(`opening ${index} of world "${world.id}" renders as empty text`);
  if (codePointLength(text) > MAX_OPENING_TEXT_CHARS)
    throw invalidOpening(`opening ${index} of world "${world.id}" renders to more than ${MAX_OPENING_TEXT_CHARS} characters`);
  return { turnId: randomUUID(), messageId: randomUUID(), openingIndex: index, text };
}

function invalidOpening(message: string): InvalidInputError {
  return new InvalidInputError([{ path: 'opening', message }], INVALID_OPENING);
}
