import { EngineError } from '../errors';
import { ProviderDeadlineError } from '../providers';
export class SessionNotFoundError extends EngineError {
  readonly code = 'SESSION_NOT_FOUND';
  readonly category = 'not-found';
  constructor(readonly sessionId: string) {
    super(`session ${sessionId} not found`);
  }
}

/** A turn job names an execution its session does not have: retrying cannot make it appear. */
export class ExecutionNotFoundError extends EngineError {
  readonly code = 'EXECUTION_NOT_FOUND';
  readonly category = 'not-found';
  constructor(
    readonly executionId: string,
    readonly sessionId: string,
  ) {
    super(`execution ${executionId} not found in session ${sessionId}`);
  }
}

/** A newer attempt of the execution took over, or it already finished: stop without writing. */
export class FencedOutError extends EngineError {
  readonly code = 'FENCED_OUT';
  readonly category = 'conflict';
  constructor(
    readonly executionId: string,
    readonly attempt: number,
  ) {
    super(`execution ${executionId}: attempt ${attempt} is no longer current`);
  }
}

/**
 * This process is stopping and its grace period is over (`COVEL_SHUTDOWN_GRACE_MS`): the job's
 * model call was aborted, nothing of it is recorded, and the job is handed back to the queue
 * (`later`, no attempt spent) to run again elsewhere or at the next start.
 */
export class JobHandedBackError extends EngineError {
  readonly code = 'SHUTTING_DOWN';
  readonly category = 'unavailable';
  constructor(
    readonly executionId: string,
    readonly attempt: number,
  ) {
    super(`execution ${executionId}: attempt ${attempt} handed back, this process is stopping`);
  }
}

/** Events handed to a journal skip a stream version: a bug in the caller's read (broken invariant). */
export class JournalGapError extends EngineError {
  readonly code = 'JOURNAL_GAP';
  readonly category = 'internal';
  constructor(
    readonly atVersion: number,
    readonly gotVersion: number,
  ) {
    super(`journal gap: at version ${atVersion}, got event ${gotVersion}`);
  }
}

/** A plugin's runtime names a stage the engine does not run. */
export class UnknownStageError extends EngineError {
  readonly code = 'PLUGIN_STAGE_UNKNOWN';
  readonly category = 'invalid';
  constructor(
    readonly pluginId: string,
    readonly runtimeId: string,
    readonly stage: string,
  ) {
    super(`plugin ${pluginId}: runtime ${runtimeId} names unknown stage "${stage}"`);
  }
}

/** A runtime job names a runtime the plugin catalog does not have (plugins changed under a running turn). */
export class RuntimeNotFoundError extends EngineError {
  readonly code = 'RUNTIME_NOT_FOUND';
  readonly category = 'not-found';
  constructor(
    readonly pluginId: string,
    readonly runtimeId: string,
  ) {
    super(`runtime ${pluginId}/${runtimeId} is not in the plugin catalog`);
  }
}

/** A recorded `llm.calling` names no known execution of its stream: the log is not as written (broken invariant). */
export class RecordedCallWithoutExecutionError extends EngineError {
  readonly code = 'RECORDED_CALL_WITHOUT_EXECUTION';
  readonly category = 'internal';
  constructor(
    readonly callId: string,
    readonly executionId: string,
  ) {
    super(`call ${callId}: unknown execution ${executionId}`);
  }
}

/** A recorded call's runtime is no longer in the plugin catalog, so its request cannot be rebuilt. */
export class RuntimeNotInCatalogError extends EngineError {
  readonly code = 'RUNTIME_NOT_IN_CATALOG';
  readonly category = 'conflict';
  constructor(
    readonly callId: string,
    readonly pluginId: string,
    readonly runtimeId: string,
  ) {
    super(`call ${callId}: runtime ${pluginId}/${runtimeId} is not in the plugin catalog`);
  }
}

/**
 * A job failure that retrying cannot fix: the input is invalid or what it names does not exist
 * (a non-retryable provider answer is `invalid` too), or a deadline passed (a provider that did not
 * answer within its slot's deadline, a turn past its own: a retry would hold the session again).
 * Queues fail such jobs at once.
 */
export function isPermanentFailure(error: unknown): error is EngineError {
  return (
    error instanceof EngineError &&
    (error.category === 'invalid' || error.category === 'not-found' || error instanceof TurnDeadlineError || error instanceof ProviderDeadlineError)
  );
}

/**
 * The turn ran out of its deadline (`COVEL_TURN_DEADLINE_MS`: the time one job attempt waits on its
 * model, from its first model call, on the worker's clock): its model call is aborted and the turn
 * fails; nothing retries it (a retry would hold the session again), and the session takes its next input.
 */
