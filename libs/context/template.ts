/**
 * Template variables (spec §4): `{{ variable }}` in a runtime's own body, interpreted once.
 * Pure: no I/O; the caller gathers the inputs.
 */
import { characterProfileLines, characterSheet, type CharacterSchemaLike } from '../data-boundary';
import type { Locale } from '../plugins-sdk';
import { type CharacterLike, currentCharacterOf, primarySeat, type SeatLike } from '../data-boundary';
import { escapeXml, modelFacingJson } from '../data-boundary';

/** A template's variables: nested plain objects, read through own properties only. */
export type TemplateVariables = Readonly<Record<string, unknown>>;

const TOKEN = /\{\{\s*([^\s{}]+)\s*\}\}/g;
/** A body line that opens a block: `<name>` or `<name attr="…">` at its start (indentation allowed; not `<name/>`). */
const BLOCK_OPEN = /^[ \t]*<([A-Za-z_][\w.:-]*)(?:\s[^>]*)?>/;

/**
 * The value at a dotted path, reading own data properties only: `Object.prototype` (and any
 * inherited member, any getter) is never read, so `constructor`, `toString` or `__proto__` read
 * their explicit value or nothing. Array indexes are own properties (`world.tags.0`).
 */
export function lookupVariable(variables: TemplateVariables, path: string): unknown {
  let current: unknown = variables;
  for (const key of path.split('.')) {
    if (current === null || typeof current !== 'object') return undefined;
    const descriptor = Object.getOwnPropertyDescriptor(current, key);
    if (!descriptor || !('value' in descriptor)) return undefined;
    current = descriptor.value;
  }
  return current;
}

/** A variable's text: strings and numbers as they are, objects and arrays as model-facing JSON, nothing as ''. */
export function variableText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (typeof value === 'object') return JSON.stringify(modelFacingJson(value)) ?? '';
  return '';
}

/** How `renderTemplate` treats a token that names no variable. */
export interface RenderTemplateOptions {
  /**
   * Leave a token whose first name is not one of `variables`' own keys as written (a character
   * card's `{{char}}`, `{{user}}`, `{{random:a,b}}`) instead of rendering it as the empty string.
   * A known variable that resolves to nothing still renders as the empty string. Default: false.
   */
  keepForeignTokens?: boolean;
}

/**
 * Renders a runtime body (spec §4). Each `{{ path }}` of the body is replaced once, in one pass:
 * a value is never scanned again, so a `{{ … }}` inside a value stays as text. An unknown
 * variable (or one that resolves to nothing) renders as the empty string (with
 * `keepForeignTokens`, a token whose first name is no variable stays as written); a token that is
 * not a path (`{{ }}`, `{{ a b }}`) is left as written. Inside a block — from a body line that starts
 * with `<name>` to the next `</name>` (to the end of the body when unclosed) — values are
 * XML-escaped, so a `</name>` in a value cannot close it; elsewhere, and in prose that mentions a
 * tag mid-line, values are written as they are. Blocks are found in the body, never in values.
 */
export function renderTemplate(body: string, variables: TemplateVariables, options: RenderTemplateOptions = {}): string {
  const keep = options.keepForeignTokens === true;
  const lines = body.split('\n');
  let open: string | null = null;
  return lines
    .map((line) => {
      if (open === null) {
        const match = BLOCK_OPEN.exec(line);
        if (!match || match[0].endsWith('/>')) return interpolate(line, variables, false, keep);
        open = match[1];
        const start = match[0].length;
        return line.slice(0, start) + renderInBlock(line.slice(start));
      }
      return renderInBlock(line);
    })
    .join('\n');

  /** Escapes up to this block's closing tag; after it, the rest of the line is outside. */
  function renderInBlock(text: string): string {
    const close = `</${open}>`;
    const at = text.indexOf(close);
    if (at < 0) return interpolate(text, variables, true, keep);
    open = null;
    const end = at + close.length;
    return interpolate(text.slice(0, at), variables, true, keep) + close + interpolate(text.slice(end), variables, false, keep);
  }
}

function interpolate(text: string, variables: TemplateVariables, escaped: boolean, keepForeign: boolean): string {
  return text.replace(TOKEN, (token, path: string) => {
    if (keepForeign && !Object.hasOwn(variables, path.split('.')[0])) return token;
    const value = variableText(lookupVariable(variables, path));
    return escaped ? escapeXml(value) : value;
  });
}

/** A plugin setting as `contributes.settings` declares it. */
export interface DeclaredSetting {
  key: string;
  default?: unknown;
}

