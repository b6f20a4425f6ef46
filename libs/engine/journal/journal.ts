import type { ContextMessage, ExecutionOutput, InputSlot, LedgerEntry } from '../../context';
import {
  changesPath,
  type EventData,
  type EventType,
  type SessionPreferences,
  type StoredEvent,
  summariesProjection,
  turnMessagesProjection,
} from '../../events';
import { JournalGapError } from '../errors';
import { deepCopy } from './deep-copy';
import { resultKey } from './input-hash';
import { NO_PREFERENCES } from '../preferences/session-preferences';

export interface RuntimeOutput {
  stage: string | null;
  pluginId: string;
  runtimeId: string;
  outputKind: 'story' | 'structured' | 'none';
  messageId: string;
  text: string;
  attempt: number;
  /** How many of the execution's mid-turn messages had arrived when the output was recorded (the commit places the later ones after it). */
  midTurnBefore: number;
}

/** A message the player added to the running turn (`player-input.mid-turn@1`). */
export interface MidTurnMessage {
  messageId: string;
  text: string;
}

export interface ExecutionJournal {
  executionId: string;
  turnId: string;
  input: { messageId: string; text: string };
  submittedVersion: number;
  /**
   * A regenerated turn (`player-input.submitted@1` `retryFromTurnId`): the turn it re-runs from the
   * same source. Its history leaves that turn out, its commit supersedes it; runtimes see it as
   * `ctx.session.retryFromTurnId`.
   */
  retryFromTurnId?: string;
  /** With `retryFromTurnId`: the first turn of its alternatives. */
  alternativeOf?: string;
  /** `cancelled`: stopped (`execution.cancelled@1`); like a commit or a failure, every later append of its attempts is fenced out. */
  status: 'pending' | 'committed' | 'failed' | 'cancelled';
  /** Highest `execution.started` attempt seen (0 = never started). */
  latestAttempt: number;
  /** The turn job that claimed `latestAttempt`, when its `execution.started` names it (`claimant`). */
  latestClaimant?: string;
  /** The plugin registry generation its first `execution.started` captured (absent: an early log, or not started). */
  generation?: string;
  /** Outputs already produced by this execution, any attempt, keyed by `pluginId/runtimeId`. */
  outputs: Map<string, RuntimeOutput>;
  /** Handler results recorded by this execution (`extension.resolved`), first one per key, as JSON text. */
  extensionResults: Map<string, string>;
  /**
   * The player's latest form values for this execution (spec §4 "The form is read only once",
   * template variable `player.lastFormValues`): those submitted with the execution's input, read
   * from its event once, the same for every runtime of the execution and for a rebuild; null when
   * the input carried none (and for an activation).
   */
  lastFormValues: Readonly<Record<string, unknown>> | null;
  /** What each agent runtime's loop recorded so far (replies, tool outcomes), keyed by `pluginId/runtimeId`. */
  agentLoops: Map<string, AgentLoopRecord>;
  /** Topics emitted by this execution's tool calls (recorded in `tool.completed@1`). */
  emittedTopics: Set<string>;
  /** Set when a manual request or an emitted event started this execution for one runtime (`runtime.activated@1`). */
  activation?: ExecutionActivation;
  /** Assets its tools and functions generated (`asset.generated@1`), in submission order; the commit shows them. */
  assets: GeneratedAssetRecord[];
  /** The execution's compaction barrier has run to an end (`compaction.barrier-passed@1`): it never runs again. */
  barrierPassed: boolean;
  /** The summary model calls its compaction barrier recorded, keyed by `requestKey` (any attempt; the first per key wins). */
  summaryCalls: Map<string, RecordedSummaryCall>;
  /** The runtimes' suspensions on a tool (`execution.suspended@1`), in log order, each with its resume once recorded. */
  suspensions: ExecutionSuspension[];
  /** Messages the player added while it ran (`player-input.mid-turn@1`), in log order: part of its current turn. */
  midTurnMessages: MidTurnMessage[];
}

/** A runtime suspended on a tool call: its continuation (spec §1, §3), and the resume that answers it. */
export interface ExecutionSuspension {
  pluginId: string;
  runtimeId: string;
  step: number;
  toolCallId: string;
  name: string;
  /** The protected range saved with the continuation: the runtime's requests after the resume use it as it is. */
  currentTurnUserMessages: ContextMessage[];
  /** The typed inputs the runtime had resolved: frozen, never resolved again after the resume. */
  inputs: InputSlot[];
  waitingFor: EventData<'execution.suspended@1'>['waitingFor'];
  resumed?: { resumeId: string; payload: unknown };
}

