import { z } from 'zod';
import { canonicalLocaleTag, codePointLength, isWellFormedText, recordableText } from '../text';

/** Versioned event names with the zod schema of each payload (ARCHITECTURE.md "Event log"). */
const id = z.string().min(1);

export const SessionCreatedV1 = z.object({
  sessionId: id,
  worldId: z.string().nullable(),
  /**
   * The revision of a tenant's world the session runs (`world.created@1` / `world.revised@1`);
   * absent for a deployment's built-in file world (and in early logs). A later edit of the world
   * changes new sessions only; `session.world-revised@1` moves this session on purpose.
   */
  worldRevision: z.int().min(1).optional(),
  /** The session's own BCP 47 tag, canonical (`pt-BR`, `zh-CN`); early events hold `en` or `zh-Hans`. */
  locale: z
    .string()
    .min(1)
    .max(255)
    .refine((tag) => canonicalLocaleTag(tag) !== null, 'must be a well-formed BCP 47 language tag'),
  /** The player's configuration of plugins: plugin id → setting key → value (`{{ userSettings.* }}`, `ctx.settings`); absent in early logs. */
  pluginSettings: z.record(z.string(), z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]))).optional(),
  /** The plugins the session runs (ids, sorted); absent: the plugins enabled by default (and in early logs). */
  plugins: z.array(z.string().min(1)).optional(),
  /**
   * How the [LANGUAGE] block names the session's language, in its instruction language
   * (`Brazilian Portuguese (pt-BR)`, `简体中文`; `languageNameOf`), fixed at creation so the block's
   * bytes never change with the ICU data. Absent in logs recorded before: those sessions' block says
   * English, or Simplified Chinese in a Chinese session, as their recorded requests do.
   */
  languageName: z.string().min(1).max(1024).optional(),
});

/** Story text a player or a world wrote: not blank, well-formed Unicode, no U+0000, at most `max` code points. */
const storyText = (max: number) =>
  z
    .string()
    .refine((s) => s.trim() !== '', 'must not be empty')
    .refine(isWellFormedText, 'must be well-formed Unicode (no lone surrogate)')
    .refine((s) => !s.includes('\u0000'), 'must not contain U+0000')
    .refine((s) => codePointLength(s) <= max, `must be at most ${max} characters`);

/** Most code points of a session's opening as rendered (`session.opened@1` `text`). */
export const MAX_OPENING_TEXT_CHARS = 64_000;

/**
 * The session opens with one of its world's openings (`POST /v1/sessions` `opening`), appended in
 * the same append as `session.created@1` (a session never exists without the opening it was created
 * with): turn 0's story message, committed. `text` is the opening as rendered once at creation
 * with the template variables of that moment (spec §4: `world.*`, `player.character`,
 * `characters.npcs`, `session.id`, `session.turnNumber` = 0), so replay and audit never render it
 * again. The `turn_messages` projection makes it the session's first row (`openingMessage`): role
 * `assistant`, a story message with no plugin; turn 0 is not counted among the committed turns.
 */
export const SessionOpenedV1 = z.object({
  turnId: id,
  messageId: id,
  /** Which of the world's `openings` (0-based). */
  openingIndex: z.number().int().nonnegative(),
  text: storyText(MAX_OPENING_TEXT_CHARS),
});

/** Most characters of a player input's form values, as JSON text. */
export const MAX_FORM_VALUES_JSON_CHARS = 16_000;

export const PlayerInputSubmittedV1 = z.object({
  executionId: id,
  turnId: id,
  messageId: id,
  text: z.string(),
  /**
   * The form the player filled in with this input (spec §4 `player.lastFormValues`): read from the
   * log once per execution (`ExecutionJournal.lastFormValues`), the same for each of its runtimes.
   */
  formValues: z.record(z.string(), z.json()).optional(),
  /**
   * Set on a regenerated turn (`POST …/turns/:turnId/retry`): the turn it re-runs from the same
   * source (the history before that turn, the same player input). The history this execution
   * reads leaves that turn out; its commit supersedes it (`turn.superseded@1`).
   */
  retryFromTurnId: id.optional(),
  /** With `retryFromTurnId`: the first turn of the alternatives this one belongs to (their group's id). */
  alternativeOf: id.optional(),
  /**
   * With `retryFromTurnId`: the regeneration reads every read model as it stood before the turn it
   * re-runs (plugin data too, not only the history), and the turn's alternatives each keep their own
   * plugin data (only the selected one's counts: `storyEvents`). Set on every regeneration since
   * issue 30; absent in logs before it, whose regenerations read the plugin data with the re-run
   * turn's writes in (their audits derive it so).
   */
  isolated: z.literal(true).optional(),
});

/**
 * A message the player added to a running turn (`POST /v1/sessions/:id/inputs` with `midTurn: true`):
 * part of that execution's current turn (spec §1), read by its runtimes' next model calls, in log
 * order, and committed with the turn.
 */
export const PlayerInputMidTurnV1 = z.object({
  executionId: id,
  turnId: id,
  messageId: id,
  text: z.string(),
});

