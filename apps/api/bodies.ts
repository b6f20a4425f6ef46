import { z } from 'zod';
import { ApiKeyScope, MAX_EDITED_TEXT_CHARS, MAX_EXECUTION_WAIT_MS, MAX_FORM_VALUES_JSON_CHARS, MessageEditedV1 } from '../../libs/events';
import { canonicalLocaleTag, MAX_LOCALE_TAG_LENGTH } from '../../libs/plugins-sdk';
import { MAX_GENERATION_WAIT_MS, MAX_WORLD_DESCRIPTION_CHARS } from '../../libs/engine';
import { codePointLength, isWellFormedText } from '../../libs/text';
import { MAX_USAGE_RANGE_DAYS, USAGE_GROUPS, utcDay } from '../../libs/usage';
import { safeText } from './safe-text';
import { UUID_PATTERN } from './uuid-param.pipe';
import { jsonDepthOver, MAX_JSON_DEPTH } from './json-limits';

/** Most characters (code points) of one player input. */
export const MAX_INPUT_CHARS = 16_000;

/** Any well-formed BCP 47 tag, stored in its canonical form (`EN-us` → `en-US`). */
const LocaleTag = safeText({ max: MAX_LOCALE_TAG_LENGTH }).transform((tag, ctx) => {
  const canonical = canonicalLocaleTag(tag);
  if (canonical !== null) return canonical;
  ctx.addIssue({ code: 'custom', message: 'must be a well-formed BCP 47 language tag, e.g. en, pt-BR, zh-Hans' });
  return z.NEVER;
});

/** A model slot of `llm.toml` (checked against the engine's slots by the route). */
const SlotName = z.string({ error: 'must be a slot name' }).regex(/^[A-Za-z0-9_-]{1,100}$/, 'must be a slot name of llm.toml (letters, digits, _ and -)');

export const ReasoningPreference = z
  .object({
    enabled: z.boolean({ error: 'must be true or false' }),
    effort: z.enum(['low', 'medium', 'high'], { error: 'must be low, medium or high' }).optional(),
  })
  .strict()
  .meta({
    description:
      'Explicit reasoning for the slot\'s requests: `{ "enabled": true, "effort"?: "low" | "medium" | "high" }` or `{ "enabled": false }` (the model\'s off value, where it has one).',
  });

export const ToolChoicePreference = z.enum(['auto', 'none', 'required'], { error: 'must be auto, none or required' }).meta({
  description: '`auto` or `none`: sent as they are; `required`: a tool must be called (`auto` where the provider refuses a forced choice).',
});

const PREFERENCES_DESCRIPTION =
  "The player's settings per model slot (`llm.toml`'s `[slots.<name>]`): over the slot's and its preset's, both over a runtime's `agent.reasoning` / `agent.toolChoice` (spec §3). A slot the engine does not have is a 400 naming it.";

/** `POST /v1/sessions` `preferences`: what the player sets on each slot's requests. */
export const PreferencesBody = z
  .object({ slots: z.record(SlotName, z.object({ reasoning: ReasoningPreference.optional(), toolChoice: ToolChoicePreference.optional() }).strict()) })
  .strict()
  .meta({ description: PREFERENCES_DESCRIPTION });

/**
 * `PATCH /v1/sessions/:id/preferences`: per slot, a field set to a value changes it, `null` clears
 * it, an absent one stays; a slot set to `null` clears all the player set on it.
 */
export const PreferencesPatchBody = z
  .object({
    slots: z.record(
      SlotName,
      z
        .object({ reasoning: ReasoningPreference.nullable().optional(), toolChoice: ToolChoicePreference.nullable().optional() })
        .strict()
        .nullable()
        .meta({ description: "What changes on the slot: a field's value sets it, `null` clears it, an absent field stays; the slot `null`: clear it all." }),
    ),
  })
  .strict();
export type PreferencesPatchBody = z.infer<typeof PreferencesPatchBody>;

