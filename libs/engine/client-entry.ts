/**
 * The engine's second public face, for a client of a running engine that must not load the engine
 * (`npm run play`: it starts in a fraction of the engine's load time). What it needs of the engine's
 * settings and limits, through files that load zod and libs/errors, nothing more (the play tests
 * check no database, queue or metrics package is loaded). libs/engine/index.ts exports all of it too.
 */
export { ConfigError } from './config/config-error';
export { loadEngineLocation } from './config/engine-location';
export type { EngineLocationConfig } from './config/engine-location';
export { WORLD_IMPORT_LIMIT_BYTES } from './worlds/import-limit';
