import { z } from 'zod';
import { type ErrorIssue, InvalidInputError } from '../../errors';
import { createSchemaChecker, narratorOnlyIssues, type WorldDocument } from '../../plugins-sdk';
import { codePointLength } from '../../text';
import { loreMarkerLines } from '../world-creation';
import { validWorldDocument, WorldTooLargeError } from '../worlds';

/**
 * The world as the `world-generation` template asks the model for it (its "What to produce"): a
 * JSON object whose seats name `characterIds`, whose `dimensions` and lorebook `entries` are lists.
 * The engine maps it onto a `WorldDocument` (`generatedDocument`) and checks it; what a check finds
 * wrong is named by the reply's own field paths, so a repair round can quote them back.
 */

/** A problem a check found in a reply (`lore`, `characters.0.id`, `(reply)` for the reply as a whole). */
export type GenerationProblem = ErrorIssue;

/** The name the reply's JSON schema goes by on the wire (structured output; part of every recorded body). */
export const GENERATED_WORLD_SCHEMA_NAME = 'covel_world';

const stringList = { type: 'array', items: { type: 'string' } } as const;
const object = (properties: Record<string, unknown>) => ({ type: 'object', properties, required: Object.keys(properties) });

/**
 * The JSON schema of the reply, sent as the structured output where the protocol has one (OpenAI
 * Responses, Gemini; Chat Completions and Anthropic rely on the template's text). Written by hand
 * and never changed in place: its bytes are in every recorded request, so an audit of an old job
 * rebuilds the same body. A new shape is a new constant, chosen by the job's recorded request.
 */
export const GENERATED_WORLD_JSON_SCHEMA: Record<string, unknown> = object({
  name: { type: 'string' },
  description: { type: 'string' },
  tags: stringList,
  lore: { type: 'string' },
  characters: {
    type: 'array',
    items: object({
      id: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]*$' },
      name: { type: 'string' },
      aliases: stringList,
      type: { type: 'string', enum: ['player', 'npc'] },
      description: { type: 'string' },
      fields: { type: 'object' },
    }),
  },
  characterSchema: { type: 'object' },
  seats: { type: 'array', items: object({ id: { type: 'string' }, label: { type: 'string' }, characterIds: stringList, primary: { type: 'boolean' } }) },
  dimensions: {
    type: 'array',
    items: object({ name: { type: 'string', pattern: '^[a-z][a-z0-9-]*$' }, description: { type: 'string' }, schema: { type: 'object' }, value: {} }),
  },
  entries: { type: 'array', items: object({ id: { type: 'string' }, keys: stringList, content: { type: 'string' } }) },
});

const LOWER_ID = /^[a-z0-9][a-z0-9-]*$/;
const JsonObject = z.record(z.string(), z.unknown());

const GeneratedCharacter = z.object({
  id: z.string().regex(LOWER_ID, 'must be a readable lowercase id of letters, digits and -'),
  name: z.string().min(1),
  aliases: z.array(z.string().min(1)).default([]),
  type: z.enum(['player', 'npc']),
  description: z.string().default(''),
  fields: JsonObject.default({}),
});

const GeneratedSeat = z.object({
  id: z.string().min(1),
  label: z.string().min(1).optional(),
  characterIds: z.array(z.string().min(1)).min(1),
  primary: z.boolean().default(false),
});

const GeneratedDimension = z.object({
  name: z.string().regex(/^[A-Za-z][A-Za-z0-9_-]*$/, 'must be a lowercase id of letters, digits and -'),
  description: z.string().optional(),
  schema: JsonObject.default({}),
  value: z.unknown().refine((v) => v !== undefined, 'is required'),
});

const GeneratedEntry = z.object({ id: z.string().min(1), keys: z.array(z.string().min(1)).default([]), content: z.string().min(1) });

/** The reply's shape (unknown fields are dropped: a model may add some). */
export const GeneratedWorld = z.object({
  name: z.string().min(1),
  description: z.string().default(''),
  tags: z.array(z.string().min(1)).default([]),
  lore: z.string(),
  characters: z.array(GeneratedCharacter).min(1),
  characterSchema: JsonObject.default({}),
  seats: z.array(GeneratedSeat).default([]),
  dimensions: z.array(GeneratedDimension).default([]),
  entries: z.array(GeneratedEntry).default([]),
});
export type GeneratedWorld = z.infer<typeof GeneratedWorld>;