/** The first plugin id a list names twice, or null. */
const firstRepeated = (ids: readonly string[]): string | null => ids.find((id, i) => ids.indexOf(id) !== i) ?? null;

/** A list of plugin ids (at most `max`), each at most once: a repeated id is a 400 naming the list. */
const PluginIds = (max: number) =>
  z
    .array(safeText({ max: 200 }))
    .max(max)
    .superRefine((ids, ctx) => {
      const repeated = firstRepeated(ids);
      if (repeated !== null) ctx.addIssue({ code: 'custom', message: `must name each plugin once (${JSON.stringify(repeated)} is listed twice)` });
    });

export const CreateSessionBody = z
  .object({
    worldId: safeText({ max: 200 }).optional().meta({ description: 'A world of the engine, e.g. `emberback` (none: no world).' }),
    locale: LocaleTag.optional().meta({ description: 'Any well-formed BCP 47 tag, e.g. `en`, `pt-BR`, `zh-Hans` (default `en`), stored in canonical form.' }),
    /** The player's configuration of plugins: plugin id → setting key → value (checked against each plugin's `contributes.settings`). */
    pluginSettings: z
      .record(safeText({ max: 200 }), z.record(safeText({ max: 200 }), z.union([z.string().max(10_000), z.number(), z.boolean()])))
      .optional()
      .meta({ description: "Plugin id → setting key → value, checked against each plugin's `contributes.settings`." }),
    plugins: PluginIds(200).optional().meta({
      description:
        "The plugins the session runs (plugin ids of the engine). Default: the world's `plugins` list, else the plugins enabled by default. A list whose plugins do not hold together (a runtime reading one left out) is a 400 naming `plugins`.",
    }),
    preferences: PreferencesBody.optional(),
    opening: z
      .int({ error: 'must be a whole number from 0 (an index into the world’s openings), or null' })
      .min(0, 'must be a whole number from 0 (an index into the world’s openings), or null')
      .nullable()
      .optional()
      .meta({
        description:
          "Which of the world's `openings` the session opens with (0-based), committed as turn 0's story message (`session.opened@1`). Default: the first when the world has openings, else none; `null`: none. An index the world does not have, or any index for a world without openings (or no world), is a 400 `INVALID_OPENING` naming `opening`.",
      }),
  })
  .strict();

/** Most characters of form values or an activation payload, as JSON text. */
export const MAX_JSON_BODY_CHARS = MAX_FORM_VALUES_JSON_CHARS;

/** Any JSON value (one schema, so the OpenAPI document names it once: `JsonValue`). */
export const JsonValue = z.json({ error: 'must be JSON' });

/**
 * A JSON field within limits, checked before `schema` walks it: at most {@link MAX_JSON_DEPTH} levels of
 * arrays and objects (deeper, `z.json()` and `JSON.stringify` would overflow the stack: a 500) and
 * {@link MAX_JSON_BODY_CHARS} characters as JSON. A 400 naming the field either way.
 */
const boundedJson = <T extends z.ZodType>(schema: T) =>
  // a preprocess step: the OpenAPI document shows `schema` itself
  z.preprocess((value, ctx) => {
    if (jsonDepthOver(value, MAX_JSON_DEPTH)) {
      ctx.addIssue({ code: 'custom', message: `must nest at most ${MAX_JSON_DEPTH} levels of arrays and objects` });
    } else if ((JSON.stringify(value) ?? '').length > MAX_JSON_BODY_CHARS) {
      ctx.addIssue({ code: 'custom', message: `must be at most ${MAX_JSON_BODY_CHARS} characters as JSON` });
    }
    return value;
  }, schema);

const inputText = safeText({ max: MAX_INPUT_CHARS });
/** `true`: the text joins the session's running turn (read at its next model call, committed with it) instead of starting a turn. */
const midTurn = z.boolean({ error: 'must be true or false' }).optional().meta({
  description:
    '`true`: a message the player adds to the running turn: its runtimes read it at their next model call and it is committed with the turn; no turn running is a 409 `NO_RUNNING_TURN`. Absent or `false`: a new turn.',
});

