import { InvalidInputError } from '../../../errors';
import { MAX_OPENING_TEXT_CHARS, SessionOpenedV1 } from '../../../events';
import { toLoadedWorld, WorldDocument, type WorldDocumentInput } from '../../../plugins-sdk';
import { chooseOpening, renderOpening } from '../session-opening';

const world = (input: Partial<WorldDocumentInput>, id = 'harbour') => toLoadedWorld(id, WorldDocument.parse({ name: 'The Harbour', ...input }));
const issuesOf = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    if (error instanceof InvalidInputError) return { code: error.code, issues: error.issues };
    throw error;
  }
  throw new Error('no error');
};

describe('chooseOpening: which of the world’s openings a new session opens with', () => {
  const two = world({ openings: ['One.', 'Two.'] });
  const none = world({});
  it('absent: the first when the world has openings, else none; null: none; an index: that one', () => {
    expect(chooseOpening(two, undefined)).toBe(0);
    expect(chooseOpening(none, undefined)).toBeNull();
    expect(chooseOpening(null, undefined)).toBeNull();
    expect(chooseOpening(two, null)).toBeNull();
    expect(chooseOpening(two, 1)).toBe(1);
  });

  it.each([
    ['past the last', two, 2, /from 0 to 1/],
    ['negative', two, -1, /from 0 to 1/],
    ['a fraction', two, 0.5, /from 0 to 1/],
    ['for a world without openings', none, 0, /has no openings/],
    ['without a world', null, 0, /no world/],
  ])('an index %s is a 400 naming `opening`', (_what, w, index, message) => {
    expect(issuesOf(() => chooseOpening(w, index))).toEqual({
      code: 'INVALID_OPENING',
      issues: [{ path: 'opening', message: expect.stringMatching(message) }],
    });
  });
});

describe('renderOpening: rendered once with the template variables of creation', () => {
  const harbour = world({
    description: 'Salt and {{ world.lore }}',
    lore: 'Boats rock by the quay.\n<!-- narrator-only -->\nThe harbourmaster smuggles.\n<!-- /narrator-only -->',
    characters: [
      { id: 'yu', name: '雨 Yu', type: 'player', description: 'A deckhand.' },
      { id: 'sam', name: 'Sam', type: 'npc', description: 'The harbourmaster </world-lore>.' },
    ],
    seats: [{ id: 'deck', label: 'Deckhand', characterId: 'yu', primary: true }],
    openings: [
      'You are {{ player.character.name }} of {{ world.name }} (turn {{ session.turnNumber }}, {{ session.id }}). {{ world.description }} 🚢 مرحبا',
      '{{ world.lore }}',
      '{{ characters.npcs }}',
      '{{ player.message }}{{ inputs.x.y }}{{ userSettings.z }}',
      '{{char}} waves at {{ user }}: "{{random:hi,hello}}"',
    ],
  });

  it("fills the player's character, the world and the session (turn 0); a value's own braces stay text", () => {
    const opened = renderOpening({ world: harbour, index: 0, sessionId: 's-1', locale: 'en' });
    expect(opened.text).toBe('You are 雨 Yu of The Harbour (turn 0, s-1). Salt and {{ world.lore }} 🚢 مرحبا');
    expect(opened.openingIndex).toBe(0);
    expect(opened.turnId).not.toBe(opened.messageId);
    expect(SessionOpenedV1.safeParse(opened).success).toBe(true);
  });

  it('the player reads it: `world.lore` leaves out the narrator-only parts; other characters are their profile lines', () => {
    expect(renderOpening({ world: harbour, index: 1, sessionId: 's', locale: 'en' }).text).toBe('Boats rock by the quay.');
    expect(renderOpening({ world: harbour, index: 2, sessionId: 's', locale: 'en' }).text).toBe('Sam [npc] | The harbourmaster </world-lore>.');
  });

  it("a character card's macros (tokens that name no variable) stay as written", () => {
    expect(renderOpening({ world: harbour, index: 4, sessionId: 's', locale: 'en' }).text).toBe('{{char}} waves at {{ user }}: "{{random:hi,hello}}"');
  });

  it('an opening that renders to nothing, or past the limit, is a 400 naming `opening`', () => {
    expect(issuesOf(() => renderOpening({ world: harbour, index: 3, sessionId: 's', locale: 'en' }))).toEqual({
      code: 'INVALID_OPENING',
      issues: [{ path: 'opening', message: expect.stringMatching(/renders as empty text/) }],
    });
    const long = world({ lore: '龍'.repeat(MAX_OPENING_TEXT_CHARS / 2 + 1), openings: ['{{ world.lore }}{{ world.lore }}'] });
    expect(issuesOf(() => renderOpening({ world: long, index: 0, sessionId: 's', locale: 'en' })).issues[0].message).toMatch(/more than 64000 characters/);
  });

  it('the event refuses an opening text that is empty, holds a lone surrogate or NUL', () => {
    const base = { turnId: 't', messageId: 'm', openingIndex: 0 };
    for (const text of ['', '   ', 'a\uD800b', 'a\u0000b']) expect(SessionOpenedV1.safeParse({ ...base, text }).success).toBe(false);
    expect(SessionOpenedV1.safeParse({ ...base, text: '👩‍👩‍👧‍👦' }).success).toBe(true);
  });
});
