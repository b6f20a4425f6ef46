import { z } from 'zod';
import { type Locale, LOCALES } from '../text';
import { JSON_POINTER_PATTERN } from './json-pointer';
import { unknownSchemaKeywords } from './schema-keywords';

const ID_MESSAGE = 'lower-case id: letters, digits, dashes';
/** A plugin or runtime id: lower-case letters, digits and dashes, starting with a letter. */
export const ManifestId = z.string().regex(/^[a-z][a-z0-9-]*$/, ID_MESSAGE);
/** An output contract, `<name>@<version>`, e.g. `narrative-engine@2`. */
export const ContractName = z.string().regex(/^[a-z][a-z0-9.-]*@[0-9]+$/, 'a contract: <name>@<version>, e.g. narrative-engine@2');
/** An event topic: no spaces, e.g. `quest.completed`. */
export const EventTopic = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:@/-]*$/, 'an event topic: letters, digits and . _ : @ / - (no spaces)');
/** A JSON schema: any JSON object (the host does not interpret it beyond its top-level shape). */
export const JsonSchema = z.record(z.string(), z.unknown());
export type JsonSchema = z.infer<typeof JsonSchema>;

/** Extension points a plugin's server entry may provide (`api.provideExtension(point, id, …)`). */
export const EXTENSION_POINTS = [
  'prompt.segment@1',
  'prompt.history-transform@1',
  'history.compact@2',
  'session.world-context@1',
  'memory.block-definitions@1',
] as const;
export const ExtensionPoint = z.enum(EXTENSION_POINTS);
export type ExtensionPoint = z.infer<typeof ExtensionPoint>;

/** Reports a duplicate value of `key` in a list, at `<index>.<key>`. */
function uniqueBy<T>(key: keyof T & string, what: string, scope?: (item: T) => string) {
  return (items: T[], ctx: z.RefinementCtx) => {
    const seen = new Set<string>();
    items.forEach((item, index) => {
      const value = `${scope ? `${scope(item)}\u0000` : ''}${String(item[key])}`;
      if (seen.has(value)) ctx.addIssue({ code: 'custom', path: [index, key], message: `duplicate ${what} "${String(item[key])}"` });
      seen.add(value);
    });
  };
}

// ---------------------------------------------------------------------------------------------
// Runtime manifest (an inline `runtime:` in PLUGIN.md or the front matter of runtimes/<id>/RUNTIME.md)

export const ScheduleTrigger = z.union([z.literal('auto'), z.literal('manual'), z.object({ event: EventTopic }).strict()]);
export type ScheduleTrigger = z.infer<typeof ScheduleTrigger>;

/** `<plugin-id>/<runtime-id>`. */
export const FullRuntimeId = z.string().regex(/^[a-z][a-z0-9-]*\/[a-z][a-z0-9-]*$/, 'a runtime: <plugin-id>/<runtime-id>');
/** A JSON pointer (RFC 6901): empty, or `/`-separated tokens with `~0` / `~1` escapes. */
export const JsonPointer = z.string().regex(new RegExp(JSON_POINTER_PATTERN), 'a JSON pointer, e.g. /facts/0');

/**
 * `schedule.when`: the runtime runs only when the output of an earlier-stage runtime of the same
 * execution, at `select`, is truthy; otherwise it is skipped (no model call, no function call) and
 * records an empty output. A function's or a structured runtime's output is read as JSON, any
 * other output as its text. Not truthy: no such output, a pointer that finds nothing, `false`,
 * `null`, `0`, `""`, `[]`, `{}`.
 */
export const RuntimeCondition = z
  .object({
    runtime: FullRuntimeId,
    select: JsonPointer.optional(),
  })
  .strict();
export type RuntimeCondition = z.infer<typeof RuntimeCondition>;

export const RuntimeSchedule = z
  .object({
    /** Stage this runtime runs in; a runtime with no stage runs after all stages. */
    stage: z.string().min(1).optional(),
    /** `auto`: every turn; `{ event }`: when a plugin emits the topic; `manual`: when the player asks. */
    trigger: ScheduleTrigger.default('auto'),
    /** Runs only when an earlier runtime's output says so (see `RuntimeCondition`). */
    when: RuntimeCondition.optional(),
  })
  .strict();

export const RuntimeOutput = z
  .object({
    /** Output contract this runtime fulfils, e.g. `narrative-engine@2`. */
    contract: ContractName.optional(),
    /** JSON schema of a structured output. */
    schema: JsonSchema.optional(),
  })
  .strict();

