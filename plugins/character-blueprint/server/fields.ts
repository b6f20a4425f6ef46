/** The blueprint's fields in the order they are written (the schema's order, `CharacterBlueprint`). */
export const NOTE_FIELDS = ['tone', 'manner', 'personality', 'goals', 'fears', 'secrets', 'relationships', 'rules', 'sampleLines'] as const;
export type NoteField = (typeof NOTE_FIELDS)[number];

/**
 * The trimming levels, first trimmed first (spec §4: sample lines first, then rules; tone never).
 * Level `n` leaves out the first `n` fields for every character. `tone` is not in the list.
 */
export const TRIM_ORDER = [
  'sampleLines',
  'rules',
  'relationships',
  'fears',
  'goals',
  'secrets',
  'personality',
  'manner',
] as const satisfies readonly NoteField[];
