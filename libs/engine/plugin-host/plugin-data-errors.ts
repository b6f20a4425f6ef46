import { EngineError } from '../../errors';

/** How a `type: function` runtime's code failed its runtime. */
export type FunctionRuntimeFailure = 'threw' | 'timed-out' | 'invalid-result' | 'not-registered';

const FUNCTION_FAILURE_CODES = {
  threw: 'PLUGIN_FUNCTION_THREW',
  'timed-out': 'PLUGIN_FUNCTION_TIMEOUT',
  'invalid-result': 'PLUGIN_FUNCTION_RESULT_INVALID',
  'not-registered': 'PLUGIN_FUNCTION_NOT_REGISTERED',
} as const;

/**
 * A function runtime's `api.runFunction` code threw (a refused `ctx.pluginData` write included), did
 * not answer in time, returned a value that is not JSON, or is not registered: that runtime's
 * execution fails, naming plugin and runtime, and none of its writes is stored (permanent: retrying
 * runs the same code on the same input).
 */
export class FunctionRuntimeError extends EngineError {
  readonly code: (typeof FUNCTION_FAILURE_CODES)[FunctionRuntimeFailure];
  readonly category = 'invalid';
  readonly failure: FunctionRuntimeFailure;
  readonly pluginId: string;
  readonly runtimeId: string;
  constructor(args: { failure: FunctionRuntimeFailure; pluginId: string; runtimeId: string; detail: string; cause?: unknown }) {
    super(`plugin ${args.pluginId}: function runtime "${args.runtimeId}" ${args.detail}`, args.cause === undefined ? undefined : { cause: args.cause });
    this.failure = args.failure;
    this.pluginId = args.pluginId;
    this.runtimeId = args.runtimeId;
    this.code = FUNCTION_FAILURE_CODES[args.failure];
  }
}

/** A `ctx.pluginData` call a plugin may not make, or with a namespace, key or value the store refuses. */
export class PluginDataRefusedError extends EngineError {
  readonly code = 'PLUGIN_DATA_REFUSED';
  readonly category = 'invalid';
  constructor(
    readonly pluginId: string,
    detail: string,
  ) {
    super(`plugin ${pluginId}: ctx.pluginData ${detail}`);
  }
}

/**
 * The plugin's data changed between the worker's `io.selfData` read and its `llm.calling` append (a
 * runtime of the same execution running in parallel wrote): the request would not be what the log
 * rebuilds, so it is not sent; the job is tried again and reads the data anew.
 */
export class PluginDataRaceError extends EngineError {
  readonly code = 'PLUGIN_DATA_RACE';
  readonly category = 'conflict';
  constructor(
    readonly executionId: string,
    readonly pluginId: string,
    readonly runtimeId: string,
  ) {
    super(`execution ${executionId}: plugin data changed while runtime ${pluginId}/${runtimeId} read its io.selfData; try again`);
  }
}