export const InputBinding = z
  .object({
    from: z.union([z.object({ runtime: FullRuntimeId }).strict(), z.object({ contract: ContractName }).strict()]),
    cardinality: z.enum(['one', 'many']),
    select: JsonPointer.optional(),
  })
  .strict();
export type InputBinding = z.infer<typeof InputBinding>;

/** `io.selfData` entries: a namespace name, or `{ namespace, limit }`; normalized to objects. */
export const SelfDataEntry = z
  .union([
    z.string().min(1),
    z.object({ namespace: z.string().min(1), limit: z.number().int().positive().max(1000, "at most 1000 rows (the store's bound)").optional() }).strict(),
  ])
  .transform((e): { namespace: string; limit?: number } => (typeof e === 'string' ? { namespace: e } : e))
  .refine((e) => e.namespace !== '_hidden' && !e.namespace.startsWith('_hidden.'), {
    message: 'hidden world data (_hidden.*) cannot be injected into a prompt',
  });
export type SelfDataEntry = z.infer<typeof SelfDataEntry>;

/**
 * Who an export reaches (as a segment's audience, spec §2): `self` (the runtimes of the exporting
 * plugin), `story` (story runtimes), `{ contract }` (runtimes whose `output.contract` it is).
 */
export const ExportAudience = z.union([z.literal('self'), z.literal('story'), z.object({ contract: ContractName }).strict()]);
export type ExportAudience = z.infer<typeof ExportAudience>;

/**
 * `io.exports.<name>`: a part of this runtime's structured result (`select`, a JSON pointer; the
 * whole result by default) that the runtimes `to` reaches see in `<runtime-exports>` in their turn
 * context (spec §2), from its latest result (see `resolveRuntimeExports` in libs/engine).
 */
export const RuntimeExportDeclaration = z
  .object({
    select: JsonPointer.optional(),
    to: ExportAudience,
  })
  .strict();
export type RuntimeExportDeclaration = z.infer<typeof RuntimeExportDeclaration>;

/** A binding's or an export's name: a key of `<runtime-inputs>` / `<runtime-exports>`. */
const IoName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_-]*$/, 'a name: letters, digits, _ and -');

export const RuntimeIo = z
  .object({
    inputs: z.record(IoName, InputBinding).default({}),
    selfData: z.array(SelfDataEntry).default([]).superRefine(uniqueBy('namespace', 'selfData namespace')),
    exports: z.record(IoName, RuntimeExportDeclaration).default({}),
  })
  .strict();

export const AgentConfig = z
  .object({
    /** Model slot of this runtime's calls (llm.toml). */
    slot: z.string().min(1).default('story'),
    /** Names of the tools this agent may call. */
    tools: z.array(z.string().min(1)).default([]),
    /** A named tool, or `required` (a declared tool must be called). */
    toolChoice: z.union([z.literal('required'), z.object({ name: z.string().min(1) }).strict()]).optional(),
    /** `false`: the model's off switch, where the request has no explicit reasoning setting (spec §3). */
    reasoning: z.literal(false).optional(),
    /** The run fails unless the agent called a tool. */
    requireToolUse: z.boolean().default(false),
    /** Lists the event catalog (the topics plugins declare) in this agent's prompt. */
    advertiseEvents: z.boolean().default(false),
    history: z
      .object({
        maxTurns: z.number().int().nonnegative().optional(),
        /** Default: summaries merged for the shared view, left out for a windowed runtime. */
        includeSummaries: z.boolean().optional(),
      })
      .strict()
      .default({}),
    loop: z.object({ maxSteps: z.number().int().positive().optional(), timeoutMs: z.number().int().positive().optional() }).strict().default({}),
  })
  .strict();
export type AgentConfig = z.infer<typeof AgentConfig>;

const runtimeFields = {
  id: ManifestId,
  type: z.enum(['agent', 'function']).default('agent'),
  schedule: RuntimeSchedule.default({ trigger: 'auto' }),
  outputKind: z.enum(['story', 'structured', 'none']).default('none'),
  output: RuntimeOutput.default({}),
  io: RuntimeIo.default({ inputs: {}, selfData: [], exports: {} }),
  agent: AgentConfig.optional(),
  finalizer: z.object({ maxSteps: z.number().int().nonnegative() }).strict().optional(),
};

type ParsedRuntime = z.infer<z.ZodObject<typeof runtimeFields>>;

