import { z } from 'zod';
import type {
  CancelAnswer,
  HistoryUse,
  QueueHealth,
  SectionSource,
  SessionPreferences,
  TurnAudit,
  WorldGenerationAudit,
  WorldGenerationView,
  WorldSummaryView,
  WorldView,
} from '../../../libs/engine';
import { WorldDocument } from '../../../libs/plugins-sdk';
import {
  type ExecutionView,
  type LlmCallView,
  MediaReference,
  type PrefixReportView,
  TenantLimits,
  type TurnMessageView,
  WorldProvenance,
} from '../../../libs/events';
import type { CostedCallView, CostedTurnView, FirstDifference, RevertMarked } from '../../../libs/reports';
import type { SessionDetailAnswer, SessionSummaryAnswer } from '../session-summaries';
import type { BranchAnswer } from '../../../libs/engine';
import {
  ActivationBody,
  CreateSessionBody,
  EditMessageBody,
  EmptyBody,
  JsonValue,
  PreferencesPatchBody,
  ReasoningPreference,
  SubmitInputBody,
  ToolChoicePreference,
  GenerateWorldBody,
  WorldRevisionBody,
  CreateKeyBody,
  CreateTenantBody,
} from '../bodies';
import { API_KEY_SCOPES, type ApiKeyView, type Tenant } from '../../../libs/events';
import type { CreatedKeyView } from '../keys.controller';
import type { HealthReport, PublicAsyncStatus } from '../health.controller';
import type { ProviderSlotHealth } from '../../../libs/engine';
import { USAGE_GROUPS, type UsageReport, type UsageTotals } from '../../../libs/usage';

/**
 * Every named schema of the OpenAPI document (`#/components/schemas/<id>`). The request bodies are
 * the very schemas the pipes validate with (bodies.ts); the answers are described here, each checked
 * at compile time against the type its controller returns (`sameShape` below), so a field added to a
 * view without its schema here fails `tsc`.
 */
export const schemas = z.registry<SchemaMeta>();

export interface SchemaMeta {
  id: string;
  description?: string;
}

/** The same, as a list (a registry cannot be listed): the document converts them together. */
export const NAMED_SCHEMAS: { schema: z.ZodType; meta: SchemaMeta }[] = [];

/** Compile-time: A and B are assignable both ways and have the same keys, optional ones included (the schema and the view describe the same JSON). */
type Mutual<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type SameShape<A, B> = Mutual<A, B> extends true ? Mutual<keyof A, keyof B> : false;
const sameShape = <T extends true>(): T | undefined => undefined;

const named = <T extends z.ZodType>(schema: T, id: string, description?: string): T => {
  const meta = { id, ...(description ? { description } : {}) };
  schemas.add(schema, meta);
  NAMED_SCHEMAS.push({ schema, meta });
  return schema;
};

// ── request bodies (validated with these by ZodBodyPipe) ───────────────────────────────────────
named(JsonValue, 'JsonValue', 'Any JSON value.');
named(CreateSessionBody, 'CreateSessionBody', 'A new session: its world, its language, the player’s plugin settings and preferences.');
named(ReasoningPreference, 'ReasoningPreference', 'Explicit reasoning for a slot’s requests.');
named(ToolChoicePreference, 'ToolChoicePreference', 'The tool choice of a slot’s requests.');
named(PreferencesPatchBody, 'PreferencesPatchBody', 'A change of the player’s preferences per model slot.');
named(SubmitInputBody, 'SubmitInputBody', 'A player input: its text, and the form the player filled in with it.');
named(EmptyBody, 'EmptyBody', 'No fields: the route takes no body (or `{}`).');
named(EditMessageBody, 'EditMessageBody', 'A message’s new text, and whether to re-run the latest turn with it.');
named(ActivationBody, 'ActivationBody', 'Runs a `schedule.trigger: manual` runtime with a payload (shown in `<runtime-activation>`).');
named(
  WorldDocument,
  'WorldDocument',
  'A world: what a WORLD.md folder holds (its front matter without `id`, the lore body as `lore`, narrator-only parts between `<!-- narrator-only -->` lines). `PATCH` takes a JSON Merge Patch (RFC 7396) of it.',
);
named(WorldRevisionBody, 'WorldRevisionBody', 'Moves a session to a newer revision of its world.');
named(GenerateWorldBody, 'GenerateWorldBody', 'A world to make from a description: the idea, the world’s language, the model slot and the plugins.');