/**
 * A runtime started by a `manual` request of the player or by an emitted event its
 * `schedule.trigger` names: its own execution, run by the same turn/runtime jobs as a player input
 * but with that one runtime, and `<runtime-activation>` (kind, topic, payload) in its turn context.
 */
export const RuntimeActivatedV1 = z.object({
  executionId: id,
  turnId: id,
  /** Stands for the execution's input (it has no player text). */
  messageId: id,
  kind: z.enum(['manual', 'event']),
  pluginId: id,
  runtimeId: id,
  /** The emitted event's topic (`kind: event`). */
  topic: z.string().min(1).optional(),
  payload: z.json(),
});

export const ExecutionStartedV1 = z.object({
  executionId: id,
  turnId: id,
  attempt: z.number().int().positive(),
  workerId: z.string(),
  /** The plugin registry generation the execution runs with (every attempt records the first one's); absent in early logs. */
  generation: z.string().min(1).optional(),
  /**
   * The turn job that claimed it, as its queue names it (BullMQ: the job's enqueue time, the same for
   * every run of that job, never for a job added anew): a later run of that job finds its claim here
   * and goes on with it (issue 33: no write of the claim to the job). Absent: an early log, a queue
   * that keeps the claim with the job.
   */
  claimant: z.string().min(1).optional(),
});

export const OutputKind = z.enum(['story', 'structured', 'none']);

export const RuntimeOutputProducedV1 = z.object({
  executionId: id,
  turnId: id,
  attempt: z.number().int().positive(),
  stage: z.string().nullable(),
  pluginId: id,
  runtimeId: id,
  outputKind: OutputKind,
  messageId: id,
  text: z.string(),
});

export const LlmUsage = z.object({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  cachedInputTokens: z.number().int().nonnegative(),
});

/** One call of a tool group as the budget's ledger identifies it (by content, not position). */
const LedgerCall = z.object({ id: z.string(), name: z.string(), arguments: z.string(), result: z.string() });
const count = z.number().int().nonnegative();

/** What the token budget did to a call (spec §5): the ledger entries it added to its run's ledger, and its estimate. */
export const LlmCallBudget = z.object({
  mode: z.enum(['normal', 'finalizer', 'emergency']),
  /** Entries this request added to the run's ledger (the next steps replay them); the ledger only grows. */
  added: z.array(z.object({ kind: z.enum(['elide', 'collapse']), calls: z.array(LedgerCall) })),
  stats: z.object({
    inputLimit: count,
    before: z.number().nonnegative(),
    after: z.number().nonnegative(),
    elided: count,
    collapsed: count,
    pruned: count,
    truncated: count,
  }),
});

export const LlmCallingV1 = z.object({
  executionId: id,
  turnId: id,
  attempt: z.number().int().positive(),
  callId: id,
  pluginId: id,
  runtimeId: id,
  provider: z.string(),
  model: z.string(),
  /** Which step of the runtime's agent loop (1 = its first call); absent in logs before the loop: 1. */
  step: z.number().int().positive().optional(),
  /** The exact request body sent to the provider, as the JSON text on the wire (jsonb would reorder keys). */
  body: z.string().min(2),
  /**
   * `non-streaming`: the step sent once more without streaming after its streamed call (the
   * `llm.calling` before it, same step) failed in a way this one may not (the provider refused
   * streaming, or the stream broke before any text). Absent: the request as the runtime sends it.
   */
  fallback: z.literal('non-streaming').optional(),
  /** Where each part of the request came from, for prefix reports: system sections and message sections. */
  layout: z
    .object({
      systemSections: z.array(z.object({ name: z.string(), length: z.number().int().nonnegative() })),
      messageSections: z.array(z.string()),
    })
    .optional(),
  /** The token budget of the call (absent in logs before the budget: the call had none, and a rebuild applies none). */
  budget: LlmCallBudget.optional(),
  /** The call of a regenerated turn: the turn it replaces (the prefix report compares it with the turn before that one). */
  retryFromTurnId: id.optional(),
  /**
   * How many of the execution's mid-turn messages (`player-input.mid-turn@1`, in log order) the
   * request includes: the first n, those the step's journal held when it was built (a rebuild uses
   * exactly those). Absent: none.
   */
  midTurnMessages: z.number().int().positive().optional(),
});

export const LlmRespondedV1 = z.object({
  executionId: id,
  turnId: id,
  callId: id,
  pluginId: id,
  runtimeId: id,
  finishReason: z.string().nullable(),
  usage: LlmUsage,
  /** The step of the call it answers (absent in logs before the agent loop: 1). */
  step: z.number().int().positive().optional(),
  /**
   * The reply as JSON text (jsonb would reorder keys): `{ text, toolCalls, ...carried }` where the
   * carried fields (thinking, provider continuations) go back on the assistant message of the next
   * step. What a resumed loop and a rebuild read instead of calling the model again.
   */
  reply: z.string().optional(),
});

const ToolCallRef = z.object({
  executionId: id,
  turnId: id,
  attempt: z.number().int().positive(),
  pluginId: id,
  runtimeId: id,
  /** The step whose reply made the call. */
  step: z.number().int().positive(),
  /** The provider's id of the call (what the tool result answers). */
  toolCallId: id,
  name: z.string().min(1),
});