/** What a job asked for, as far as the check of a reply goes. */
export interface GenerationLimits {
  maxCharacters: number;
  maxLoreChars: number;
  /** The document's `plugins` (the job's request); absent: the plugins enabled by default. */
  plugins?: readonly string[];
}

/** A reply's verdict: the world it makes, or the problems found and the world as far as it could be read. */
export type GenerationVerdict =
  { ok: true; world: GeneratedWorld; document: WorldDocument } | { ok: false; world: GeneratedWorld | null; problems: GenerationProblem[] };

/** Most problems one verdict lists (a repair request quotes them all). */
export const MAX_PROBLEMS = 50;

const schemas = createSchemaChecker();

/** The reply text without a Markdown fence around it (models add one though told not to). */
export function unfenced(text: string): string {
  const trimmed = text.trim();
  const fenced = /^```[A-Za-z0-9-]*\r?\n([\s\S]*?)\r?\n?```$/.exec(trimmed);
  return fenced ? fenced[1] : trimmed;
}

/** Checks a draft's reply (the JSON the model wrote): parsed, shaped, mapped onto a world document and validated. */
export function checkDraft(text: string, limits: GenerationLimits): GenerationVerdict {
  let json: unknown;
  try {
    json = JSON.parse(unfenced(text));
  } catch (error) {
    return { ok: false, world: null, problems: [{ path: '(reply)', message: `not JSON: ${(error as Error).message}` }] };
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json))
    return { ok: false, world: null, problems: [{ path: '(reply)', message: 'not a JSON object' }] };
  const parsed = GeneratedWorld.safeParse(json);
  if (!parsed.success) return { ok: false, world: null, problems: parsed.error.issues.map((i) => ({ path: pathOf(i.path) || '(reply)', message: i.message })) };
  return checkWorld(parsed.data, limits);
}

/** Checks a world (a draft's, or one whose lore a repair replaced). */
export function checkWorld(world: GeneratedWorld, limits: GenerationLimits): GenerationVerdict {
  const problems = worldProblems(world, limits);
  let document: WorldDocument | null = null;
  try {
    document = validWorldDocument(generatedDocument(world, limits.plugins));
  } catch (error) {
    if (error instanceof InvalidInputError) problems.push(...error.issues.map((i) => ({ path: replyPath(i.path, world), message: i.message })));
    else if (error instanceof WorldTooLargeError) problems.push({ path: '(reply)', message: error.message });
    else throw error;
  }
  const unique = [...new Map(problems.map((p) => [`${p.path}\n${p.message}`, p])).values()].slice(0, MAX_PROBLEMS);
  return unique.length === 0 && document ? { ok: true, world, document } : { ok: false, world, problems: unique };
}

/**
 * Checks a lore repair's reply: the world with the new lore, whose marker lines must be those of
 * the lore it repaired when those were well-formed (the template keeps them "character for
 * character"); broken ones were the problem, so any well-formed set will do.
 */
export function checkRepairedLore(world: GeneratedWorld, text: string, limits: GenerationLimits): GenerationVerdict {
  const lore = unwrapped(unfenced(text));
  const repaired = { ...world, lore };
  const verdict = checkWorld(repaired, limits);
  const before = loreMarkerLines(world.lore);
  const kept = narratorOnlyIssues(world.lore).length > 0 || sameLines(before, loreMarkerLines(lore));
  if (kept) return verdict;
  const problem = { path: 'lore', message: `the marker lines must come back unchanged and in order: ${before.join(' | ') || '(none)'}` };
  return { ok: false, world: repaired, problems: [problem, ...(verdict.ok ? [] : verdict.problems)].slice(0, MAX_PROBLEMS) };
}

/** Whether every problem is in the lore (a lore repair can fix them), for a world that could be read. */
export function loreOnly(problems: readonly GenerationProblem[]): boolean {
  return problems.length > 0 && problems.every((p) => p.path === 'lore' || p.path.startsWith('lore.'));
}

