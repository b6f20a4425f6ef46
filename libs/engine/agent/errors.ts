import { EngineError } from '../../errors';

/** Why an agent runtime's loop failed it. */
export const AGENT_FAILURE_CODES = {
  'max-steps': 'AGENT_MAX_STEPS',
  timeout: 'AGENT_TIMEOUT',
  'tool-use-required': 'AGENT_TOOL_USE_REQUIRED',
  'repeated-call': 'AGENT_REPEATED_TOOL_CALL',
  'invalid-output': 'AGENT_OUTPUT_INVALID',
  /** Spec §5 "Still over the limit": the request stayed over the model's input limit; nothing was sent. */
  'context-overflow': 'AGENT_CONTEXT_OVERFLOW',
} as const;
export type AgentFailure = keyof typeof AGENT_FAILURE_CODES;

/**
 * An agent runtime did not complete: the step limit or the deadline was reached, it ended without
 * the tool use it requires, it repeated a call after the nudge, or its output failed the schema
 * after the retry hints (the message keeps the raw output), or its request stayed over the model's
 * input limit after the budget's trimming (the message is the overflow text; nothing was sent). Permanent: the same log fails the same way.
 */
export class AgentLoopError extends EngineError {
  readonly code: (typeof AGENT_FAILURE_CODES)[AgentFailure];
  readonly category = 'invalid';
  readonly failure: AgentFailure;
  constructor(args: { failure: AgentFailure; pluginId: string; runtimeId: string; detail: string }) {
    super(`runtime ${args.pluginId}/${args.runtimeId} ${args.detail}`);
    this.failure = args.failure;
    this.code = AGENT_FAILURE_CODES[args.failure];
  }
}