// ── errors (error.filter.ts) ───────────────────────────────────────────────────────────────────
export const ErrorIssue = named(
  z.object({
    path: z.string().meta({ description: 'The field, header or `(body)`: e.g. `text`, `pluginSettings.dice.sides`, `Idempotency-Key`.' }),
    message: z.string(),
  }),
  'ErrorIssue',
);

export const ErrorBody = named(
  z.object({
    statusCode: z.int(),
    error: z.string().meta({ description: 'The HTTP reason phrase.' }),
    code: z
      .string()
      .optional()
      .meta({ description: 'A stable machine-readable code, e.g. `INVALID_INPUT`, `SESSION_NOT_FOUND` (absent on an unexpected 500).' }),
    message: z.string(),
    issues: z.array(ErrorIssue).optional().meta({ description: 'On a 400 (and the 422 of a reused idempotency key): each field at fault.' }),
    details: z
      .record(z.string(), z.unknown())
      .optional()
      .meta({ description: 'More a client may act on, per code: e.g. `PROJECTION_QUARANTINED` names the projection and the skipped events.' }),
  }),
  'Error',
  'Every error answer: the status, a code, a message without internals, and on invalid input each field path.',
);

// ── answers ────────────────────────────────────────────────────────────────────────────────────
export const CreatedSession = named(z.object({ id: z.uuid() }), 'CreatedSession');

const worldFields = {
  id: z.string().meta({ description: 'A tenant’s world: a UUID; a built-in world: its folder’s name.' }),
  name: z.string(),
  revision: z.int().meta({ description: 'The revision answered; also the `ETag` (`"3"`) that `If-Match` names.' }),
  archived: z.boolean(),
  builtIn: z.boolean().meta({ description: 'A deployment’s world from a WORLD.md file: every tenant sees it, nobody changes it through the API.' }),
  provenance: WorldProvenance.optional().meta({ description: 'How the world came to be (a tenant’s world).' }),
  createdAt: z.string().optional(),
  updatedAt: z.string().optional(),
};

export const WorldAnswer = named(
  z.object({ ...worldFields, document: z.record(z.string(), z.unknown()).meta({ description: 'The whole `WorldDocument` of that revision.' }) }),
  'World',
  'A world at a revision, with its whole document.',
);
sameShape<SameShape<z.infer<typeof WorldAnswer>, WorldView>>();

export const WorldSummary = named(
  z.object({ ...worldFields, description: z.string(), characters: z.int(), lorebookEntries: z.int(), openings: z.int() }),
  'WorldSummary',
  'A world as the list gives it.',
);
sameShape<SameShape<z.infer<typeof WorldSummary>, WorldSummaryView>>();

export const AcceptedWorldGeneration = named(
  z.object({ jobId: z.uuid() }),
  'AcceptedWorldGeneration',
  'The job that makes the world: poll `GET /v1/worlds/generate/{jobId}` (with `waitMs` to long-poll) or follow `…/events`.',
);

export const WorldGenerationProgress = named(
  z.object({
    jobId: z.string(),
    status: z.enum(['queued', 'drafting', 'repairing', 'done', 'failed']),
    progress: z.string().meta({ description: '`queued`, `drafting`, `repairing 1/2` (the repair round of the most rounds), `done` or `failed`.' }),
    round: z.int().meta({ description: 'The round of the last model call: 0 the draft, n the n-th repair round.' }),
    rounds: z.int().meta({ description: 'The most repair rounds the job may take.' }),
    worldId: z.string().nullable().meta({ description: 'With `done`: the world made (`GET /v1/worlds/{worldId}`).' }),
    error: z
      .object({ code: z.string(), reason: z.string() })
      .nullable()
      .meta({ description: 'With `failed`: why (`INVALID_WORLD` after the last repair round, a provider’s code, …).' }),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  }),
  'WorldGenerationProgress',
  'A world generation job’s progress.',
);
sameShape<SameShape<z.infer<typeof WorldGenerationProgress>, WorldGenerationView>>();

export const WorldGenerationAuditSchema = named(
  z.object({
    jobId: z.string(),
    identical: z
      .boolean()
      .meta({ description: 'Every call of the job, derived again from its request and the replies recorded before it, matches the bytes sent.' }),
    calls: z.array(
      z.object({
        callId: z.string(),
        round: z.int(),
        purpose: z.string().meta({ description: '`draft`, `lore-repair` or `regenerate`.' }),
        template: z.string(),
        provider: z.string(),
        model: z.string(),
        recordedBytes: z.int(),
        identical: z.boolean(),
        firstMismatchAt: z.int().nullable(),
      }),
    ),
  }),
  'WorldGenerationAudit',
  'What a world generation job sent, derived again from the log and compared byte for byte.',
);
sameShape<SameShape<z.infer<typeof WorldGenerationAuditSchema>, WorldGenerationAudit>>();