/** A tool call of an agent step is about to run (its outcome follows in `tool.completed@1`). */
export const ToolCalledV1 = ToolCallRef.extend({
  /** The call's arguments as JSON text (jsonb would reorder keys). */
  arguments: z.string(),
});

/**
 * The outcome of one tool call: what the model gets back as the tool result. Appended with the
 * call's effects (plugin-data writes, the activations of emitted events): a resumed loop reuses it
 * and never executes the call again.
 */
export const ToolCompletedV1 = ToolCallRef.extend({
  content: z.string(),
  ok: z.boolean(),
  errorCode: z.string().optional(),
  /** `runtime-done` accepted: the runtime completes. */
  done: z.boolean().optional(),
  /** Topics the call emitted (one emission per topic per turn). */
  emittedTopics: z.array(z.string()).optional(),
});

/** Kinds of media a plugin may generate (`ctx.assets.generate`). */
export const AssetModality = z.enum(['image', 'audio', 'video']);
/** The most bytes one generated asset may have. */
export const MAX_ASSET_BYTES = 16 * 1024 * 1024;
/** The most characters of each of `meta.caption` and `meta.prompt` (the description keeps at most 600 of them). */
export const MAX_ASSET_META_CHARS = 4_000;
const noNul = (s: string) => !s.includes('\u0000');

/**
 * A diagnostic text (an error message, a plugin's failure detail) as an event can hold it: each
 * U+0000 and each lone surrogate, which PostgreSQL jsonb refuses, becomes U+FFFD (a plugin may
 * throw either). For text the engine reports, never for recorded content (that is refused
 * instead, so nothing recorded is changed).
 */
export const diagnosticText = (text: string): string => recordableText(text);

/**
 * A generated asset as the log and the history reference it: the bytes live in the MediaStore
 * under `mediaId` (tenant- and session-scoped); `byteLength` and `sha256` let every reader — the
 * worker before a model call, the audit rebuilding it — check it read the bytes that were submitted.
 */
export const MediaReference = z.object({
  mediaId: z.uuid(),
  modality: AssetModality,
  mimeType: z.string().regex(/^[a-z]+\/[a-z0-9][a-z0-9.+-]{0,126}$/),
  byteLength: z.number().int().nonnegative().max(MAX_ASSET_BYTES),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  /** An image's content as its description states it (folded, at most 600 characters); absent: none known. */
  content: z
    .string()
    .max(4 * 600)
    .optional(),
});

export const AssetMeta = z
  .object({
    caption: z.string().max(MAX_ASSET_META_CHARS).refine(noNul, 'must not contain U+0000').optional(),
    prompt: z.string().max(MAX_ASSET_META_CHARS).refine(noNul, 'must not contain U+0000').optional(),
  })
  .strict();

/**
 * A plugin tool or function runtime submitted an asset (`ctx.assets.generate`), appended with the
 * tool's outcome or the function's output (a failed run submits nothing). Its bytes were stored in
 * the MediaStore before; this event is the reference replay and the audit read — never the bytes.
 * The turn's commit writes, for each, the message the player sees (`messageId`, a row with the
 * media and no text) and, for an image, its description row (`descriptionMessageId`, `description`).
 */
export const AssetGeneratedV1 = z.object({
  executionId: id,
  turnId: id,
  attempt: z.number().int().positive(),
  /** The runtime the asset was submitted in. */
  pluginId: id,
  runtimeId: id,
  /** The plugin whose tool (or function) submitted it. */
  sourcePluginId: id,
  /** A tool's call: the step and the provider's id of the call; absent for a function runtime. */
  step: z.number().int().positive().optional(),
  toolCallId: id.optional(),
  media: MediaReference,
  meta: AssetMeta,
  messageId: id,
  /** Images: the description row's id and text (spec §1), in the session's prompt language. */
  descriptionMessageId: id.optional(),
  description: z.string().optional(),
});

export const CommittedMessage = z.object({
  messageId: id,
  role: z.enum(['user', 'assistant', 'system']),
  sourceType: z.enum(['player', 'runtime', 'system']),
  pluginId: z.string().nullable(),
  runtimeId: z.string().nullable(),
  outputKind: OutputKind.nullable(),
  text: z.string(),
  /** The message the player sees of a generated asset (its text is empty: no model's history shows it). */
  media: MediaReference.optional(),
});

/**
 * The committed message a session's opening is (`session.opened@1`): turn 0's story message, the
 * shape of a story runtime's message without a plugin (`pluginId` and `runtimeId` null). What the
 * `turn_messages` projection writes and what a rebuild's history fold holds, so both read the same.
 */
export function openingMessage(data: z.infer<typeof SessionOpenedV1>): z.infer<typeof CommittedMessage> {
  return { messageId: data.messageId, role: 'assistant', sourceType: 'runtime', pluginId: null, runtimeId: null, outputKind: 'story', text: data.text };
}