export const SubmitInputBody = z
  .object({
    text: inputText,
    /** The form the player filled in with this input (`{{ player.lastFormValues }}`): a JSON object. */
    formValues: boundedJson(z.record(z.string(), JsonValue, { error: 'must be a JSON object' }))
      .optional()
      .meta({ description: `The form the player filled in with this input: a JSON object of at most ${MAX_JSON_BODY_CHARS} characters as JSON.` }),
    midTurn,
  })
  .strict()
  .refine((body) => !(body.midTurn === true && body.formValues !== undefined), {
    path: ['formValues'],
    message: "a mid-turn message carries no form values (they are read once, with the turn's input)",
  });

/**
 * The usual input, without form values, under SubmitInputBody's rules (what it accepts, this accepts
 * alike): a schema z.compile compiles, where SubmitInputBody's form values (`z.json()`, recursive) keep
 * it from compiling (issue 33: CPU per turn). Tried first by the route's pipe; not in the OpenAPI document.
 */
export const TextInputBody = z.object({ text: inputText, midTurn }).strict();

const RuntimePart = z.string().regex(/^[a-z][a-z0-9-]*$/, 'a lower-case id: letters, digits, dashes');

/** `POST /v1/sessions/:id/activations`: run a `schedule.trigger: manual` runtime with a payload. */
export const ActivationBody = z
  .object({
    pluginId: RuntimePart,
    runtimeId: RuntimePart,
    /** Any JSON value; shown in `<runtime-activation>` (ids, times and sessionId removed). Default `{}`. */
    payload: boundedJson(JsonValue)
      .default({})
      .meta({ description: `Any JSON value of at most ${MAX_JSON_BODY_CHARS} characters as JSON (default \`{}\`).` }),
  })
  .strict();
export type ActivationBody = z.infer<typeof ActivationBody>;

/** `POST /v1/executions/:id/resume`: the answer to what the suspended runtime waits for; its tool call's result. */
export const ResumeBody = z
  .object({
    payload: boundedJson(JsonValue).meta({
      description: `Any JSON value of at most ${MAX_JSON_BODY_CHARS} characters as JSON: the suspended tool call's result (what the model reads).`,
    }),
  })
  .strict();
export type ResumeBody = z.infer<typeof ResumeBody>;

/** `POST /v1/executions/:id/cancel`: stop the execution; with `keepPartial`, the story text streamed so far is kept as the turn's. */
export const CancelBody = z
  .object({
    keepPartial: z.boolean({ error: 'must be true or false' }).optional().meta({
      description:
        'Keep the story text streamed so far as the turn’s story text (the turn is committed with the player’s input and that text). Default false: the partial text is dropped and no turn is committed.',
    }),
  })
  .strict();
export type CancelBody = z.infer<typeof CancelBody>;

/** `POST /v1/sessions/:id/turns/:turnId/select`: the alternative (its execution id) to put in the history. */
export const SelectAlternativeBody = z
  .object({
    alternativeId: z
      .string({ error: 'must be a UUID (an alternative id, as GET …/alternatives lists them)' })
      .regex(UUID_PATTERN, 'must be a UUID (an alternative id, as GET …/alternatives lists them)')
      .transform((id) => id.toLowerCase())
      .meta({ description: 'The alternative to select: its id (the execution id of its run) as `GET …/alternatives` lists it.' }),
  })
  .strict();
export type SelectAlternativeBody = z.infer<typeof SelectAlternativeBody>;
/** `POST /v1/sessions/:id/branch`: the turn of the session's history the branch keeps last. */
export const BranchSessionBody = z
  .object({
    atTurnId: z
      .string({ error: 'must be a UUID (a turn id of the session’s history, as GET …/messages lists them)' })
      .regex(UUID_PATTERN, 'must be a UUID (a turn id of the session’s history, as GET …/messages lists them)')
      .transform((id) => id.toLowerCase())
      .meta({
        description:
          'The last turn the branch keeps: the `turnId` of a message of the session’s history (`GET …/messages`), its opening’s included (the branch then starts after the opening).',
      }),
  })
  .strict();
