/** A runtime's model request: its body rendered from the template, the request built from the catalog and the turn, the runtime's own data. */
export { agentOf, buildRuntimeCall, buildRuntimeRequest, promptCacheKey, requestMessages, runtimeView } from './runtime-request';
export type { AgentStepInputs, RequestBudget, RequestBuildOptions, RuntimeRequest, RuntimeRequestInputs } from './runtime-request';
export { AssemblyReuse, workerAssemblies } from './assembly-reuse';
export { sameData } from './same-data';
export { earlierStructuredOutputs, renderRuntimeBody, turnNumberOf } from './runtime-template';
export type { RuntimeBodySources } from './runtime-template';
export { foldedSelfData, readSelfData, selfDataSources, selfDataUnchanged } from './self-data';