export const TurnCommittedV1 = z.object({
  executionId: id,
  turnId: id,
  attempt: z.number().int().positive(),
  /** The player's input first; an activation (`runtime.activated@1`) has no input row, and may commit no message at all. */
  messages: z.array(CommittedMessage),
});

export const ExecutionFailedV1 = z.object({
  executionId: id,
  turnId: id,
  attempt: z.number().int().nonnegative(),
  error: z.object({ code: z.string(), message: z.string() }),
  /**
   * The failed turn's own events no longer count (`storyEvents`): plugin data its bookkeepers wrote
   * for an input that never committed leaves, so a retry of the input does not count it twice. Set
   * on every failure since issue 30; absent in logs before it, whose failed turns' plugin data still
   * counts (their audits derive what was sent).
   */
  discarded: z.literal(true).optional(),
});

/** One summary segment of a compaction (spec §1 "History compaction", output of history.compact@2). */
export const CompactionSummary = z.object({
  summaryId: id,
  /** New messages this segment covers (a continuous uncompacted prefix), or none when it merges. */
  messageIds: z.array(id),
  /** Old summaries this segment merges (continuous from the oldest); a merge keeps the oldest id. */
  replacesSummaryIds: z.array(id),
  content: z.string().min(1),
  /** The summary was shortened on purpose to fit the budget. */
  truncated: z.boolean().optional(),
  /** The sections the summary keeps (history.compact@2's output; absent in events written before it). */
  focusSections: z.array(z.string()).optional(),
});

/**
 * Summaries and message markers saved together: one event, applied in one transaction. Applying
 * it refuses (the append fails, nothing changes) new messages that are not the session's stored
 * uncompacted prefix in order, and merges of summaries that are not the oldest saved ones.
 */
export const HistoryCompactedV1 = z.object({
  compactionId: id,
  summaries: z.array(CompactionSummary).min(1),
});

/** Plugin data (spec §4 "io.selfData"): a namespace and a key, each a line of text without control characters. */
export const PLUGIN_DATA_NAMESPACE_MAX = 128;
export const PLUGIN_DATA_KEY_MAX = 512;
const noControlCharacters = (s: string) => !/\p{Cc}/u.test(s);
const PluginDataNamespace = z.string().min(1).max(PLUGIN_DATA_NAMESPACE_MAX).refine(noControlCharacters, 'must not contain control characters');
const PluginDataKey = z.string().min(1).max(PLUGIN_DATA_KEY_MAX).refine(noControlCharacters, 'must not contain control characters');
/** PostgreSQL jsonb cannot hold U+0000 in a string (key or value). */
const hasNul = (v: unknown): boolean =>
  typeof v === 'string'
    ? v.includes('\u0000')
    : Array.isArray(v)
      ? v.some(hasNul)
      : v !== null && typeof v === 'object' && Object.entries(v).some(([k, x]) => k.includes('\u0000') || hasNul(x));
const PluginDataValue = z.json().refine((v) => !hasNul(v), 'strings must not contain U+0000');

/** Which row of which plugin an execution's attempt changed. */
const PluginDataRowRef = z.object({
  executionId: id,
  turnId: id,
  attempt: z.number().int().positive(),
  pluginId: id,
  namespace: PluginDataNamespace,
  key: PluginDataKey,
});

/** A plugin's row written (created, or its value replaced) by a function runtime or a tool. */
export const PluginDataWrittenV1 = PluginDataRowRef.extend({ value: PluginDataValue });

/** A plugin's row deleted (a delete of a key that is not there changes nothing). */
export const PluginDataDeletedV1 = PluginDataRowRef;

/**
 * A plugin handler's or hook's result, recorded the first time an execution needed it (before the
 * `llm.calling` that used it): later runtimes and retried attempts reuse it, and the audit and
 * replay rebuild requests from it without running any handler.
 */
export const ExtensionResolvedV1 = z.object({
  executionId: id,
  turnId: id,
  attempt: z.number().int().positive(),
  /** The extension point (`prompt.segment@1` …) or hook (`PostContextAssembly`, `PreLLMCall`). */
  point: id,
  pluginId: id,
  /** The provider's id; for a hook, `<hook>#<n>` (its n-th hook of that name). */
  extensionId: id,
  /** sha256 of the input's canonical JSON: the same input within an execution reuses this result. */
  inputHash: z.string().regex(/^[0-9a-f]{64}$/),
  /** The validated result as JSON text (jsonb would reorder keys and refuses U+0000). */
  result: z.string(),
});

/** A `history.compact@2` provider's request of the summary model, as the provider made it. */
export const SummaryRequest = z.object({ system: z.string(), prompt: z.string(), maxOutputTokens: z.number().int().positive() }).strict();

/**
 * The compaction barrier's call of the summary model (the `fast` slot), recorded before it is sent:
 * the provider's request as it made it (a rebuild re-derives the body from it, the plugin is never
 * run again) and the exact wire body. A retried job reuses the reply recorded for the same request.
 */