/** The world document a reply makes: its fields as the document names them; the job's plugins. */
export function generatedDocument(world: GeneratedWorld, plugins?: readonly string[]): Record<string, unknown> {
  const schema = world.characterSchema;
  return {
    name: world.name,
    description: world.description,
    tags: world.tags,
    lore: world.lore,
    characters: world.characters.map((c) => ({ id: c.id, name: c.name, aliases: c.aliases, type: c.type, description: c.description, fields: c.fields })),
    // the keys a character schema has here; others (a model's `additionalProperties`, `$schema`) are left out
    characterSchema: {
      type: 'object',
      ...(typeof schema.description === 'string' ? { description: schema.description } : {}),
      properties: schema.properties ?? {},
      ...(schema.required !== undefined ? { required: schema.required } : {}),
    },
    // a seat takes the first of the characters the reply lets fill it
    seats: world.seats.map((s) => ({ id: s.id, ...(s.label ? { label: s.label } : {}), characterId: s.characterIds[0], primary: s.primary })),
    dimensions: Object.fromEntries(world.dimensions.map((d) => [d.name, { name: d.name, description: d.description, schema: d.schema, value: d.value }])),
    lorebook: world.entries.map((e) => ({ id: e.id, keys: e.keys, content: e.content })),
    ...(plugins ? { plugins: [...plugins] } : {}),
  };
}

/** The template's rules the document schema does not hold: limits, a player, seats of players, dimension values. */
function worldProblems(world: GeneratedWorld, limits: GenerationLimits): GenerationProblem[] {
  const problems: GenerationProblem[] = [];
  if (world.lore.trim() === '') problems.push({ path: 'lore', message: 'must not be empty' });
  const loreChars = codePointLength(world.lore);
  if (loreChars > limits.maxLoreChars) problems.push({ path: 'lore', message: `must be at most ${limits.maxLoreChars} characters (it has ${loreChars})` });
  if (world.characters.length > limits.maxCharacters)
    problems.push({ path: 'characters', message: `must be at most ${limits.maxCharacters} characters (it has ${world.characters.length})` });
  const players = new Set(world.characters.filter((c) => c.type === 'player').map((c) => c.id));
  if (players.size === 0) problems.push({ path: 'characters', message: 'at least one character must be a player' });
  world.seats.forEach((seat, i) =>
    seat.characterIds.forEach((id, j) => {
      if (!players.has(id)) problems.push({ path: `seats.${i}.characterIds.${j}`, message: `no player character "${id}"` });
    }),
  );
  const names = new Set<string>();
  world.dimensions.forEach((d, i) => {
    if (names.has(d.name)) problems.push({ path: `dimensions.${i}.name`, message: `duplicate dimension "${d.name}"` });
    names.add(d.name);
    const check = schemas.check(d.schema, d.value);
    if (!check.ok) problems.push({ path: `dimensions.${i}.value`, message: `does not match its schema: ${check.messages.join('; ')}` });
  });
  return problems;
}

/** A document path as the reply names it (the lorebook is the reply's `entries`, dimensions a list). */
function replyPath(path: string, world: GeneratedWorld): string {
  const [head, key, ...rest] = path.split('.');
  if (head === 'lorebook') return ['entries', key, ...rest].filter((p) => p !== undefined).join('.');
  if (head === 'dimensions' && key !== undefined) {
    const index = world.dimensions.findIndex((d) => d.name === key);
    return ['dimensions', index >= 0 ? String(index) : key, ...rest].join('.');
  }
  if (head === 'seats' && rest[0] === 'characterId') return `seats.${key}.characterIds.0`;
  return path;
}

const pathOf = (path: readonly PropertyKey[]) => path.map(String).join('.');

/** The lore without `<world-lore>` tags around it (the template asks for none). */
function unwrapped(text: string): string {
  const m = /^<world-lore>\s*([\s\S]*?)\s*<\/world-lore>$/.exec(text.trim());
  return m ? m[1] : text;
}

const sameLines = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((line, i) => line.trim() === b[i].trim());
