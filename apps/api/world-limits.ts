import { WORLD_LIMITS } from '../../libs/plugins-sdk';

/** The body limit of world writes: a document at `WORLD_LIMITS.documentBytes` with room for JSON escapes of its text. */
export const WORLD_BODY_LIMIT_BYTES = 2 * WORLD_LIMITS.documentBytes;

/** The largest file `POST /v1/worlds/import` reads (a card's PNG, a zip of a world folder): 413 above it. */
export const WORLD_IMPORT_LIMIT_BYTES = 16 * 1024 * 1024;