export const CompactionSummaryRequestedV1 = z.object({
  executionId: id,
  turnId: id,
  attempt: z.number().int().positive(),
  requestId: id,
  /** The `history.compact@2` provider's plugin. */
  pluginId: id,
  /** sha256 of the request's canonical JSON, with the occurrence of that request within the barrier. */
  requestKey: id,
  request: SummaryRequest,
  slot: id,
  provider: z.string(),
  model: z.string(),
  /** The exact request body sent to the provider, as the JSON text on the wire. */
  body: z.string().min(2),
});

/** The summary model's reply to a recorded request (`finishReason: 'length'`: cut, discarded). */
export const CompactionSummaryRespondedV1 = z.object({
  executionId: id,
  turnId: id,
  requestId: id,
  finishReason: z.enum(['stop', 'length', 'other']),
  /** The provider's own finish reason. */
  providerFinishReason: z.string().nullable(),
  text: z.string(),
  usage: LlmUsage,
});

/**
 * The turn's compaction barrier ran because the request of its first shared-history agent reached
 * the threshold (spec §1 step 5), and how it ended: `compacted` (with `history.compacted@1` in the
 * same append), `nothing` (the provider chose nothing), `rejected` (validation refused the result),
 * `skipped` (the stored prefix no longer matched), `failed` (the provider failed). Every ending lets
 * the turn go on; the barrier runs once per execution.
 */
export const CompactionBarrierPassedV1 = z.object({
  executionId: id,
  turnId: id,
  attempt: z.number().int().positive(),
  /** The agent whose request was estimated. */
  pluginId: id,
  runtimeId: id,
  estimatedTokens: z.number().int().nonnegative(),
  triggerWindow: z.number().int().nonnegative(),
  thresholdTokens: z.number().int().nonnegative(),
  outcome: z.enum(['compacted', 'nothing', 'rejected', 'skipped', 'failed']),
  compactionId: id.optional(),
  detail: z.string().optional(),
});

/** What a suspended runtime waits for (a plugin tool's `ctx.suspend`): the player's approval or a form. */
export const WaitingFor = z.object({
  kind: z.enum(['approval', 'form']),
  /** Shown to the player (the session's language). */
  prompt: z.string(),
  /** A JSON Schema of the payload the resume should carry (a form's fields). */
  schema: z.record(z.string(), z.json()).optional(),
});

const InputSourceRef = z.object({ pluginId: id, runtimeId: id, resultId: z.string().optional() });

/** One typed input slot as the suspended runtime had it resolved (frozen into the continuation, spec §3). */
export const FrozenInputSlot = z.object({
  binding: z.string(),
  cardinality: z.enum(['one', 'many']),
  value: z.json().optional(),
  items: z.array(z.json()).optional(),
  source: InputSourceRef,
  sources: z.array(InputSourceRef).optional(),
});

/**
 * A runtime suspended on a tool call (its tool returned `ctx.suspend`): the continuation a resume
 * continues from (spec §1, §3): the protected range `currentTurnUserMessages` and the frozen input
 * slots, reused as they are by every request of the runtime after the resume; the call's result is
 * the resume's payload. The execution waits (`status: waiting`) until `execution.resumed@1`.
 */
export const ExecutionSuspendedV1 = ToolCallRef.extend({
  currentTurnUserMessages: z.array(z.object({ role: z.enum(['system', 'user', 'assistant']), content: z.string() })),
  inputs: z.array(FrozenInputSlot),
  waitingFor: WaitingFor,
});

/** `POST /v1/executions/:id/resume`: the payload answers the oldest suspension not yet resumed. */
export const ExecutionResumedV1 = z.object({
  executionId: id,
  turnId: id,
  resumeId: id,
  /** The suspended tool call it answers. */
  pluginId: id,
  runtimeId: id,
  step: z.number().int().positive(),
  toolCallId: id,
  payload: z.json(),
});

/**
 * An alternative of the latest turn takes another's place in the history (`turn_messages`): the
 * superseded turn's rows (the last of the session, uncompacted) are removed and, on `select`, the
 * selected alternative's committed messages (carried here, as its `turn.committed@1` had them)
 * take their place. A regenerated turn's commit appends it (cause `retry`) just before its
 * `turn.committed@1`, whose messages then take the place. The log keeps every alternative.
 */
export const TurnSupersededV1 = z.object({
  /** The first turn of the alternatives (the group's id). */
  alternativeOf: id,
  /** The turn whose rows leave the history. */
  turnId: id,
  /** The alternative that takes its place. */
  byTurnId: id,
  byExecutionId: id,
  cause: z.enum(['retry', 'select']),
  /** `select`: the selected alternative's committed messages, appended in the superseded rows' place. */
  messages: z.array(CommittedMessage).optional(),
});

/**
 * Undo (`POST /v1/sessions/:id/turns/:turnId/revert`): the named turn and every later turn of the
 * history leave it, with every alternative of each. Read models are folds that skip what a revert
 * names (`storyPath`): the reverted executions' messages, plugin data, compactions covering their
 * messages; the log keeps all of it (the audit of past requests still reads the log as it stood).
 */
