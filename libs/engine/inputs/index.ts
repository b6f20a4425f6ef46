export { resolveInputSlots } from './resolve-input-slots';
export type { ResolveInputSlotsOptions } from './resolve-input-slots';
export { executionRequestInputs, functionInputs, runtimeContinuation } from './execution-inputs';
export { evaluatePointer } from './json-pointer';
export type { PointerResult } from './json-pointer';
export { InputBindingError } from './errors';
