/** Seats and the characters played from them (spec §4 `player.character`, `characterSheetSegments`). */

/** A seat as the helpers need it (a world's `seats`, or a session's). */
export interface SeatLike {
  readonly id: string;
  readonly characterId?: string;
  readonly primary?: boolean;
}

/** A character as the helpers need it (a world's `characters`, or a session's roster). */
export interface CharacterLike {
  readonly id: string;
  readonly name: string;
  readonly type?: string;
  readonly aliases?: readonly string[];
  readonly description?: string;
  readonly fields?: Readonly<Record<string, unknown>>;
}

/** The primary seat: the one marked `primary`, else the first; `undefined` without seats. */
export function primarySeat<S extends SeatLike>(seats: readonly S[] | undefined): S | undefined {
  return seats?.find((s) => s.primary === true) ?? seats?.[0];
}

/**
 * The character played from `seat` right now. A seat (or a seat id) is looked up again in
 * `seats`, so the current assignment wins over a stale seat object; a seat not in `seats`, a seat
 * with no character, or a character id not in `characters` gives `undefined`.
 */
export function currentCharacterOf<C extends CharacterLike>(
  seat: SeatLike | string | undefined,
  characters: readonly C[] | undefined,
  seats: readonly SeatLike[] | undefined,
): C | undefined {
  if (seat === undefined) return undefined;
  const id = typeof seat === 'string' ? seat : seat.id;
  const current = seats?.find((s) => s.id === id);
  if (current?.characterId === undefined) return undefined;
  return characters?.find((c) => c.id === current.characterId);
}

/** Characters a player controls: seated in any seat, or of type `player`. */
export function isPlayerControlled(character: CharacterLike, seats: readonly SeatLike[] | undefined): boolean {
  return character.type === 'player' || (seats ?? []).some((s) => s.characterId === character.id);
}