/** The suspension the execution waits on (the oldest not yet resumed), if any: the execution shows `status: waiting`. */
export const waitingSuspension = (execution: ExecutionJournal): ExecutionSuspension | undefined => execution.suspensions.find((s) => !s.resumed);

/** A recorded summary model call of the compaction barrier: its request, and its reply once recorded. */
export interface RecordedSummaryCall {
  requestId: string;
  reply?: { text: string; finishReason: 'stop' | 'length' | 'other' };
}

/** A generated asset as the execution recorded it (its bytes are in the MediaStore). */
export type GeneratedAssetRecord = EventData<'asset.generated@1'>;

/** The activation of an execution that runs one `manual` or event-triggered runtime. */
export type ExecutionActivation =
  | { kind: 'manual'; pluginId: string; runtimeId: string; payload: unknown }
  | { kind: 'event'; pluginId: string; runtimeId: string; topic: string; payload: unknown };

/** One recorded step reply of an agent loop: the reply's JSON text (`llm.responded@1` reply). */
export interface RecordedReply {
  step: number;
  reply: string;
}

/** One recorded tool outcome (`tool.completed@1`). */
export interface RecordedToolOutcome {
  step: number;
  toolCallId: string;
  name: string;
  content: string;
  ok: boolean;
  errorCode?: string;
  done?: boolean;
}

/** The recorded steps of one runtime's agent loop in one execution, any attempt: the first record per step / call wins. */
export interface AgentLoopRecord {
  replies: Map<number, RecordedReply>;
  /** Keyed by `${step}/${toolCallId}`. */
  outcomes: Map<string, RecordedToolOutcome>;
  /**
   * What each step's recorded call added to the run's token-budget ledger (`llm.calling@1`
   * budget.added), by step, the first call per step (a fallback adds the same); `runLedger` folds it.
   */
  ledgers?: Map<number, LedgerEntry[]>;
}

export const outcomeKey = (step: number, toolCallId: string) => `${step}/${toolCallId}`;

export const runtimeKey = (pluginId: string, runtimeId: string) => `${pluginId}/${runtimeId}`;

/** The events that change what a runtime's history read returns (the turn_messages and summaries projections). */
const HISTORY_EVENTS: ReadonlySet<EventType> = new Set([...turnMessagesProjection.handles, ...summariesProjection.handles]);

/**
 * The execution journal of one session, rebuilt from its events (a suffix of the stream is
 * enough when it starts at or before the earliest pending input).
 */
export class SessionJournal {
  version = 0;
  /**
   * Stream version of the session's last event that changes its plugin data (0: none): a plugin-data
   * event, or one that folds the story again (`changesPath`: a failure, a cancel, a revert... drops
   * or restores a turn's rows without a plugin-data event). Moves whenever plugin data changes.
   */
  pluginDataVersion = 0;
  /** Stream version of the session's last event that changes its history views (0: none in this journal): a commit, a supersede, a compaction. */
  historyVersion = 0;
  /** The plugin-data events the journal holds, in stream order (`pluginDataSince`). */
  private pluginDataEvents: StoredEvent[] = [];
  /** Stream version of the journal's last event that folds the story again (`changesPath`; 0: none). */
  private pathChangeVersion = 0;
  private executions = new Map<string, ExecutionJournal>();
  private order: string[] = [];
  /** During `tentatively`: the executions the pass copied already (its events change the copies, never the journal's). */
  private copied: Set<string> | undefined;
  /** The stream version the journal starts after (its first event is the next). */
  private readonly startVersion: number;
  /** The player's preferences before the journal's first event, when known: a journal from the stream's start knows them (none). */
  private preferencesAtStart: SessionPreferences | undefined;
  /** The `session.preferences-changed@1` events applied, in stream order. */
  private preferenceChanges: { version: number; preferences: SessionPreferences }[] = [];

  constructor(events: readonly StoredEvent[] = [], startVersion = 0) {
    this.version = startVersion;
    this.startVersion = startVersion;
    this.preferencesAtStart = startVersion === 0 ? NO_PREFERENCES : undefined;
    this.apply(events);
  }

