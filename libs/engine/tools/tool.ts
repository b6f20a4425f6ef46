import type { ToolDefinition } from '../../providers';
import type { ToolOutcome, ToolRunContext } from './port';

/** One tool the executor can run: what the model is told, what its arguments must match, and its code. */
export interface Tool {
  definition: ToolDefinition;
  /** The schema the arguments are checked against before `run` (default: the definition's parameters). */
  argumentsSchema?: Record<string, unknown>;
  /** Runs with arguments that passed the schema; answers a JSON error outcome rather than throwing for a bad call. */
  run(args: Record<string, unknown>, context: ToolRunContext): Promise<ToolOutcome>;
}

/** An object schema with no properties: a tool that takes no arguments. */
export const NO_ARGUMENTS = Object.freeze({ type: 'object', properties: {}, additionalProperties: false });

/** Pages of lists in tool results: default and largest page. */
export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 200;