export const WorldPage = named(
  z.object({ items: z.array(WorldSummary), nextCursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last.' }) }),
  'WorldPage',
  'A page of worlds: the deployment’s built-in ones first, then the tenant’s in creation order.',
);

export const SessionWorldRevision = named(
  z.object({ worldId: z.string(), revision: z.int(), fromRevision: z.int() }),
  'SessionWorldRevision',
  'The revision the session now runs (turns accepted from now on read it) and the one it ran before.',
);

export const SessionPreferencesAnswer = named(
  z.object({
    preferences: z.object({
      slots: z.record(z.string(), z.object({ reasoning: ReasoningPreference.optional(), toolChoice: ToolChoicePreference.optional() })),
    }),
  }),
  'SessionPreferences',
  'The player’s preferences per model slot, as they now are (turns accepted from now on use them).',
);
sameShape<SameShape<z.infer<typeof SessionPreferencesAnswer>, { preferences: SessionPreferences }>>();

export const StartedExecution = named(
  z.object({ executionId: z.uuid(), turnId: z.uuid() }),
  'StartedExecution',
  'The execution that runs the turn: poll `GET /v1/executions/{executionId}` (with `waitMs` to long-poll).',
);

export const ResumedExecution = named(
  z.object({ executionId: z.uuid(), turnId: z.uuid(), resumeId: z.uuid() }),
  'ResumedExecution',
  'The resumed execution: it goes on in the background; poll `GET /v1/executions/{executionId}`.',
);

export const CancelledExecution = named(
  z.object({
    executionId: z.uuid(),
    turnId: z.uuid(),
    status: z.literal('cancelled'),
    keepPartial: z.boolean(),
    messages: z
      .array(
        z.object({
          messageId: z.string(),
          role: z.enum(['user', 'assistant', 'system']),
          sourceType: z.enum(['player', 'runtime', 'system']),
          pluginId: z.string().nullable(),
          runtimeId: z.string().nullable(),
          outputKind: z.enum(['story', 'structured', 'none']).nullable(),
          text: z.string(),
          media: MediaReference.optional(),
        }),
      )
      .optional()
      .meta({
        description:
          'With `keepPartial` and story text streamed before the stop: the turn as kept (the player’s input, then the partial story text), committed in the history as a turn is. Absent: nothing was kept.',
      }),
  }),
  'CancelledExecution',
  'The stopped execution: it has ended (`status: cancelled`); the session takes its next input at once.',
);
sameShape<SameShape<z.infer<typeof CancelledExecution>, CancelAnswer>>();

export const WaitingFor = named(
  z.object({
    kind: z.enum(['approval', 'form']),
    prompt: z.string(),
    schema: z.record(z.string(), JsonValue).optional(),
  }),
  'WaitingFor',
  'What a suspended runtime waits for (`ctx.suspend`): the player’s approval or a form (`schema`: a JSON Schema of the payload the resume should carry).',
);

export const TurnAlternatives = named(
  z.object({
    turnId: z.uuid().meta({ description: 'The first turn of the alternatives (the id of their group).' }),
    alternatives: z.array(
      z.object({
        id: z.uuid().meta({ description: 'The alternative id: the execution id of its run (what `select` takes).' }),
        turnId: z.uuid(),
        createdAt: z.string(),
        status: z.enum(['running', 'committed', 'failed', 'cancelled']),
        preview: z.string().meta({ description: 'The first 200 code points of its story text.' }),
        selected: z.boolean().meta({ description: 'It is the one in the history.' }),
      }),
    ),
  }),
  'TurnAlternatives',
  'The alternatives of a turn, oldest first: the turn first played and each regeneration of it; one is selected (in the history).',
);

export const SelectedAlternative = named(
  z.object({ alternativeId: z.uuid(), turnId: z.uuid() }),
  'SelectedAlternative',
  'The alternative now in the history, and its turn id.',
);

export const RevertedTurns = named(
  z.object({
    turnId: z.uuid().meta({ description: 'The turn named: it and every later turn left the history.' }),
    turnIds: z.array(z.uuid()).meta({ description: 'The turns that left the history, oldest first (the named one first).' }),
    executionIds: z
      .array(z.uuid())
      .meta({ description: 'Every execution of those turns: each alternative, failed runs, activations since the turn’s first input.' }),
  }),
  'RevertedTurns',
  'What a revert took out of the history (as `turn.reverted@1` records it).',
);

export const EditedMessage = named(
  z.object({
    messageId: z.uuid(),
    turnId: z.uuid().meta({ description: 'The turn the message belongs to.' }),
    text: z.string().meta({ description: 'The message’s text now.' }),
    execution: z
      .object({ executionId: z.uuid(), turnId: z.uuid() })
      .optional()
      .meta({ description: 'With `regenerate`: the execution that re-runs the turn (poll `GET /v1/executions/{executionId}`).' }),
  }),
  'EditedMessage',
  'The message as edited (`message.edited@1`; nothing is recorded when the text was already this).',
);

export const AcceptedInput = named(
  z.object({
    executionId: z.uuid(),
    turnId: z.uuid(),
    messageId: z
      .uuid()
      .optional()
      .meta({ description: 'A mid-turn message (`midTurn: true`): its id; the execution and turn are those of the running turn it joined.' }),
  }),
  'AcceptedInput',
  'The execution that runs the turn (a new one, or for a mid-turn message the running one it joined): poll `GET /v1/executions/{executionId}` (with `waitMs` to long-poll).',
);

export const Execution = named(
  z.object({
    executionId: z.string(),
    sessionId: z.string(),
    turnId: z.string(),
    status: z.enum(['queued', 'running', 'waiting', 'committed', 'failed', 'cancelled']),
    attempts: z.int(),
    workerId: z.string().nullable(),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    submittedAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
    waitingFor: WaitingFor.optional().meta({
      description: 'With `status: waiting`: what a suspended runtime waits for (resume with `POST /v1/executions/{id}/resume`).',
    }),
  }),
  'Execution',
);
sameShape<SameShape<z.infer<typeof Execution>, ExecutionView>>();

named(MediaReference, 'MediaReference', 'A generated asset: fetch its bytes from `GET /v1/sessions/{id}/media/{mediaId}`.');

export const Message = named(
  z.object({
    messageId: z.string(),
    sessionId: z.string(),
    turnId: z.string(),
    order: z.int(),
    role: z.string(),
    sourceType: z.string(),
    pluginId: z.string().nullable(),
    runtimeId: z.string().nullable(),
    outputKind: z.string().nullable(),
    text: z.string(),
    compacted: z.boolean(),
    media: MediaReference.optional(),
  }),
  'Message',
  'A committed message of the session, in order.',
);
sameShape<SameShape<z.infer<typeof Message>, TurnMessageView>>();

export const LlmCall = named(
  z.object({
    position: z.int(),
    callId: z.string(),
    executionId: z.string(),
    turnId: z.string(),
    pluginId: z.string(),
    runtimeId: z.string(),
    provider: z.string(),
    model: z.string(),
    request: z.record(z.string(), z.unknown()).meta({ description: 'The request body as the provider received it (parsed).' }),
    requestText: z.string().meta({ description: 'The exact bytes sent.' }),
    recordedAt: z.iso.datetime(),
  }),
  'LlmCall',
  'One model call: the request exactly as sent.',
);
sameShape<SameShape<z.infer<typeof LlmCall>, LlmCallView>>();

export const PrefixReportRow = named(
  z.object({
    callId: z.string(),
    turnId: z.string(),
    turn: z.int(),
    runtime: z.string(),
    firstInTurn: z.boolean(),
    requestTokensEstimate: z.number(),
    sharedTokensEstimate: z.number().nullable(),
    sharedPercent: z.number().nullable(),
    firstDifference: z.unknown().meta({ description: 'Where the request first differs from the previous call’s, or null.' }),
    providerCachedTokens: z.number().nullable(),
    providerInputTokens: z.number().nullable(),
  }),
  'PrefixReportRow',
  'One model call of the prefix report: how much of its request repeats the previous one (cacheable).',
);
sameShape<SameShape<z.infer<typeof PrefixReportRow>, PrefixReportView>>();

const SectionSourceSchema = z.object({ section: z.string(), source: z.string(), items: z.array(z.string()).optional() });
sameShape<SameShape<z.infer<typeof SectionSourceSchema>, SectionSource>>();

export const TurnAuditSchema = named(
  z.object({
    sessionId: z.string(),
    turnId: z.string(),
    identical: z.boolean().meta({ description: 'Every request of the turn, re-derived from the events alone, matches the bytes sent.' }),
    calls: z.array(
      z.object({
        callId: z.string(),
        executionId: z.string(),
        turnId: z.string(),
        pluginId: z.string(),
        runtimeId: z.string(),
        identical: z.boolean(),
        sources: z.array(SectionSourceSchema),
        purpose: z.literal('compaction-summary').optional(),
        recordedBytes: z.int(),
        firstMismatchAt: z.int().nullable(),
      }),
    ),
  }),
  'TurnAudit',
);
sameShape<SameShape<z.infer<typeof TurnAuditSchema>, TurnAudit>>();

// ── the inspector's views (session-views.controller.ts) ───────────────────────────────────────
/** Est. USD at list prices (llm.toml [prices] over the built-in table), from the provider's reported usage. */
const estCostUsd = (what: string) =>
  z
    .number()
    .nullable()
    .meta({ description: `Estimated USD of ${what} at list prices (cached input at the cached price), from the provider’s reported usage.` });

export const HistoryUseSchema = named(
  z.object({
    messages: z.int().meta({ description: 'Uncompacted messages: what each shared-history runtime of the next turn reads.' }),
    limit: z.int().meta({ description: 'The engine’s bound (`COVEL_HISTORY_MESSAGE_LIMIT`, default 2000): more uncompacted messages fail every turn.' }),
    state: z.enum(['ok', 'warning', 'full']).meta({ description: '`warning` from 80 % of the limit; `full` past it: every turn fails with `code`.' }),
    compaction: z.boolean().meta({ description: 'The session runs a `history.compact@2` provider (e.g. the `history-compaction` plugin).' }),
    code: z.enum(['HISTORY_NEEDS_COMPACTION', 'HISTORY_TOO_LONG']).optional().meta({
      description:
        'In `warning` and `full`: the error code of its turns past the limit — `HISTORY_NEEDS_COMPACTION` without a compaction provider, `HISTORY_TOO_LONG` with one that has not kept up.',
    }),
    fix: z.string().optional().meta({ description: 'In `warning` and `full`: what to do, e.g. add `history-compaction` to the session’s plugins.' }),
  }),
  'HistoryUse',
  'How much of the history limit a session uses.',
);
sameShape<SameShape<z.infer<typeof HistoryUseSchema>, HistoryUse>>();

export const SessionSummary = named(
  z.object({
    sessionId: z.string(),
    worldId: z.string().nullable(),
    worldRevision: z.int().nullable().meta({
      description:
        'The revision of the tenant’s world the session runs now (the one it started on, or the last it was moved to with `POST /v1/sessions/{id}/world-revision`); null for a built-in world or none.',
    }),
    locale: z.string(),
    createdAt: z.iso.datetime(),
    turns: z.int(),
    plugins: z.array(z.string()).nullable().meta({ description: 'The plugins the session runs (ids, sorted); null: the plugins enabled by default.' }),
    branchedFrom: z
      .object({
        sessionId: z.string().meta({ description: 'The parent session.' }),
        atTurnId: z.string().meta({ description: 'The last turn of the parent’s history the branch kept.' }),
      })
      .nullable()
      .meta({ description: 'A branch (`POST /v1/sessions/{id}/branch`): the session it was branched from, and at which turn; null: not a branch.' }),
    estCostUsd: estCostUsd(
      'the session’s answered model calls; null when one of their models has no price, or when `costQuarantined` (read from an async projection: may lag the log by a moment)',
    ),
    costQuarantined: z.boolean().meta({
      description:
        'The `prefix_reports` projection the cost is read from skipped (quarantined) an event of this session, not applied since: `estCostUsd` is null instead of too low (an operator replays it; `GET /v1/sessions/{id}/prefix-report` answers 503 `PROJECTION_QUARANTINED` meanwhile).',
    }),
    history: HistoryUseSchema,
  }),
  'SessionSummary',
  'A session of the tenant, with the number of turns and activations submitted to it (a regeneration is not counted again), its est. $ (every model call, regenerations included) and its use of the history limit.',
);
sameShape<SameShape<z.infer<typeof SessionSummary>, SessionSummaryAnswer>>();

export const SessionDetail = named(
  SessionSummary.extend({
    branches: z
      .array(
        z.object({
          sessionId: z.string().meta({ description: 'The branch.' }),
          atTurnId: z.string().meta({ description: 'The last turn of this session’s history the branch kept.' }),
          createdAt: z.iso.datetime(),
        }),
      )
      .meta({ description: 'The session’s branches, newest first (at most 100).' }),
  }),
  'SessionDetail',
  'A session as the list gives it, with its branches.',
);
sameShape<SameShape<z.infer<typeof SessionDetail>, SessionDetailAnswer>>();

export const BranchedSession = named(
  z.object({
    sessionId: z.uuid().meta({ description: 'The new session (the branch).' }),
    parentSessionId: z.uuid(),
    atTurnId: z.uuid(),
  }),
  'BranchedSession',
  'A branch: a new session with its parent’s history up to `atTurnId`, and its parent’s settings.',
);
sameShape<SameShape<z.infer<typeof BranchedSession>, BranchAnswer>>();
const TurnRunStatusSchema = z
  .enum(['running', 'committed', 'failed', 'cancelled'])
  .meta({ description: '`cancelled`: stopped by the player (`POST /v1/executions/{id}/cancel`).' });

export const SessionTurn = named(
  z.object({
    turnId: z.string(),
    executionId: z.string(),
    number: z.int().meta({ description: '1-based, in log order.' }),
    kind: z.enum(['input', 'activation']),
    input: z.string().meta({ description: 'The player’s text, or `plugin/runtime (manual|event)` for an activation.' }),
    status: TurnRunStatusSchema,
    calls: z.int(),
    requestTokensEstimate: z.number().meta({ description: 'Sum over the turn’s model calls of the estimated request tokens.' }),
    providerInputTokens: z.number().nullable(),
    providerCachedTokens: z.number().nullable(),
    estCostUsd: estCostUsd('the turn’s answered model calls; null when one of their models has no price'),
    alternatives: z
      .array(
        z.object({
          turnId: z.string(),
          executionId: z.string(),
          status: TurnRunStatusSchema,
          calls: z.int(),
          selected: z.boolean().meta({ description: 'The alternative in the history; the turn’s own figures are its.' }),
        }),
      )
      .meta({ description: 'The turn as first played and each regeneration of it, oldest first (one entry for a turn never regenerated).' }),
    reverted: z
      .object({
        by: z.string().meta({ description: 'Who reverted it: the caller the API authenticated (`tenant:<id>`).' }),
        at: z.iso.datetime().meta({ description: 'When the revert was recorded.' }),
        turnId: z.string().meta({ description: 'The turn the revert named: this one, or an earlier one (every later turn leaves the story with it).' }),
      })
      .nullable()
      .meta({ description: 'Set when an undo (`turn.reverted@1`) took the turn out of the story: the log keeps it, the history no longer has it.' }),
  }),
  'SessionTurn',
  'A turn of the session, with its request size, what the provider read from its cache and its est. $.',
);
sameShape<SameShape<z.infer<typeof SessionTurn>, RevertMarked<CostedTurnView>>>();

const FirstDifferenceSchema = z.object({
  messageIndex: z.int().nullable(),
  role: z.string(),
  offset: z.int(),
  section: z.string().nullable(),
  before: z.string(),
  after: z.string(),
});
sameShape<SameShape<z.infer<typeof FirstDifferenceSchema>, FirstDifference>>();

export const CallInspection = named(
  z.object({
    position: z.int(),
    callId: z.string(),
    executionId: z.string(),
    attempt: z.int(),
    step: z.int(),
    pluginId: z.string(),
    runtimeId: z.string(),
    protocol: z.string(),
    model: z.string(),
    recordedAt: z.string(),
    fallback: z.string().nullable(),
    hasLayout: z.boolean().meta({ description: 'False in logs written before layouts were recorded: the sections are then not known.' }),
    units: z
      .array(
        z.object({
          kind: z.enum(['tools', 'system', 'message']),
          role: z.string(),
          messageIndex: z.int().nullable(),
          text: z.string(),
          section: z.string().nullable(),
          spans: z
            .array(z.object({ name: z.string(), start: z.int(), end: z.int() }))
            .meta({ description: 'The system prompt’s recorded sections (UTF-16 offsets).' }),
          cacheBoundaries: z.array(
            z.object({ offset: z.int(), kind: z.enum(['cache_control', 'sentinel']), after: z.string().nullable() }).meta({
              description: '`cache_control`: a breakpoint on the wire (Anthropic); `sentinel`: the engine’s boundary, stripped on the wire.',
            }),
          ),
        }),
      )
      .meta({ description: 'The request as the provider computes its cache key: tools, system, then each wire message.' }),
    requestTokensEstimate: z.number(),
    usage: z.object({ inputTokens: z.int(), outputTokens: z.int(), cachedInputTokens: z.int() }).nullable(),
    reply: z.object({ text: z.string(), toolCalls: z.array(z.unknown()) }).nullable(),
    tools: z.array(z.object({ toolCallId: z.string(), name: z.string(), arguments: z.string(), content: z.string().nullable(), ok: z.boolean().nullable() })),
    comparison: z
      .object({
        previousCallId: z.string(),
        previousTurnId: z.string(),
        sharedTokensEstimate: z.number(),
        sharedPercent: z.number(),
        firstDifference: FirstDifferenceSchema.nullable(),
        differsAtUnit: z.int().nullable(),
      })
      .nullable()
      .meta({ description: 'The prefix shared with the previous turn’s first call of the same runtime (or this turn’s previous step); null for the first.' }),
    estCostUsd: estCostUsd('this call; null when it has no answer or its model no price'),
    turnEstCostUsd: estCostUsd('the whole turn (the sum over its answered calls, the same on each call); null when one of their models has no price'),
  }),
  'CallInspection',
  'One model call of a turn as the model saw it, with its sections, cache boundaries, usage and shared prefix.',
);
sameShape<SameShape<z.infer<typeof CallInspection>, CostedCallView>>();

const PublicAsyncStatusSchema = z.object({
  kind: z.literal('async'),
  name: z.string(),
  state: z.enum(['running', 'failing']),
  lag: z.int(),
  failing: z.int(),
  failures: z.array(
    z.object({
      shard: z.int(),
      position: z.int(),
      globalPosition: z.int(),
      eventType: z.string(),
      errorCode: z.string(),
      attempts: z.int(),
      since: z.string(),
      nextRetryAt: z.string().nullable(),
    }),
  ),
  quarantinedOpen: z.int().meta({
    description: 'How many events it quarantined that no operator has acknowledged (and no replay applied): all of them (`quarantined` lists the newest 20).',
  }),
  quarantined: z
    .array(
      z.object({
        id: z.string(),
        shard: z.int(),
        globalPosition: z.int(),
        eventType: z.string(),
        errorCode: z.string(),
        attempts: z.int(),
        quarantinedAt: z.string(),
      }),
    )
    .meta({
      description:
        'The newest (at most 20) events it skipped after failing to apply them, not yet acknowledged by an operator (they keep `/health` degraded); `quarantinedOpen` counts them all.',
    }),
});
sameShape<SameShape<z.infer<typeof PublicAsyncStatusSchema>, PublicAsyncStatus>>();

const QueueHealthSchema = z.object({ kind: z.enum(['bullmq', 'in-process']), ok: z.boolean(), state: z.string() });
sameShape<SameShape<z.infer<typeof QueueHealthSchema>, QueueHealth>>();

const ProviderSlotHealthSchema = z.object({
  slot: z.string(),
  state: z.enum(['ok', 'slow']),
  lastDeadlineMiss: z
    .object({
      at: z.string(),
      protocol: z.string(),
      phase: z.enum(['first-byte', 'idle', 'total']),
      deadlineMs: z.number(),
      code: z.string(),
    })
    .nullable(),
});
sameShape<SameShape<z.infer<typeof ProviderSlotHealthSchema>, ProviderSlotHealth>>();

export const HealthReportSchema = named(
  z.object({
    status: z.enum(['ok', 'degraded', 'unavailable']),
    database: z.object({ kind: z.enum(['postgres', 'pglite']), ok: z.boolean(), latencyMs: z.number() }),
    queue: QueueHealthSchema,
    projections: z.array(PublicAsyncStatusSchema).nullable(),
    providers: z.array(ProviderSlotHealthSchema).nullable().meta({
      description:
        'Each model slot: `slow` for 10 minutes after one of its calls missed a deadline (`PROVIDER_DEADLINE`), unless a later call of it answered; null while it cannot be read.',
    }),
  }),
  'HealthReport',
  '`ok` (200); `degraded` (503) when a shard of an async projection is stopped or it quarantined an event no operator has acknowledged, or a model slot is `slow`; `unavailable` (503) when the database or the queue is down.',
);
sameShape<SameShape<z.infer<typeof HealthReportSchema>, HealthReport>>();

export const Liveness = named(z.object({ status: z.literal('ok') }), 'Liveness');

// ── API keys and the operator's tenants (issue 32) ────────────────────────────────────────────
named(CreateKeyBody, 'CreateKeyBody', 'A new API key: its name and scopes.');
named(CreateTenantBody, 'CreateTenantBody', 'A new tenant: its name.');

const apiKeyFields = {
  id: z.string().meta({ description: 'The key’s id (a UUID): what events record as `by: key:<id>`.' }),
  name: z.string(),
  scopes: z.array(z.enum(API_KEY_SCOPES)),
  prefix: z.string().meta({ description: 'The key’s first characters, to tell keys apart (not a secret).' }),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable().meta({ description: 'When it was last used (written at most once a minute); null: never.' }),
  revokedAt: z.string().nullable(),
};

export const ApiKeySchema = named(z.object(apiKeyFields), 'ApiKey', 'An API key: never the key or its hash.');
sameShape<SameShape<z.infer<typeof ApiKeySchema>, ApiKeyView>>();

export const CreatedApiKey = named(
  z.object({ ...apiKeyFields, key: z.string().meta({ description: 'The key itself (`cvl_…`), answered this once: only its HMAC is kept.' }) }),
  'CreatedApiKey',
  'A new API key, with the key itself (shown once).',
);
sameShape<SameShape<z.infer<typeof CreatedApiKey>, CreatedKeyView>>();

export const ApiKeyList = named(z.object({ keys: z.array(ApiKeySchema) }), 'ApiKeyList', 'The tenant’s keys, revoked ones too, oldest first.');

const TenantFields = z.object({ id: z.string(), name: z.string() });
sameShape<SameShape<z.infer<typeof TenantFields>, Tenant>>();

export const CreatedTenant = named(
  z.object({ tenant: TenantFields, key: CreatedApiKey }),
  'CreatedTenant',
  'A new tenant and its first key (every scope, shown once).',
);

export const TenantList = named(z.object({ tenants: z.array(TenantFields.extend({ createdAt: z.string() })) }), 'TenantList', 'Every tenant, oldest first.');
const usageSums = {
  calls: z.int().meta({ description: 'Answered model calls (each counted once, at its first recorded answer).' }),
  inputTokens: z.int().meta({ description: 'Input tokens as the provider reported them, cached ones included.' }),
  cachedInputTokens: z.int().meta({ description: 'Of those, the tokens read from the provider’s prompt cache.' }),
  outputTokens: z.int(),
  estCostUsd: z.number().meta({
    description:
      'Est. USD at the list prices in force when read (built in, `llm.toml` `[prices]` over them): an estimate, not a bill. Models in `unpricedModels` count $0.',
  }),
};
const UsageTotalsSchema = z.object(usageSums);
sameShape<SameShape<z.infer<typeof UsageTotalsSchema>, UsageTotals>>();

export const UsageReportSchema = named(
  z.object({
    from: z.string().meta({ description: 'The first UTC day counted (`YYYY-MM-DD`).' }),
    to: z.string().meta({ description: 'The last UTC day counted (included).' }),
    groupBy: z.enum(USAGE_GROUPS),
    rows: z.array(
      z.object({
        key: z.string().nullable().meta({
          description:
            'The group: a day (`YYYY-MM-DD`), a session id, a model, a runtime (`plugin/runtime`, `compaction:<plugin>`, `world-generation`) or a tenant id. Null: calls of no session (world generation).',
        }),
        ...usageSums,
      }),
    ),
    totals: UsageTotalsSchema,
    unpricedModels: z.array(z.string()).meta({ description: 'Models of the range without a price (their calls count $0).' }),
    quarantinedEvents: z
      .int()
      .meta({ description: 'Events the usage view skipped (quarantined) and no replay applied since: the figures miss them (an operator is alerted).' }),
  }),
  'UsageReport',
  'Model calls, tokens and est. cost over a range of UTC days, one row per group, with the totals.',
);
sameShape<SameShape<z.infer<typeof UsageReportSchema>, UsageReport>>();
/** `PUT /admin/tenants/:id/limits`: the limits the operator sets (each absent field: the deployment's default). */
export const TenantLimitsBody = named(
  TenantLimits,
  'TenantLimitsSettings',
  'A tenant’s limits as the operator sets them: `requestsPerSecond` and `burst` (its request bucket), `maxInFlight` (executions running at once), `budget` (spend per UTC day or calendar month, in tokens and/or est. USD). An absent field is the deployment’s default.',
);
/** `GET /v1/limits` (and the operator's `/admin/tenants/:id/limits`). */
export const TenantLimitsAnswer = named(
  z.object({
    tenantId: z.string(),
    limits: TenantLimits,
    effective: z.object({
      requestsPerSecond: z.number(),
      burst: z.number().int(),
      maxInFlight: z.number().int().nullable(),
      budget: z.object({ period: z.enum(['day', 'month']), maxTokens: z.number().int().optional(), maxUsd: z.number().optional() }).nullable(),
    }),
    changedBy: z.string().nullable(),
    updatedAt: z.string().nullable(),
  }),
  'TenantLimits',
  'A tenant’s limits: what the operator set (`limits`) and what is in force with the deployment’s defaults (`effective`).',
);