  /**
   * What the log held before the journal's first event: its last `session.preferences-changed@1`
   * before it (null: none), read with the suffix (`loadSessionJournal` with `preferences`).
   */
  knowPreferencesAtStart(last: EventData<'session.preferences-changed@1'> | null): void {
    this.preferencesAtStart = last?.preferences ?? NO_PREFERENCES;
  }

  /**
   * The player's preferences as the log held them before `version` (the last change before it),
   * from this journal alone; undefined when it cannot tell: `version` outside the journal, or no
   * change in it before `version` and its start's not known.
   */
  preferencesBefore(version: number): SessionPreferences | undefined {
    if (version <= this.startVersion || version > this.version + 1) return undefined;
    let preferences = this.preferencesAtStart;
    for (const change of this.preferenceChanges) if (change.version < version) preferences = change.preferences;
    return preferences;
  }

  apply(events: readonly StoredEvent[]): void {
    for (const event of events) {
      if (event.streamVersion !== this.version + 1) {
        throw new JournalGapError(this.version, event.streamVersion);
      }
      this.version = event.streamVersion;
      if (event.type === 'plugin-data.written@1' || event.type === 'plugin-data.deleted@1') {
        this.pluginDataVersion = event.streamVersion;
        this.pluginDataEvents.push(event);
      } else if (changesPath(event)) {
        this.pluginDataVersion = this.pathChangeVersion = event.streamVersion;
      }
      if (HISTORY_EVENTS.has(event.type)) this.historyVersion = event.streamVersion;
      if (event.type === 'session.preferences-changed@1') this.preferenceChanges.push({ version: event.streamVersion, preferences: event.data.preferences });
      this.applyOne(event);
    }
  }

  /**
   * Runs `pass` (synchronous: nothing else reads the journal meanwhile) on the journal as it would
   * stand with the events `pass` applies (`apply`, as `apply` takes them: the next stream versions),
   * then puts the journal back as it was: the executions those events change are copies made for the
   * pass, so an execution read before it (or held across it) is never changed by them. For builds
   * that must each see the events of the builds before them as recorded before any is stored.
   */
  tentatively<T>(pass: (apply: (events: readonly StoredEvent[]) => void) => T): T {
    if (this.copied) throw new Error('SessionJournal.tentatively: a pass is running already');
    const saved = {
      version: this.version,
      pluginDataVersion: this.pluginDataVersion,
      historyVersion: this.historyVersion,
      executions: this.executions,
      order: this.order,
      preferenceChanges: this.preferenceChanges,
      pluginDataEvents: this.pluginDataEvents,
      pathChangeVersion: this.pathChangeVersion,
    };
    this.executions = new Map(saved.executions);
    this.pluginDataEvents = [...saved.pluginDataEvents];
    this.order = [...saved.order];
    this.preferenceChanges = [...saved.preferenceChanges];
    this.copied = new Set();
    try {
      return pass((events) => this.apply(events));
    } finally {
      this.copied = undefined;
      Object.assign(this, saved);
    }
  }

  /**
   * The plugin-data events past `version` (a `pluginDataVersion` this journal was at; 0: its start),
   * in stream order: what moved the session's plugin data since, folded one by one as the
   * `plugin_data` projection applies them as they are appended. Undefined when that does not tell
   * (`version` before the journal's start, or an event that folds the story again since: the
   * projection then folds the session again from the log).
   */
  pluginDataSince(version: number): readonly StoredEvent[] | undefined {
    if ((version !== 0 && version < this.startVersion) || version > this.version || this.pathChangeVersion > version) return undefined;
    return this.pluginDataEvents.filter((e) => e.streamVersion > version);
  }

  get(executionId: string): ExecutionJournal | undefined {
    return this.executions.get(executionId);
  }

  /** Executions not ended (neither committed, failed nor cancelled), in submission order. */
  pending(): ExecutionJournal[] {
    return this.order.map((id) => this.executions.get(id)!).filter((e) => e.status === 'pending');
  }

  /** In a `tentatively` pass: the execution `event` names is replaced by a copy of its own before the event changes it. */
  private copyForPass(event: StoredEvent) {
    const id = (event.data as { executionId?: unknown }).executionId;
    if (typeof id !== 'string' || this.copied!.has(id)) return;
    this.copied!.add(id);
    const execution = this.executions.get(id);
    if (execution) this.executions.set(id, deepCopy(execution));
  }

