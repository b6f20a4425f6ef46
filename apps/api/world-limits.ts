import { WORLD_IMPORT_LIMIT_BYTES } from '../../libs/engine';
import { WORLD_LIMITS } from '../../libs/plugins-sdk';

/** The body limit of world writes: a document at `WORLD_LIMITS.documentBytes` with room for JSON escapes of its text. */
export const WORLD_BODY_LIMIT_BYTES = 2 * WORLD_LIMITS.documentBytes;

/** The largest file `POST /v1/worlds/import` reads (the engine's `WORLD_IMPORT_LIMIT_BYTES`): 413 above it. */
export { WORLD_IMPORT_LIMIT_BYTES };