export class TurnDeadlineError extends EngineError {
  readonly code = 'TURN_DEADLINE';
  readonly category = 'unavailable';
  constructor(
    readonly executionId: string,
    readonly deadlineMs: number,
    detail: string,
  ) {
    super(`execution ${executionId}: the turn did not end within ${deadlineMs} ms (${detail})`);
  }
}

/** A plugin's server entry cannot be used: it does not load, has no `register`, throws, or registers other than it declares. */
export class PluginEntryError extends EngineError {
  readonly code = 'PLUGIN_ENTRY_INVALID';
  readonly category = 'invalid';
  constructor(
    readonly pluginId: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`plugin ${pluginId}: ${detail}`, options);
  }
}

/** How a plugin handler or hook failed a runtime. */
export type PluginHandlerFailure = 'threw' | 'timed-out' | 'invalid-result';

const HANDLER_FAILURE_CODES = {
  threw: 'PLUGIN_HANDLER_THREW',
  'timed-out': 'PLUGIN_HANDLER_TIMEOUT',
  'invalid-result': 'PLUGIN_RESULT_INVALID',
} as const;

/**
 * An extension handler or hook threw, did not answer in time, or returned a value that fails its
 * schema: that runtime's execution fails (permanent: retrying runs the same code on the same input).
 */
export class PluginHandlerError extends EngineError {
  readonly code: (typeof HANDLER_FAILURE_CODES)[PluginHandlerFailure];
  readonly category = 'invalid';
  constructor(
    readonly failure: PluginHandlerFailure,
    readonly pluginId: string,
    readonly point: string,
    readonly extensionId: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`plugin ${pluginId}: ${point} "${extensionId}" ${detail}`, options);
    this.code = HANDLER_FAILURE_CODES[failure];
  }
}

/** Which handler result of which execution an error is about. */
export interface ExtensionResultRef {
  executionId: string;
  pluginId: string;
  point: string;
  extensionId: string;
}

abstract class ExtensionResultError extends EngineError {
  readonly category = 'conflict';
  readonly executionId: string;
  readonly pluginId: string;
  readonly point: string;
  readonly extensionId: string;
  constructor(ref: ExtensionResultRef, describe: (what: string) => string) {
    super(`execution ${ref.executionId}: ${describe(`plugin ${ref.pluginId}: ${ref.point} "${ref.extensionId}"`)}`);
    ({ executionId: this.executionId, pluginId: this.pluginId, point: this.point, extensionId: this.extensionId } = ref);
  }
}

/** A rebuild needs a handler result the log does not hold (handlers are never run again). */
export class RecordedExtensionMissingError extends ExtensionResultError {
  readonly code = 'RECORDED_EXTENSION_MISSING';
  constructor(ref: ExtensionResultRef) {
    super(ref, (what) => `no recorded result of ${what} for this input`);
  }
}

/**
 * Another job of the execution recorded a different result for the same handler input first (two
 * copies of a runtime job at once): this job's request is not sent; tried again, it reuses that result.
 */
export class ExtensionResultRaceError extends ExtensionResultError {
  readonly code = 'EXTENSION_RESULT_RACE';
  constructor(ref: ExtensionResultRef) {
    super(ref, (what) => `${what} was resolved to another result first; try again`);
  }
}

/** A model request was asked for a `type: function` runtime (it runs the plugin's `api.runFunction` handler, not a model). */
export class FunctionRuntimeHasNoModelCallError extends EngineError {
  readonly code = 'FUNCTION_RUNTIME_HAS_NO_MODEL_CALL';
  /** Permanent: a function runtime runs its function (the runtime step), never a model request. */
  readonly category = 'invalid';
  constructor(
    readonly pluginId: string,
    readonly runtimeId: string,
  ) {
    super(`plugin ${pluginId}: runtime ${runtimeId} is a function runtime: it runs its api.runFunction handler and makes no model call`);
  }
}

/** A plugin generated an asset where no MediaStore is wired (a test's deps): its bytes have nowhere to go. */
export class NoMediaStoreError extends EngineError {
  readonly code = 'NO_MEDIA_STORE';
  readonly category = 'internal';
  constructor(readonly pluginId: string) {
    super(`plugin ${pluginId} generated an asset, but this engine has no MediaStore`);
  }
}

/**
 * The history a runtime job read changed before its model call was recorded (a compaction barrier
 * that the job's windowed agent did not wait for ended meanwhile): the request would not be what
 * the log rebuilds, so it is not sent; the job is tried again and reads the history anew.
 */
export class HistoryRaceError extends EngineError {
  readonly code = 'HISTORY_RACE';
  readonly category = 'conflict';
  constructor(
    readonly executionId: string,
    readonly pluginId: string,
    readonly runtimeId: string,
  ) {
    super(`execution ${executionId}: the history changed while runtime ${pluginId}/${runtimeId} read it; try again`);
  }
}
