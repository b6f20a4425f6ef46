export { resolveInputSlots } from './resolve-input-slots';
export type { ResolveInputSlotsOptions } from './resolve-input-slots';
export { executionRequestInputs, functionInputs, runtimeContinuation } from './execution-inputs';
export { InputBindingError } from './errors';
export { resolveRuntimeExports } from './runtime-exports';
export type { ResolveRuntimeExportsOptions } from './runtime-exports';
