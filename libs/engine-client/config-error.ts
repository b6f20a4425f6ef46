import { EngineError } from '../errors';

/** An environment the engine (or a client reading its settings: `npm run play`) cannot run with: each variable and what is wrong with it. */
export class ConfigError extends EngineError {
  readonly code = 'CONFIG_INVALID';
  readonly category = 'invalid';
  constructor(issues: { path: string; message: string }[]) {
    super(`bad environment: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`);
  }
}

/** A zod parse's issues as a `ConfigError` (each named by its variable). */
export const configErrorOf = (issues: readonly { path: readonly PropertyKey[]; message: string }[]): ConfigError =>
  new ConfigError(issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message })));