/** A world as the variables read it (a `LoadedWorld` fits). */
export interface TemplateWorld {
  name: string;
  description?: string;
  tags?: readonly string[];
  lore?: string;
  schema?: Readonly<Record<string, unknown>>;
  entries?: readonly unknown[];
  dimensions?: Readonly<Record<string, { name: string; description?: string; schema?: unknown; value?: unknown; version?: number }>>;
  characters?: readonly CharacterLike[];
  seats?: readonly SeatLike[];
  characterSchema?: CharacterSchemaLike;
}

export interface TemplateVariablesInput {
  locale: Locale;
  session: { id: string; turnNumber: number };
  player?: { message?: string; lastFormValues?: unknown };
  world?: TemplateWorld | null;
  /** The session's roster and seats; default the world's. */
  characters?: readonly CharacterLike[];
  seats?: readonly SeatLike[];
  /** Resolved inputs: plugin id → runtime id → value (an object whose fields `{{ inputs.p.r.field }}` reads). */
  inputs?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  /** `contributes.settings` of the plugin's root manifest, and the player's configuration. */
  settings?: { declared?: readonly DeclaredSetting[]; values?: Readonly<Record<string, unknown>> };
}

/**
 * The story-facing view of dimensions (spec §4 "Projection does not change the source data"):
 * `{ name, description?, schema, value, version }` only — never the tracker's bookkeeping
 * (`updateRule`, `initialValue`, `lastTrackedSource`).
 */
function publicDimensions(dimensions: NonNullable<TemplateWorld['dimensions']>): Record<string, unknown> {
  return ownRecord(
    Object.entries(dimensions).map(([id, d]) => [
      id,
      {
        name: d.name,
        ...(d.description !== undefined ? { description: d.description } : {}),
        ...(d.schema !== undefined ? { schema: d.schema } : {}),
        value: d.value,
        ...(d.version !== undefined ? { version: d.version } : {}),
      },
    ]),
  );
}

/** An object holding exactly these own keys (a key `__proto__` stays a key). */
function ownRecord(entries: Iterable<readonly [string, unknown]>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  return out;
}

const ownEntries = (record: object | undefined | null) => (record ? Object.entries(record) : []);

/**
 * The variables of spec §4 for one execution:
 * `player.message | lastFormValues | character`, `characters.npcs`, `session.id | turnNumber`,
 * `inputs.<plugin>.<runtime>.<field>`, `world.name | description | tags | lore | schema | entries |
 * dimensions`, `userSettings.*`. Structured values are already model-facing (`modelFacingJson`);
 * `player.character` is the current character of the primary seat (`undefined` when none), the
 * same JSON as `<player-character>`; `characters.npcs` is the profile lines of every other
 * character. `userSettings` holds each declared key: the player's value when set, else the default
 * (values for undeclared keys are ignored).
 */
export function templateVariables(input: TemplateVariablesInput): TemplateVariables {
  const world = input.world ?? null;
  const characters = input.characters ?? world?.characters ?? [];
  const seats = input.seats ?? world?.seats ?? [];
  const schema = world?.characterSchema;
  const current = currentCharacterOf(primarySeat(seats), characters, seats);
  const settingValues = input.settings?.values ?? {};
  const userSettings = ownRecord(
    (input.settings?.declared ?? []).map((s) => [s.key, modelFacingJson(Object.hasOwn(settingValues, s.key) ? settingValues[s.key] : s.default)] as const),
  );
  const inputs = ownRecord(
    ownEntries(input.inputs).map(([pluginId, runtimes]) => [
      pluginId,
      ownRecord(ownEntries(runtimes).map(([runtimeId, value]) => [runtimeId, modelFacingJson(value)])),
    ]),
  );
  return ownRecord([
    [
      'player',
      ownRecord([
        ['message', input.player?.message ?? ''],
        ['lastFormValues', modelFacingJson(input.player?.lastFormValues ?? null)],
        ['character', current ? characterSheet(current, schema) : undefined],
      ]),
    ],
    ['characters', ownRecord([['npcs', characterProfileLines(characters, { locale: input.locale, excludeId: current?.id, seats, schema })]])],
    [
      'session',
      ownRecord([
        ['id', input.session.id],
        ['turnNumber', input.session.turnNumber],
      ]),
    ],
    ['inputs', inputs],
    [
      'world',
      world
        ? ownRecord([
            ['name', world.name],
            ['description', world.description ?? ''],
            ['tags', [...(world.tags ?? [])]],
            ['lore', world.lore ?? ''],
            ['schema', modelFacingJson(world.schema ?? {})],
            ['entries', modelFacingJson(world.entries ?? [])],
            ['dimensions', modelFacingJson(publicDimensions(world.dimensions ?? {}))],
          ])
        : undefined,
    ],
    ['userSettings', userSettings],
  ]);
}