export type BranchSessionBody = z.infer<typeof BranchSessionBody>;

/** A route that takes no body: nothing, or `{}`. */
export const EmptyBody = z.object({}).strict();
export type EmptyBody = z.infer<typeof EmptyBody>;

/** `PATCH /v1/sessions/:id/messages/:messageId`: the message's new text (`message.edited@1`'s rules), and whether to re-run the turn. */
export const EditMessageBody = z
  .object({
    text: MessageEditedV1.shape.text.meta({
      description: `The message's new text: not empty, at most ${MAX_EDITED_TEXT_CHARS} characters (code points), well-formed Unicode without U+0000. Kept as sent.`,
    }),
    regenerate: z.boolean({ error: 'must be true or false' }).optional().meta({
      description:
        '`true`: after the edit, re-run the turn with the edited input (as `POST …/turns/:turnId/retry` does). Only for the player input of the latest turn: a turn that is not the latest is a 409 `NOT_LATEST_TURN`, any other message a 400 naming `regenerate`.',
    }),
  })
  .strict();
export type EditMessageBody = z.infer<typeof EditMessageBody>;

const waitMsMessage = `must be an integer from 0 to ${MAX_EXECUTION_WAIT_MS} (milliseconds)`;

/** `GET /v1/executions/:id?waitMs=`: how long to wait for the execution to end (long-poll); other parameters are ignored. */
export const ExecutionQuery = z.object({
  waitMs: z
    .string({ error: waitMsMessage })
    .regex(/^\d{1,9}$/, waitMsMessage)
    .transform(Number)
    .refine((ms) => ms <= MAX_EXECUTION_WAIT_MS, waitMsMessage)
    .optional()
    .meta({ description: `Milliseconds to wait for the execution to end, 0 to ${MAX_EXECUTION_WAIT_MS} (default 0: answer at once).` }),
});

export type CreateSessionBody = z.infer<typeof CreateSessionBody>;
export type SubmitInputBody = z.infer<typeof SubmitInputBody>;
export type ExecutionQuery = z.infer<typeof ExecutionQuery>;

const limitMessage = 'must be an integer from 1 to 200';
/** `GET /v1/sessions?limit=` (default 50). */
export const SessionListQuery = z.object({
  limit: z
    .string({ error: limitMessage })
    .regex(/^\d{1,3}$/, limitMessage)
    .transform(Number)
    .refine((n) => n >= 1 && n <= 200, limitMessage)
    .optional()
    .meta({ description: 'How many sessions, newest first: 1 to 200 (default 50).' }),
});
export type SessionListQuery = z.infer<typeof SessionListQuery>;

/** `GET /v1/worlds`: a page of the worlds the tenant can play. */
export const WorldListQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(20).meta({ description: 'Worlds per page (1–100, default 20).' }),
    cursor: z.string().max(400).optional().meta({ description: 'The `nextCursor` of the page before.' }),
    archived: z
      .enum(['true', 'false'])
      .transform((v) => v === 'true')
      .optional()
      .meta({ description: '`true`: archived worlds too.' }),
  })
  .strict();
export type WorldListQuery = z.infer<typeof WorldListQuery>;

/** `GET /v1/worlds/:id`: the current revision, or `revision`. */
export const WorldQuery = z
  .object({ revision: z.coerce.number().int().min(1).max(1_000_000_000).optional().meta({ description: 'An earlier revision (default: the current one).' }) })
  .strict();
export type WorldQuery = z.infer<typeof WorldQuery>;

/** `POST /v1/sessions/:id/world-revision`: move the session to a newer revision of its world. */
export const WorldRevisionBody = z
  .object({
    revision: z.number().int().min(2).optional().meta({ description: 'The revision to move to (newer than the session’s); default: the world’s current one.' }),
  })
  .strict();