  private agentLoop(executionId: string, key: string): AgentLoopRecord | undefined {
    const execution = this.executions.get(executionId);
    if (!execution) return undefined;
    let loop = execution.agentLoops.get(key);
    if (!loop) execution.agentLoops.set(key, (loop = { replies: new Map(), outcomes: new Map() }));
    return loop;
  }

  private applyOne(event: StoredEvent) {
    if (this.copied) this.copyForPass(event);
    switch (event.type) {
      case 'player-input.submitted@1': {
        const d = event.data;
        this.executions.set(d.executionId, {
          ...pendingExecution({ ...d, input: { messageId: d.messageId, text: d.text }, submittedVersion: event.streamVersion }, d.formValues ?? null),
          ...(d.retryFromTurnId !== undefined ? { retryFromTurnId: d.retryFromTurnId, alternativeOf: d.alternativeOf ?? d.retryFromTurnId } : {}),
        });
        this.order.push(d.executionId);
        return;
      }
      case 'runtime.activated@1': {
        const d = event.data;
        const ids = { pluginId: d.pluginId, runtimeId: d.runtimeId, payload: d.payload };
        this.executions.set(d.executionId, {
          ...pendingExecution({ ...d, input: { messageId: d.messageId, text: '' }, submittedVersion: event.streamVersion }, null),
          activation: d.kind === 'event' ? { kind: 'event', topic: d.topic ?? '', ...ids } : { kind: 'manual', ...ids },
        });
        this.order.push(d.executionId);
        return;
      }
      case 'execution.started@1': {
        const e = this.executions.get(event.data.executionId);
        if (e && event.data.attempt >= e.latestAttempt) {
          e.latestAttempt = event.data.attempt;
          e.latestClaimant = event.data.claimant;
        }
        if (e && e.generation === undefined && event.data.generation !== undefined) e.generation = event.data.generation;
        return;
      }
      case 'runtime.output.produced@1': {
        const d = event.data;
        this.executions.get(d.executionId)?.outputs.set(runtimeKey(d.pluginId, d.runtimeId), {
          stage: d.stage,
          pluginId: d.pluginId,
          runtimeId: d.runtimeId,
          outputKind: d.outputKind,
          messageId: d.messageId,
          text: d.text,
          attempt: d.attempt,
          midTurnBefore: this.executions.get(d.executionId)?.midTurnMessages.length ?? 0,
        });
        return;
      }
      case 'player-input.mid-turn@1': {
        const d = event.data;
        this.executions.get(d.executionId)?.midTurnMessages.push({ messageId: d.messageId, text: d.text });
        return;
      }
      case 'extension.resolved@1': {
        const d = event.data;
        const results = this.executions.get(d.executionId)?.extensionResults;
        const key = resultKey(d.point, d.pluginId, d.extensionId, d.inputHash);
        if (results && !results.has(key)) results.set(key, d.result);
        return;
      }
      case 'llm.calling@1': {
        const d = event.data;
        if (d.budget === undefined) return; // a call without a budget adds nothing to the ledger
        const loop = this.agentLoop(d.executionId, runtimeKey(d.pluginId, d.runtimeId));
        const step = d.step ?? 1;
        if (!loop) return;
        loop.ledgers ??= new Map();
        if (!loop.ledgers.has(step)) loop.ledgers.set(step, d.budget.added);
        return;
      }
      case 'llm.responded@1': {
        const d = event.data;
        if (d.reply === undefined) return; // a log before the agent loop: nothing to resume from
        const loop = this.agentLoop(d.executionId, runtimeKey(d.pluginId, d.runtimeId));
        const step = d.step ?? 1;
        if (loop && !loop.replies.has(step)) loop.replies.set(step, { step, reply: d.reply });
        return;
      }
      case 'tool.completed@1': {
        const d = event.data;
        const loop = this.agentLoop(d.executionId, runtimeKey(d.pluginId, d.runtimeId));
        const key = outcomeKey(d.step, d.toolCallId);
        if (!loop || loop.outcomes.has(key)) return;
        loop.outcomes.set(key, {
          step: d.step,
          toolCallId: d.toolCallId,
          name: d.name,
          content: d.content,
          ok: d.ok,
          ...(d.errorCode !== undefined ? { errorCode: d.errorCode } : {}),
          ...(d.done ? { done: true } : {}),
        });
        for (const topic of d.emittedTopics ?? []) this.executions.get(d.executionId)?.emittedTopics.add(topic);
        return;
      }
      case 'asset.generated@1': {
        const e = this.executions.get(event.data.executionId);
        if (e && !e.assets.some((a) => a.media.mediaId === event.data.media.mediaId)) e.assets.push(event.data);
        return;
      }
      case 'turn.committed@1': {
        const e = this.executions.get(event.data.executionId);
        if (e) e.status = 'committed';
        return;
      }
      case 'execution.failed@1': {
        const e = this.executions.get(event.data.executionId);
        if (e && e.status === 'pending') e.status = 'failed';
        return;
      }
      case 'execution.cancelled@1': {
        const e = this.executions.get(event.data.executionId);
        if (e && e.status === 'pending') e.status = 'cancelled';
        return;
      }
      case 'execution.suspended@1': {
        const d = event.data;
        const e = this.executions.get(d.executionId);
        if (!e || e.suspensions.some((s) => s.runtimeId === d.runtimeId && s.pluginId === d.pluginId && s.step === d.step && s.toolCallId === d.toolCallId))
          return;
        e.suspensions.push({
          pluginId: d.pluginId,
          runtimeId: d.runtimeId,
          step: d.step,
          toolCallId: d.toolCallId,
          name: d.name,
          currentTurnUserMessages: d.currentTurnUserMessages.map((m) => ({ ...m })),
          inputs: d.inputs.map((i) => structuredClone(i) as InputSlot),
          waitingFor: d.waitingFor,
        });
        return;
      }
      case 'execution.resumed@1': {
        const d = event.data;
        const e = this.executions.get(d.executionId);
        const s = e?.suspensions.find(
          (x) => !x.resumed && x.pluginId === d.pluginId && x.runtimeId === d.runtimeId && x.step === d.step && x.toolCallId === d.toolCallId,
        );
        if (s) s.resumed = { resumeId: d.resumeId, payload: d.payload };
        return;
      }
      case 'compaction.barrier-passed@1': {
        const e = this.executions.get(event.data.executionId);
        if (e) e.barrierPassed = true;
        return;
      }
      case 'compaction.summary-requested@1': {
        const calls = this.executions.get(event.data.executionId)?.summaryCalls;
        if (calls && !calls.has(event.data.requestKey)) calls.set(event.data.requestKey, { requestId: event.data.requestId });
        return;
      }
      case 'compaction.summary-responded@1': {
        const d = event.data;
        const call = [...(this.executions.get(d.executionId)?.summaryCalls.values() ?? [])].find((c) => c.requestId === d.requestId);
        if (call && !call.reply) call.reply = { text: d.text, finishReason: d.finishReason };
        return;
      }
      default:
        return;
    }
  }
}

