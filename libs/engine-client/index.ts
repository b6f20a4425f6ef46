/**
 * What a client of a running engine needs of the engine's settings and limits, without loading the
 * engine (`npm run play`: it starts in a fraction of the engine's load time): where an engine is
 * (`loadEngineLocation`: `PORT` and `COVEL_DATA_DIR` alone, validated as the engine validates them),
 * the error a bad setting gives (`ConfigError`) and the largest world file an engine imports. It
 * loads zod and `libs/errors`, nothing more (the play tests check that no database, queue or metrics
 * package is loaded). The engine reads these same schemas and exports them too (libs/engine).
 */
export { ConfigError, configErrorOf } from './config-error';
export { dataDirOf, EngineLocationEnv, loadEngineLocation } from './engine-location';
export type { EngineLocationConfig } from './engine-location';
export { WORLD_IMPORT_LIMIT_BYTES } from './import-limit';