export type WorldRevisionBody = z.infer<typeof WorldRevisionBody>;

/** `GET /v1/worlds/:id/export`: which file. */
export const WorldExportQuery = z
  .object({
    format: z
      .enum(['folder', 'card-v2', 'card-v3'])
      .default('folder')
      .meta({ description: '`folder`: the WORLD.md folder as a zip (default); `card-v2` / `card-v3`: a character card.' }),
    container: z.enum(['json', 'png']).optional().meta({ description: 'A card as JSON (default) or as a PNG carrying it.' }),
    revision: z.coerce.number().int().min(1).max(1_000_000_000).optional().meta({ description: 'An earlier revision (default: the current one).' }),
  })
  .strict();
export type WorldExportQuery = z.infer<typeof WorldExportQuery>;

/** `POST /v1/worlds/generate`: a world made from a description by a model (a worker runs it). */
export const GenerateWorldBody = z
  .object({
    description: z
      .string({ error: 'must be a string' })
      .refine((s) => isWellFormedText(s), { message: 'must be well-formed Unicode (found a lone surrogate)', abort: true })
      .refine((s) => !s.includes('\u0000'), { message: 'must not contain NUL (U+0000)', abort: true })
      .refine((s) => codePointLength(s) <= MAX_WORLD_DESCRIPTION_CHARS, `must be at most ${MAX_WORLD_DESCRIPTION_CHARS} characters`)
      .meta({
        maxLength: MAX_WORLD_DESCRIPTION_CHARS,
        description: `The author's idea for the world, as they write it: data for the model, never instructions to it. May be empty (the model invents a world). Well-formed Unicode without NUL, at most ${MAX_WORLD_DESCRIPTION_CHARS} characters (code points).`,
      }),
    locale: LocaleTag.meta({ description: 'The language of the world’s text, a BCP 47 tag (`en`, `fr`, `zh-Hans`); the template’s language follows it.' }),
    slot: SlotName.optional().meta({ description: 'The `llm.toml` slot whose model writes the world (default `story`).' }),
    plugins: PluginIds(64).optional().meta({ description: 'The plugins the world’s sessions run (its `plugins`); default: the plugins enabled by default.' }),
  })
  .strict();
export type GenerateWorldBody = z.infer<typeof GenerateWorldBody>;

const generationWaitMessage = `must be an integer from 0 to ${MAX_GENERATION_WAIT_MS} (milliseconds)`;

/** `GET /v1/worlds/generate/:jobId?waitMs=`: how long to wait for the job to end (long-poll). */
export const WorldGenerationQuery = z.object({
  waitMs: z
    .string({ error: generationWaitMessage })
    .regex(/^\d{1,9}$/, generationWaitMessage)
    .transform(Number)
    .refine((ms) => ms <= MAX_GENERATION_WAIT_MS, generationWaitMessage)
    .optional()
    .meta({ description: `Milliseconds to wait for the job to end (\`done\` or \`failed\`), 0 to ${MAX_GENERATION_WAIT_MS} (default 0: answer at once).` }),
});
export type WorldGenerationQuery = z.infer<typeof WorldGenerationQuery>;

/** `POST /v1/keys` (and the operator's `POST /admin/tenants/:id/keys`): a new API key's name and scopes. */
export const CreateKeyBody = z
  .object({
    name: safeText({ max: 100 }).meta({ description: 'What the key is for (shown in the list; not secret).' }),
    scopes: z
      .array(ApiKeyScope, { error: 'must be a list of scopes: play, read, admin' })
      .min(1, 'must name at least one scope: play, read, admin')
      .superRefine((scopes, ctx) => {
        const repeated = scopes.find((s, i) => scopes.indexOf(s) !== i);
        if (repeated) ctx.addIssue({ code: 'custom', message: `must name each scope once (${repeated} is listed twice)` });
      })
      .meta({
        description:
          '`play`: sessions and worlds (create, inputs, cancel, edit, revert, branch…); `read`: every read (GETs, the inspector’s data, event streams, usage); `admin`: the tenant’s settings and keys.',
      }),
  })
  .strict();
