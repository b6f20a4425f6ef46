import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { devKeyFile, engineUrlFile } from '../dev-tenant';

export const USAGE = [
  'npm run play [-- options]: play a story in this terminal against a running engine.',
  '  --world <id>      the world of new sessions: a built-in world (emberback) or the id of one of yours',
  '                    (default emberback, or COVEL_WORLD; "" for none; /worlds in the player lists them)',
  "  --locale <tag>    the language of new sessions, a BCP 47 tag such as zh-CN or pt-BR (default: the engine's, en)",
  '  --session <id>    continue a session of yours (or COVEL_SESSION_ID)',
  '  --help            this text',
  'The engine: COVEL_URL, else the URL npm start wrote to <data dir>/engine-url, else http://127.0.0.1:$PORT.',
  'The key: COVEL_API_KEY, else the dev key npm start wrote to <data dir>/dev-api-key.',
].join('\n');

/** Where the player connects, and why there. */
export interface EngineLocation {
  url: string;
  /** In words, for messages: `from COVEL_URL`, `from <file>, written by npm start`, … */
  source: string;
}

export interface PlayOptions {
  help: boolean;
  engine: EngineLocation;
  /** Empty when none is found (the caller says how to get one). */
  apiKey: string;
  keyFile: string;
  worldId: string | null;
  locale: string | null;
  sessionId: string | null;
}

export class PlayUsageError extends Error {
  constructor(message: string) {
    super(`${message}\n${USAGE}`);
    this.name = 'PlayUsageError';
  }
}

/**
 * The engine's URL: COVEL_URL overrides; else the URL the embedded engine (`npm start`) wrote next
 * to its dev key, whatever its PORT; else the default address for PORT.
 */
export function locateEngine(env: NodeJS.ProcessEnv, dataDir: string, port: number): EngineLocation {
  const fromEnv = env.COVEL_URL?.trim();
  if (fromEnv) {
    if (!URL.canParse(fromEnv)) throw new PlayUsageError(`COVEL_URL is not a URL: ${JSON.stringify(fromEnv)} (e.g. http://127.0.0.1:3000)`);
    return { url: fromEnv.replace(/\/+$/, ''), source: 'from COVEL_URL' };
  }
  const file = engineUrlFile(dataDir);
  const written = existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
  if (written && URL.canParse(written)) return { url: written.replace(/\/+$/, ''), source: `from ${file}, written by npm start` };
  return { url: `http://127.0.0.1:${port}`, source: `the default for PORT=${port}: there is no ${file}, which npm start writes` };
}

/** The command line (`--world`, `--locale`, `--session`, `--help`) and the environment, read once. */
export function readPlayOptions(args: string[], env: NodeJS.ProcessEnv, config: { dataDir: string; port: number }): PlayOptions {
  let values: { world?: string; locale?: string; session?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: { world: { type: 'string' }, locale: { type: 'string' }, session: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    }));
  } catch (error) {
    throw new PlayUsageError(error instanceof Error ? error.message : String(error));
  }
  const keyFile = devKeyFile(config.dataDir);
  const world = values.world ?? env.COVEL_WORLD ?? 'emberback';
  const locale = values.locale?.trim();
  if (values.locale !== undefined && !locale) throw new PlayUsageError('--locale needs a language tag, e.g. --locale zh-CN');
  return {
    help: values.help ?? false,
    engine: locateEngine(env, config.dataDir, config.port),
    apiKey: env.COVEL_API_KEY ?? (existsSync(keyFile) ? readFileSync(keyFile, 'utf8').trim() : ''),
    keyFile,
    worldId: world.trim() || null,
    locale: locale || null,
    sessionId: values.session?.trim() || env.COVEL_SESSION_ID || null,
  };
}