export const TurnRevertedV1 = z.object({
  /** The turn the player named: it and every later one are reverted. */
  turnId: id,
  /** The turns that leave the history, oldest first (the named one first). */
  turnIds: z.array(id).min(1),
  /** Every execution of those turns: each alternative, run or failed. */
  executionIds: z.array(id).min(1),
  /** Who reverted: the caller the API authenticated (a tenant's key), as the inspector shows it. */
  by: z.string().min(1),
});

/** Most code points of an edited message's text. */
export const MAX_EDITED_TEXT_CHARS = 64_000;

/**
 * `PATCH /v1/sessions/:id/messages/:messageId`: a committed player input or story text gets new
 * text. Later requests read the edited text; bookkeepers are not re-run; the audit of a request
 * made before the edit still derives the text that was sent.
 */
export const MessageEditedV1 = z.object({
  messageId: id,
  /** The turn the message belongs to. */
  turnId: id,
  text: storyText(MAX_EDITED_TEXT_CHARS),
  by: z.string().min(1),
});

/**
 * The first event of a branch's log (`POST /v1/sessions/:id/branch`): the branch reads its parent's
 * log up to `parentVersion` with every turn after `atTurnId` left out, then its own events.
 */
export const SessionBranchedV1 = z.object({
  parentSessionId: id,
  /** The last turn the branch keeps (turn 0, the opening, keeps only the opening). */
  atTurnId: id,
  /** The parent's stream version the branch reads through (the parent's log as it stood at the branch). */
  parentVersion: z.int().min(1),
  /**
   * The first ancestor that is not a branch (the parent itself, unless the parent is a branch): its
   * id keys the branch's prompt cache (`promptCacheKey`), so the provider's cache that holds the
   * shared prefix is reused. Absent: the parent.
   */
  rootSessionId: id.optional(),
  by: z.string().min(1),
});

/**
 * Stop (`POST /v1/executions/:id/cancel`): the execution ends without its commit; its in-flight
 * model call is aborted. With `keepPartial` and story text streamed so far, `messages` are the turn
 * as kept (the player input and the partial story text), committed in the history as a turn is.
 */
export const ExecutionCancelledV1 = z.object({
  executionId: id,
  turnId: id,
  keepPartial: z.boolean(),
  messages: z.array(CommittedMessage).optional(),
  by: z.string().min(1),
});

/** What a player sets on the requests of one model slot (spec §3 "the player's slot parameter overrides"). */
export const SlotPreference = z.object({
  /** Explicit reasoning: `enabled`, and with it an `effort`. */
  reasoning: z.object({ enabled: z.boolean(), effort: z.enum(['low', 'medium', 'high']).optional() }).optional(),
  /** `auto` / `none`: sent as they are; `required`: a tool must be called where the provider accepts it. */
  toolChoice: z.enum(['auto', 'none', 'required']).optional(),
});

/** The player's preferences of a session: slot name → what they set on that slot's requests (no entry: nothing). */
export const SessionPreferences = z.object({ slots: z.record(z.string().min(1).max(200), SlotPreference) });

/**
 * The player's preferences as they are from this event on (the whole of them, not a difference):
 * set at creation (`POST /v1/sessions` `preferences`, appended with `session.created@1`) or changed
 * (`PATCH /v1/sessions/:id/preferences`). An execution's requests read the last one before its
 * input; they win over `llm.toml` and a runtime's `agent` preferences (spec §3).
 */
export const SessionPreferencesChangedV1 = z.object({ preferences: SessionPreferences });

/** How a tenant's world came to be (`world.created@1`). */
export const WorldProvenance = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('authored') }),
  z.object({ kind: z.literal('imported'), format: z.enum(['world-folder', 'card-v2', 'card-v3']) }),
  z.object({ kind: z.literal('generated'), jobId: id, model: z.string().min(1), template: z.string().min(1) }),
]);

/**
 * A world document (`WorldDocument` of libs/plugins-sdk, validated by the engine before it is
 * appended; a reader parses it again with that schema): a JSON object here.
 */
const WorldDocumentData = z.record(z.string(), z.unknown());

/** A tenant's world begins (stream = the world's id; its revision 1). */
export const WorldCreatedV1 = z.object({
  worldId: id,
  revision: z.literal(1),
  document: WorldDocumentData,
  provenance: WorldProvenance,
});

/** A new whole document of the world: revision n is the world stream's event at version n. */
export const WorldRevisedV1 = z.object({
  worldId: id,
  revision: z.int().min(2),
  document: WorldDocumentData,
});

/** The world is archived: no new session starts on it; running sessions keep working. */
export const WorldArchivedV1 = z.object({ worldId: id });

/** A session moves on purpose to a newer revision of its world (`POST /v1/sessions/:id/world-revision`). */
export const SessionWorldRevisedV1 = z.object({ worldId: id, fromRevision: z.int().min(1), toRevision: z.int().min(2) });

/** What `world-generation.*` events carry of a job: its id (the stream's id). */
const WorldGenerationRef = z.object({ jobId: id });

/**
 * `POST /v1/worlds/generate` accepted a job (stream = the job's id): what the worker creates the
 * world from, every setting resolved when it was asked, so a retried job (or an audit) derives the
 * same requests whatever the deployment's settings are by then.
 */
