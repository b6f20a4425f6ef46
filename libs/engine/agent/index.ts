export { runAgentLoop, type AgentLoopArgs } from './loop';
export { agentPolicy, type AgentPolicy, DEFAULT_MAX_STEPS, MAX_SCHEMA_RETRIES } from './policy';
export { foldLoop, type LoopNext, type LoopState } from './completion';
export { AgentLoopError, AGENT_FAILURE_CODES } from './errors';
export { NO_TOOLS } from './no-tools';
export { validateOutput } from './output-validation';