/** A function runtime has no `agent`; an agent runtime gets the agent defaults when it declares none. Only a structured result is exported. */
function resolveAgent<T extends Omit<ParsedRuntime, 'id'>>(r: T, ctx: z.RefinementCtx): Omit<T, 'agent'> & { agent: AgentConfig | null } {
  if (r.outputKind !== 'structured' && Object.keys(r.io.exports).length > 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['io', 'exports'],
      message: `only a runtime with outputKind: structured exports (its result is JSON); this one's is ${r.outputKind}`,
    });
  }
  if (r.type === 'function' && r.agent !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['agent'], message: "a function runtime has no agent settings (it runs the plugin's api.runFunction handler)" });
  }
  if (r.type === 'function' && r.finalizer !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['finalizer'], message: 'a function runtime has no finalizer (it makes no model calls)' });
  }
  return { ...r, agent: r.type === 'agent' ? (r.agent ?? AgentConfig.parse({})) : null };
}

/** A child runtime's front matter (runtimes/<id>/RUNTIME.md). */
export const RuntimeManifest = z.object(runtimeFields).strict().transform(resolveAgent);
/** An inline `runtime:` in PLUGIN.md: its id defaults to the plugin's id. */
export const InlineRuntimeManifest = z
  .object({ ...runtimeFields, id: ManifestId.optional() })
  .strict()
  .transform(resolveAgent);

export type RuntimeManifest = z.infer<typeof RuntimeManifest>;
export type InlineRuntimeManifest = z.infer<typeof InlineRuntimeManifest>;

// ---------------------------------------------------------------------------------------------
// Plugin manifest (PLUGIN.md front matter)

export const SegmentPosition = z.union([z.enum(['system', 'pre-history', 'post-history']), z.object({ depth: z.number().int().nonnegative() }).strict()]);

/**
 * Spec §3 "Fixed instructions": static segments apply to their own plugin, so `contributes.prompt`
 * takes no audience; text for other plugins' runtimes is a `prompt.segment@1` segment.
 */
export const STATIC_AUDIENCE_MESSAGE =
  'static segments always cover their own plugin\'s runtimes and take no audience; for text meant for other plugins\' runtimes, return a segment with an audience from a prompt.segment@1 extension (api.provideExtension, spec §3 "Dynamic content")';

/** A fixed instruction in `contributes.prompt` (spec §3): registered by the host, not interpolated, for this plugin's runtimes only. */
export const StaticPromptSegment = z
  .object({
    id: z.string().min(1),
    content: z.string().min(1),
    position: SegmentPosition.default('system'),
    role: z.enum(['system', 'user', 'assistant']).default('system'),
    volatility: z.enum(['stable', 'session', 'turn']).default('stable'),
    order: z.number().int().default(0),
    /** Rejected with {@link STATIC_AUDIENCE_MESSAGE} (a plain unknown key would not say why). */
    audience: z.never({ error: STATIC_AUDIENCE_MESSAGE }).optional(),
  })
  .strict();

export const ExtensionContribution = z.object({ point: ExtensionPoint, id: z.string().min(1) }).strict();
export type ExtensionContribution = z.infer<typeof ExtensionContribution>;

/** A schema whose every key is a JSON Schema keyword (`unknownSchemaKeywords`), or an issue per stray key. */
function onlySchemaKeywords(schema: Record<string, unknown>, ctx: z.core.$RefinementCtx): void {
  for (const path of unknownSchemaKeywords(schema))
    ctx.addIssue({
      code: 'custom',
      path,
      message: `"${String(path[path.length - 1])}" is not a JSON Schema keyword (in YAML flow style, quote a text with a comma: description: "a, b")`,
    });
}

export const ToolContribution = z
  .object({
    name: z.string().regex(/^[A-Za-z][A-Za-z0-9_-]*$/, 'a tool name: letters, digits, _ and -'),
    description: z.string().min(1),
    parameters: JsonSchema.refine((s) => s.type === 'object', { message: 'tool parameters are a JSON schema with type: object' }).superRefine((schema, ctx) => {
      for (const path of unknownSchemaKeywords(schema))
        ctx.addIssue({
          code: 'custom',
          path,
          message: `"${String(path[path.length - 1])}" is not a JSON Schema keyword (in YAML flow style, quote a text with a comma: description: "a, b")`,
        });
    }),
    /**
     * A successful call completes the runtime (as `runtime-done` does): a bookkeeper whose write tool
     * also says "no change" (`updates: []`) sends one request per turn (spec §2 "Layout for
     * bookkeeping runtimes"). A failed call does not: the model may correct it.
     */
    completesRuntime: z.boolean().default(false),
  })
  .strict();