/** The outputs an execution has produced so far, as buildContext takes them (`catalog`: the execution's RuntimeCatalog, for its stage order). */
export function executionOutputs(execution: ExecutionJournal, catalog: { readonly stages: readonly string[] }): ExecutionOutput[] {
  return [...execution.outputs.values()].map((o) => ({
    pluginId: o.pluginId,
    runtimeId: o.runtimeId,
    outputKind: o.outputKind,
    stageIndex: o.stage === null ? null : catalog.stages.indexOf(o.stage),
    text: o.text,
  }));
}

/** A new execution as its input or activation event starts it: pending, nothing produced yet. */
function pendingExecution(
  start: { executionId: string; turnId: string; input: { messageId: string; text: string }; submittedVersion: number },
  lastFormValues: ExecutionJournal['lastFormValues'],
): ExecutionJournal {
  return {
    executionId: start.executionId,
    turnId: start.turnId,
    input: start.input,
    submittedVersion: start.submittedVersion,
    status: 'pending',
    latestAttempt: 0,
    outputs: new Map(),
    extensionResults: new Map(),
    agentLoops: new Map(),
    emittedTopics: new Set(),
    assets: [],
    lastFormValues,
    barrierPassed: false,
    summaryCalls: new Map(),
    suspensions: [],
    midTurnMessages: [],
  };
}
