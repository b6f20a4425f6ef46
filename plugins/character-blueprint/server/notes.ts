import { estimateTokens, type CharacterBlueprint, type Locale, type WorldCharacter, type WorldSeat } from '../../../libs/plugins-sdk';
import { NOTE_FIELDS, type NoteField, TRIM_ORDER } from './fields';
import { NOTES_TEXT } from './labels';

/** The segment's budget (spec §4: about 6,000 tokens), by {@link estimateTokens}. */
export const NOTES_BUDGET_TOKENS = 6000;

/** A character whose notes are written: its name, aliases and projected blueprint. */
export interface NotedCharacter {
  readonly id: string;
  readonly name: string;
  readonly aliases: readonly string[];
  readonly blueprint: CharacterBlueprint;
}

export interface CharacterNotesOptions {
  readonly locale: Locale;
  readonly seats: readonly WorldSeat[];
  /** Default {@link NOTES_BUDGET_TOKENS}. */
  readonly budget?: number;
  /** The data boundary (`ctx.sdk.modelFacingJson`), applied to each blueprint. */
  readonly project: (value: unknown) => unknown;
  /** `ctx.sdk.escapeXml`: the content of the block is data. */
  readonly escape: (text: string) => string;
}

/** A character a player controls: of type `player`, or seated in any seat (the primary seat's current character included). */
export function playerControlled(character: Pick<WorldCharacter, 'id' | 'type'>, seats: readonly WorldSeat[]): boolean {
  return character.type === 'player' || seats.some((s) => s.characterId === character.id);
}

const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const oneLine = (text: string) => text.replace(/\s*[\r\n\u2028\u2029]+\s*/g, ' ').trim();
const strings = (value: unknown): string[] =>
  Array.isArray(value)
    ? value
        .filter((v): v is string => typeof v === 'string')
        .map(oneLine)
        .filter(Boolean)
    : [];

/** The blueprint through the data boundary, keeping only the fields of the schema with text in them. */
function projectBlueprint(blueprint: CharacterBlueprint, project: (value: unknown) => unknown): CharacterBlueprint {
  const raw = project(blueprint);
  const v = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const field of NOTE_FIELDS) {
    const value = Object.hasOwn(v, field) ? v[field] : undefined;
    if (field === 'relationships') {
      const entries =
        value && typeof value === 'object' && !Array.isArray(value) ? Object.entries(value).filter(([, t]) => typeof t === 'string' && oneLine(t)) : [];
      if (entries.length) out[field] = Object.fromEntries(entries.map(([k, t]) => [k, oneLine(t as string)]));
    } else if (typeof value === 'string') {
      if (oneLine(value)) out[field] = oneLine(value);
    } else {
      const list = strings(value);
      if (list.length) out[field] = list;
    }
  }
  return out as CharacterBlueprint;
}

/**
 * The characters whose notes are written: those with a blueprint, not controlled by a player,
 * sorted by id (code units, locale-independent).
 */
export function notedCharacters(characters: readonly WorldCharacter[], options: Pick<CharacterNotesOptions, 'seats' | 'project'>): NotedCharacter[] {
  return characters
    .filter((c) => c.blueprint !== undefined && !playerControlled(c, options.seats))
    .map((c) => ({
      id: c.id,
      name: oneLine(c.name),
      aliases: c.aliases.map(oneLine).filter(Boolean),
      blueprint: projectBlueprint(c.blueprint!, options.project),
    }))
    .filter((c) => NOTE_FIELDS.some((f) => c.blueprint[f] !== undefined))
    .sort(byId);
}

/** One character's entry with the fields of `dropped` left out; null when nothing is left. */
function entry(character: NotedCharacter, dropped: ReadonlySet<NoteField>, locale: Locale, names: ReadonlyMap<string, string>): string | null {
  const text = NOTES_TEXT[locale];
  const lines: string[] = [];
  for (const field of NOTE_FIELDS) {
    if (dropped.has(field)) continue;
    const value = character.blueprint[field];
    if (value === undefined) continue;
    const label = text.fields[field];
    if (typeof value === 'string') lines.push(`- ${label}${text.colon}${value}`);
    else if (Array.isArray(value)) lines.push(`- ${label}${text.colon.trimEnd()}`, ...value.map((item) => `  - ${item}`));
    else
      lines.push(`- ${label}${text.colon.trimEnd()}`, ...Object.entries(value).map(([id, relation]) => `  - ${names.get(id) ?? id}${text.colon}${relation}`));
  }
  if (lines.length === 0) return null;
  const aka = character.aliases.length ? text.aka(character.aliases) : '';
  return [`## ${character.name}${aka}`, ...lines].join('\n');
}

function render(parts: {
  entries: readonly string[];
  trimmed: readonly NoteField[];
  omitted: readonly string[];
  locale: Locale;
  escape: (t: string) => string;
}): string {
  const text = NOTES_TEXT[parts.locale];
  const head = [text.intro];
  if (parts.trimmed.length) head.push(text.trimmed(parts.trimmed.map((f) => text.fields[f].toLowerCase())));
  const blocks = [head.join('\n'), ...parts.entries];
  if (parts.omitted.length) blocks.push(text.omitted(parts.omitted));
  return `<character-notes>\n${parts.escape(blocks.join('\n\n'))}\n</character-notes>`;
}

/**
 * The `<character-notes>` content (spec §4 "Character notes for the narrative"), or null when no
 * character has notes. Trimmed level by level within the budget: every character's sample lines
 * first, then rules, then relationships, fears, goals, secrets, personality, manner; tone never.
 * When even tone alone does not fit, whole characters are left out from the end (highest id first)
 * and named on one line. A deterministic function of the characters, seats and locale.
 */
export function characterNotes(characters: readonly WorldCharacter[], options: CharacterNotesOptions): string | null {
  const noted = notedCharacters(characters, options);
  if (noted.length === 0) return null;
  const budget = options.budget ?? NOTES_BUDGET_TOKENS;
  const names = new Map(characters.map((c) => [c.id, oneLine(c.name)]));
  const build = (level: number, kept: number) => {
    const trimmed = TRIM_ORDER.slice(0, level);
    const dropped = new Set<NoteField>(trimmed);
    const entries = noted
      .slice(0, kept)
      .map((c) => entry(c, dropped, options.locale, names))
      .filter((e): e is string => e !== null);
    const omitted = noted.slice(kept).map((c) => `${c.name}`);
    return render({ entries, trimmed, omitted, locale: options.locale, escape: options.escape });
  };
  for (let level = 0; level <= TRIM_ORDER.length; level++) {
    const content = build(level, noted.length);
    if (estimateTokens(content) <= budget) return content;
  }
  for (let kept = noted.length - 1; kept > 0; kept--) {
    const content = build(TRIM_ORDER.length, kept);
    if (estimateTokens(content) <= budget) return content;
  }
  return build(TRIM_ORDER.length, 0);
}