export type ToolContribution = z.infer<typeof ToolContribution>;

const settingBase = {
  key: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a setting key: letters, digits and _ ({{ userSettings.<key> }})'),
  label: z.string().min(1).optional(),
};
export const SettingContribution = z.discriminatedUnion('type', [
  z.object({ ...settingBase, type: z.literal('string'), default: z.string() }).strict(),
  z.object({ ...settingBase, type: z.literal('number'), default: z.number() }).strict(),
  z.object({ ...settingBase, type: z.literal('boolean'), default: z.boolean() }).strict(),
  z
    .object({ ...settingBase, type: z.literal('enum'), values: z.array(z.string().min(1)).min(1), default: z.string() })
    .strict()
    .superRefine((s, ctx) => {
      if (!s.values.includes(s.default)) ctx.addIssue({ code: 'custom', path: ['default'], message: `default "${s.default}" is not one of values` });
    }),
]);
export type SettingContribution = z.infer<typeof SettingContribution>;

export const EventContribution = z.object({ topic: EventTopic, description: z.string().min(1), payload: JsonSchema.superRefine(onlySchemaKeywords) }).strict();
export type EventContribution = z.infer<typeof EventContribution>;

export const PluginContributes = z
  .object({
    prompt: z.array(StaticPromptSegment).default([]).superRefine(uniqueBy('id', 'static segment id')),
    extensions: z
      .array(ExtensionContribution)
      .default([])
      .superRefine(uniqueBy('id', 'extension id for this point', (e) => e.point)),
    tools: z.array(ToolContribution).default([]).superRefine(uniqueBy('name', 'tool name')),
    settings: z.array(SettingContribution).default([]).superRefine(uniqueBy('key', 'setting key')),
    events: z.array(EventContribution).default([]).superRefine(uniqueBy('topic', 'event topic')),
  })
  .strict();
export type PluginContributes = z.infer<typeof PluginContributes>;

export const PluginManifest = z
  .object({
    id: ManifestId,
    name: z.string().min(1),
    version: z.string().min(1),
    description: z.string().optional(),
    /** Server entry, relative to the plugin folder; default `server/index.ts` when that file exists. */
    entry: z.string().min(1).optional(),
    /** The inline runtime; its body is PLUGIN.md's body. */
    runtime: InlineRuntimeManifest.optional(),
    contributes: PluginContributes.default({ prompt: [], extensions: [], tools: [], settings: [], events: [] }),
    /**
     * Whether a session runs this plugin when neither its world (`plugins` in WORLD.md) nor
     * `POST /v1/sessions` `plugins` names the plugins it runs. Default true.
     */
    enabledByDefault: z.boolean().default(true),
  })
  .strict();

export type PluginManifest = z.infer<typeof PluginManifest>;
export type StaticPromptSegment = z.infer<typeof StaticPromptSegment>;
export { type Locale, LOCALES };

/** A runtime of a loaded plugin: the inline one (PLUGIN.md) or a child (runtimes/<id>/RUNTIME.md). */
export interface LoadedRuntime {
  /** The runtime's own id (events carry it as `runtimeId`). */
  id: string;
  /** `<plugin-id>/<id>`. */
  fullId: string;
  /** Validated front matter; an inline runtime's id is filled in (default: the plugin's id). */
  manifest: RuntimeManifest;
  /** Body per locale ('en' always present; a locale without a variant file reads the English body). */
  bodies: Record<Locale, string>;
  /** The file that declares it (absolute when the plugin was loaded from an absolute root). */
  file: string;
  inline: boolean;
}

/** A loaded plugin: manifest, its runtimes, the localized root body and static segments. */
export interface LoadedPlugin {
  manifest: PluginManifest;
  /** Body text of PLUGIN.md per locale; 'en' is always present. */
  bodies: Record<Locale, string>;
  /** `contributes.prompt` per locale (a locale variant file may give its own content by id). */
  staticSegments: Record<Locale, StaticPromptSegment[]>;
  /** The inline runtime first, then the child runtimes by id. */
  runtimes: LoadedRuntime[];
  /** Absolute path of the server entry, or null when the plugin has none. */
  entry: string | null;
  root: string;
}