export type CreateKeyBody = z.infer<typeof CreateKeyBody>;

/** `POST /admin/tenants`: a new tenant's name. */
export const CreateTenantBody = z.object({ name: safeText({ max: 200 }) }).strict();
export type CreateTenantBody = z.infer<typeof CreateTenantBody>;
const instantMessage = 'must be a date (YYYY-MM-DD) or an ISO 8601 timestamp with a time zone (2026-12-05T10:00:00Z)';
const IsoDay = z.iso.date();
const IsoTimestamp = z.iso.datetime({ offset: true });

/** A query's time: a UTC day (`YYYY-MM-DD`, its start) or a timestamp with a time zone. */
const UsageInstant = z.string({ error: `required: ${instantMessage}` }).transform((s, ctx) => {
  if (/^\d{4}-\d{2}-\d{2}$/.test(s) && IsoDay.safeParse(s).success) return new Date(`${s}T00:00:00.000Z`);
  if (IsoTimestamp.safeParse(s).success) {
    const at = new Date(s);
    if (!Number.isNaN(at.getTime())) return at;
  }
  ctx.addIssue({ code: 'custom', message: instantMessage });
  return z.NEVER;
});

const DAY_MS = 86_400_000;
/** UTC days from `from`'s through `to`'s, both included. */
const daysCovered = (from: Date, to: Date) => Math.round((Date.parse(utcDay(to)) - Date.parse(utcDay(from))) / DAY_MS) + 1;

const usageFields = {
  from: UsageInstant.meta({ description: 'The first UTC day counted: a date (`2026-12-01`) or a timestamp (its UTC day; usage is metered per day).' }),
  to: UsageInstant.meta({
    description: `The last UTC day counted (included): a date or a timestamp (its UTC day). Not before \`from\`; at most ${MAX_USAGE_RANGE_DAYS} days from \`from\`'s day through its own.`,
  }),
};

/** from ≤ to, and at most `MAX_USAGE_RANGE_DAYS` days: each named on `to`. */
const checkUsageRange = (q: { from: Date; to: Date }, ctx: z.RefinementCtx) => {
  if (!(q.from instanceof Date) || !(q.to instanceof Date)) return; // named already
  const days = daysCovered(q.from, q.to);
  if (days < 1) ctx.addIssue({ code: 'custom', path: ['to'], message: 'must not be before from (its UTC day)' });
  else if (days > MAX_USAGE_RANGE_DAYS)
    ctx.addIssue({ code: 'custom', path: ['to'], message: `must be at most ${MAX_USAGE_RANGE_DAYS} days from from (both days included)` });
};

/** `GET /v1/usage`: the tenant's own usage over a range of UTC days, grouped. */
export const UsageQuery = z
  .object({
    ...usageFields,
    groupBy: z
      .enum(['day', 'session', 'model', 'runtime'], { error: 'must be one of day, session, model, runtime' })
      .default('day')
      .meta({ description: 'What each row sums over: `day` (UTC), `session`, `model` or `runtime` (default `day`).' }),
  })
  .strict()
  .superRefine(checkUsageRange);
export type UsageQuery = z.infer<typeof UsageQuery>;

/** `GET /admin/usage`: the operator's report: every tenant's, or one's (`tenantId`); may group by `tenant`. */
export const AdminUsageQuery = z
  .object({
    ...usageFields,
    groupBy: z
      .enum(USAGE_GROUPS, { error: `must be one of ${USAGE_GROUPS.join(', ')}` })
      .default('day')
      .meta({ description: 'What each row sums over: `day`, `session`, `model`, `runtime` or `tenant` (default `day`).' }),
    tenantId: z.string({ error: 'must be a tenant id' }).min(1, 'must be a tenant id').max(200, 'must be a tenant id').optional(),
  })
  .strict()
  .superRefine(checkUsageRange);
export type AdminUsageQuery = z.infer<typeof AdminUsageQuery>;