export const WorldGenerationRequestedV1 = WorldGenerationRef.extend({
  /** The author's idea, as written (may be empty: the model invents a world). */
  description: z.string(),
  /** The world's language (a canonical BCP 47 tag). */
  locale: z
    .string()
    .min(1)
    .max(255)
    .refine((tag) => canonicalLocaleTag(tag) !== null, 'must be a well-formed BCP 47 language tag'),
  /** The `llm.toml` slot whose model writes the world. */
  slot: id,
  /** The plugins the world's sessions run (the document's `plugins`); absent: the default ones. */
  plugins: z.array(z.string().min(1)).optional(),
  /** The most repair rounds after the draft (`COVEL_WORLD_GENERATION_REPAIR_ROUNDS` when asked). */
  repairRounds: z.int().min(0).max(10),
  /** Output limit of each call, in tokens. */
  maxOutputTokens: z.int().positive(),
  /** The template's `maxCharacters` and `maxLoreChars`. */
  maxCharacters: z.int().positive(),
  maxLoreChars: z.int().positive(),
});

/** What one call of a job is for: the first draft, a lore repair, or the draft asked again with what was wrong. */
export const WorldGenerationCallPurpose = z.enum(['draft', 'lore-repair', 'regenerate']);

/** A problem a check found in a reply, by field path (`lore`, `characters.0.id`, `(reply)`). */
const WorldGenerationProblem = z.object({ path: z.string(), message: z.string() });

/**
 * A model call of a job, recorded before it is sent: the round (0 the draft, then the repair
 * rounds), the template it renders, and the exact wire body. An audit derives every call again
 * from the job's request and the replies recorded before it, and compares the bodies.
 */
export const WorldGenerationCallRequestedV1 = WorldGenerationRef.extend({
  callId: id,
  round: z.int().min(0),
  purpose: WorldGenerationCallPurpose,
  template: z.enum(['world-generation', 'lore-repair']),
  /** What the check of the reply before found wrong (a repair round's reasons); none for the draft. */
  problems: z.array(WorldGenerationProblem).optional(),
  slot: id,
  provider: z.string(),
  model: z.string(),
  /** The exact request body sent to the provider, as the JSON text on the wire. */
  body: z.string().min(2),
});

/** The model's reply to a recorded call (a retried job reads it instead of calling again). */
export const WorldGenerationCallRespondedV1 = WorldGenerationRef.extend({
  callId: id,
  finishReason: z.string().nullable(),
  /** The reply's text (a U+0000 or a lone surrogate, which the log cannot hold, as U+FFFD). */
  text: z.string(),
  usage: LlmUsage,
});

/** The job made its world (`world.created@1` with provenance `generated`, in the world's own stream). */
export const WorldGenerationCompletedV1 = WorldGenerationRef.extend({
  worldId: id,
  /** Repair rounds it took (0: the draft was valid). */
  repairRounds: z.int().min(0),
});

/** The job ended without a world: `code` says why (`INVALID_WORLD` after the last round, a provider's code, ...). */
export const WorldGenerationFailedV1 = WorldGenerationRef.extend({ code: z.string().min(1), reason: z.string() });

/** What an API key may do (issue 32): `play` the write routes of sessions and worlds, `read` the reads, `admin` the tenant's settings and keys. */
export const API_KEY_SCOPES = ['play', 'read', 'admin'] as const;
export const ApiKeyScope = z.enum(API_KEY_SCOPES);
export type ApiKeyScope = z.infer<typeof ApiKeyScope>;

/** Who did an admin action: `operator` (COVEL_ADMIN_API_KEY, or a tool run by the operator) or `key:<keyId>` (a tenant's admin key). */
const AdminActor = z.string().regex(/^(operator|key:[0-9a-f-]{36})$/);

/** A tenant made by the operator (`POST /admin/tenants`, `npm run tenant:create`, the bootstrap or dev tenant); first event of the stream `tenant:<tenantId>`. */
export const TenantCreatedV1 = z.object({ tenantId: z.string().min(1), name: z.string(), by: AdminActor });

/** An API key made for the tenant: its id, name and scopes; never the key or its hash. */
export const ApiKeyCreatedV1 = z.object({ keyId: id, name: z.string(), scopes: z.array(ApiKeyScope).min(1), by: AdminActor });

/** An API key revoked: every API process refuses it within a second. */
export const ApiKeyRevokedV1 = z.object({ keyId: id, name: z.string(), scopes: z.array(ApiKeyScope).min(1), by: AdminActor });

/** The stream of a tenant's admin actions (keys, settings): `tenant:<tenantId>`. */
export const tenantStreamId = (tenantId: string): string => `tenant:${tenantId}`;
/** The most requests per second a tenant's limits may name (a typo guard, not a capacity figure). */
export const MAX_REQUESTS_PER_SECOND = 1_000_000;

/**
 * A tenant's limits (issue 32): each field absent = the deployment's default (config). `burst` is
 * the token bucket's capacity, `requestsPerSecond` its refill; `maxInFlight` the executions it may
 * have running at once; `budget` its spend per UTC day or calendar month (UTC), in tokens (input +
 * output) and/or estimated US dollars.
 */
