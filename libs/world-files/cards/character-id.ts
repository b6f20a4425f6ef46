/**
 * The id of the world character a card's character becomes: its name in lowercase ASCII letters,
 * digits and dashes (accents dropped: `Zoë` → `zoe`), at most 48 characters; `character` when the
 * name has none of them (a CJK, Arabic or emoji name). Deterministic, so importing a card again
 * gives the same id.
 */
export function characterIdOf(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, 48)
    .replace(/^-+|-+$/g, '');
  return slug || 'character';
}
