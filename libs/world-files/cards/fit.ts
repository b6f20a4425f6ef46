/**
 * Step 5: a valid card that must also make a valid world. The card spec allows what a world does
 * not: a blank name, more greetings than `WORLD_LIMITS.openings`, a longer scenario or greeting,
 * more entries, a world document past `WORLD_LIMITS.documentBytes`, a scenario whose
 * `<!-- narrator-only -->` marker lines do not pair up (in a world's lore those lines mark the
 * narrator's part; balanced ones are kept with that meaning), or an entry's `extensions.covel`
 * (reserved for what a Covel export writes) of another shape. Each problem names the card field.
 * Last, the world is checked with `WorldDocument` itself, so `cardToWorld` of a card `parseCard`
 * accepts always validates.
 */
import { narratorOnlyIssues, WORLD_LIMITS, WorldDocument } from '../../plugins-sdk';
import { codePointLength } from '../../text';
import { cardToWorld, greetingsOf } from './card-to-world';
import { covelExtensionIssues, isKeptAside } from './entries';
import { BODY, type CardFailure, type CardIssue, dottedPath, failure } from './result';
import type { CharacterCard } from './schema';

export function checkFitsWorld(card: CharacterCard): { ok: true } | CardFailure {
  const d = card.data;
  const invalid: CardIssue[] = [];
  const limits: CardIssue[] = [];
  if (d.name.trim() === '') invalid.push({ path: 'data.name', message: 'must not be blank (it names the world and its character)' });
  for (const issue of narratorOnlyIssues(d.scenario))
    invalid.push({ path: 'data.scenario', message: `line ${issue.line}: ${issue.message} (a line that holds only this marker is reserved in a world's lore)` });
  invalid.push(...covelExtensionIssues(d.character_book));
  if (codePointLength(d.scenario) > WORLD_LIMITS.loreChars)
    limits.push({ path: 'data.scenario', message: `longer than ${WORLD_LIMITS.loreChars} characters (WORLD_LIMITS.loreChars)` });
  const greetings = greetingsOf(d.first_mes, d.alternate_greetings);
  if (greetings.length > WORLD_LIMITS.openings)
    limits.push({
      path: 'data.alternate_greetings',
      message: `${greetings.length} greetings; a world has at most ${WORLD_LIMITS.openings} openings (WORLD_LIMITS.openings)`,
    });
  [d.first_mes, ...d.alternate_greetings].forEach((g, i) => {
    if (codePointLength(g) > WORLD_LIMITS.openingChars)
      limits.push({
        path: i === 0 ? 'data.first_mes' : `data.alternate_greetings.${i - 1}`,
        message: `longer than ${WORLD_LIMITS.openingChars} characters (WORLD_LIMITS.openingChars)`,
      });
  });
  const active = (d.character_book?.entries ?? []).filter((e) => !isKeptAside(e)).length;
  if (active > WORLD_LIMITS.lorebookEntries)
    limits.push({
      path: 'data.character_book.entries',
      message: `${active} entries; a world's lorebook holds at most ${WORLD_LIMITS.lorebookEntries} (WORLD_LIMITS.lorebookEntries)`,
    });
  if (invalid.length) return failure('INVALID_CARD', invalid);
  if (limits.length) return failure('LIMIT_EXCEEDED', limits);

  const world = WorldDocument.safeParse(cardToWorld(card));
  if (!world.success)
    return failure(
      'INVALID_CARD',
      world.error.issues.map((i) => ({ path: `(world).${dottedPath(i.path)}`, message: i.message })),
    );
  const bytes = Buffer.byteLength(JSON.stringify(world.data), 'utf8');
  if (bytes > WORLD_LIMITS.documentBytes)
    return failure('TOO_LARGE', {
      path: BODY,
      message: `the world made from this card is ${bytes} bytes as JSON; a world may be at most ${WORLD_LIMITS.documentBytes} (WORLD_LIMITS.documentBytes)`,
    });
  return { ok: true };
}
