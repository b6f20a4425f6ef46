import { join, resolve } from 'node:path';
import { z } from 'zod';
import { configErrorOf } from './config-error';

/**
 * The settings that say where an engine is: its port and its data directory (where `npm start`
 * writes its URL and dev key). Part of `EngineEnv`, and all a client on the same machine reads of
 * the engine's settings (`npm run play`): kept apart so that client loads zod and no more of the engine.
 */
export const EngineLocationEnv = {
  PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65535)
    .default(3000)
    .meta({ description: "The HTTP API's port (also `/metrics` for the operator's key, `/inspector`, `/docs`); 0 picks a free one." }),
  COVEL_DATA_DIR: z
    .string()
    .optional()
    .meta({ description: 'Embedded data (PGlite, the dev key file) and its lock `pglite.lock`; default `.covel/` in the repository.' }),
};

const repoRoot = resolve(__dirname, '..', '..');

/** `COVEL_DATA_DIR` as a folder: resolved from the current one, `.covel/` in the repository when unset. */
export const dataDirOf = (setting: string | undefined): string => resolve(setting ?? join(repoRoot, '.covel'));

/** Where the engine is, as the engine reads it. */
export interface EngineLocationConfig {
  port: number;
  dataDir: string;
}

/**
 * `PORT` and `COVEL_DATA_DIR` validated as `loadConfig` validates them (the same `ConfigError`,
 * `bad environment: PORT: ...`), the engine's other settings not read: a client does not stop on one
 * it does not use.
 */
export function loadEngineLocation(env: NodeJS.ProcessEnv = process.env): EngineLocationConfig {
  const parsed = z.object(EngineLocationEnv).safeParse(env);
  if (!parsed.success) throw configErrorOf(parsed.error.issues);
  return { port: parsed.data.PORT, dataDir: dataDirOf(parsed.data.COVEL_DATA_DIR) };
}
