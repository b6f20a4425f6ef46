/** The data boundary projection (spec §4) for plugin authors; one implementation with the kernel's. */
export { modelFacingJson, isBookkeepingValue, isBookkeepingKey, ModelFacingJsonError, MAX_MODEL_FACING_DEPTH } from '../data-boundary';