export const TenantLimits = z
  .object({
    requestsPerSecond: z.number().positive().max(MAX_REQUESTS_PER_SECOND).optional(),
    burst: z.int().min(1).max(MAX_REQUESTS_PER_SECOND).optional(),
    maxInFlight: z.int().min(1).max(100_000).optional(),
    budget: z
      .object({
        period: z.enum(['day', 'month']),
        maxTokens: z.int().min(0).optional(),
        maxUsd: z.number().min(0).max(1e12).optional(),
      })
      .strict()
      .refine((b) => b.maxTokens !== undefined || b.maxUsd !== undefined, 'needs maxTokens or maxUsd (or leave budget out)')
      .optional(),
  })
  .strict();

/**
 * A tenant's limits replaced as a whole (stream `tenant:<tenantId>`): the `tenant_limits` projection
 * keeps the last one. `by`: who changed them (`operator`: the admin key).
 */
export const TenantLimitsChangedV1 = z.object({ tenantId: id, limits: TenantLimits, by: z.string().min(1) });

export const eventSchemas = {
  'session.created@1': SessionCreatedV1,
  'session.opened@1': SessionOpenedV1,
  'player-input.submitted@1': PlayerInputSubmittedV1,
  'runtime.activated@1': RuntimeActivatedV1,
  'execution.started@1': ExecutionStartedV1,
  'runtime.output.produced@1': RuntimeOutputProducedV1,
  'llm.calling@1': LlmCallingV1,
  'llm.responded@1': LlmRespondedV1,
  'tool.called@1': ToolCalledV1,
  'tool.completed@1': ToolCompletedV1,
  'turn.committed@1': TurnCommittedV1,
  'execution.failed@1': ExecutionFailedV1,
  'history.compacted@1': HistoryCompactedV1,
  'plugin-data.written@1': PluginDataWrittenV1,
  'plugin-data.deleted@1': PluginDataDeletedV1,
  'extension.resolved@1': ExtensionResolvedV1,
  'asset.generated@1': AssetGeneratedV1,
  'compaction.summary-requested@1': CompactionSummaryRequestedV1,
  'compaction.summary-responded@1': CompactionSummaryRespondedV1,
  'compaction.barrier-passed@1': CompactionBarrierPassedV1,
  'execution.suspended@1': ExecutionSuspendedV1,
  'execution.resumed@1': ExecutionResumedV1,
  'turn.superseded@1': TurnSupersededV1,
  'turn.reverted@1': TurnRevertedV1,
  'message.edited@1': MessageEditedV1,
  'session.branched@1': SessionBranchedV1,
  'execution.cancelled@1': ExecutionCancelledV1,
  'player-input.mid-turn@1': PlayerInputMidTurnV1,
  'session.preferences-changed@1': SessionPreferencesChangedV1,
  'world.created@1': WorldCreatedV1,
  'world.revised@1': WorldRevisedV1,
  'world.archived@1': WorldArchivedV1,
  'session.world-revised@1': SessionWorldRevisedV1,
  'world-generation.requested@1': WorldGenerationRequestedV1,
  'world-generation.call-requested@1': WorldGenerationCallRequestedV1,
  'world-generation.call-responded@1': WorldGenerationCallRespondedV1,
  'world-generation.completed@1': WorldGenerationCompletedV1,
  'world-generation.failed@1': WorldGenerationFailedV1,
  'tenant.created@1': TenantCreatedV1,
  'api-key.created@1': ApiKeyCreatedV1,
  'api-key.revoked@1': ApiKeyRevokedV1,
  'tenant.limits-changed@1': TenantLimitsChangedV1,
} as const;

export type EventType = keyof typeof eventSchemas;
export type EventData<T extends EventType> = z.infer<(typeof eventSchemas)[T]>;
export type CommittedMessage = z.infer<typeof CommittedMessage>;
export type MediaReference = z.infer<typeof MediaReference>;
export type AssetModality = z.infer<typeof AssetModality>;
export type LlmUsage = z.infer<typeof LlmUsage>;
export type SessionPreferences = z.infer<typeof SessionPreferences>;
export type SlotPreference = z.infer<typeof SlotPreference>;
export type WorldProvenance = z.infer<typeof WorldProvenance>;
export type WorldGenerationCallPurpose = z.infer<typeof WorldGenerationCallPurpose>;
export type TenantLimits = z.infer<typeof TenantLimits>;

/** An event to append: a discriminated union over every known type. */
export type NewEvent = { [T in EventType]: { type: T; data: EventData<T>; metadata?: Record<string, unknown> } }[EventType];

/** An event read back from the log, with its place in it. */
export type StoredEvent = {
  [T in EventType]: {
    globalPosition: number;
    tenantId: string;
    streamId: string;
    streamVersion: number;
    type: T;
    data: EventData<T>;
    metadata: Record<string, unknown>;
    recordedAt: string;
  };
}[EventType];

export function isEventType(type: string): type is EventType {
  return Object.prototype.hasOwnProperty.call(eventSchemas, type);
}
