import type pino from 'pino';
import type { LogFields, StructuredLogger } from './logger';
import { errorFields } from './error-fields';
import { isWarningOrWorse, prettyLine } from './pretty';
import { REDACTED, redactPaths, secretScrubber } from './redaction';
import { activeTraceIds } from '../../telemetry';
import { logScope } from './scope';

type PinoModule = typeof pino;

export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The log settings of a process (`COVEL_LOG_FORMAT`, `COVEL_LOG_LEVEL`, `COVEL_LOG_PLAYER_TEXT`). */
export interface LogSettings {
  format: LogFormat;
  level: LogLevel;
  /** Debugging only: log player and model text (text fields, error messages). Off by default. */
  playerText: boolean;
}

/** Where lines go: each `write` is one whole line (JSON, or the readable format), newline-terminated. */
export interface LogDestination {
  write(line: string): void;
}

export interface CreateLoggerOptions extends LogSettings {
  /** Values no line may contain, whatever logged them (`secretValues(env)`). */
  secrets?: readonly string[];
  /** Default: standard output (readable: warnings and errors to standard error). */
  destination?: LogDestination;
}

/**
 * The engine's logger, on pino: JSON lines (`json`) or readable lines (`pretty`), written
 * synchronously in-process. Every line carries the fields of the job it is logged in
 * (`withLogScope`: tenant, session, execution, attempt, runtime, call ids); secrets are redacted
 * by field name and scrubbed by value; text fields and error messages only with `playerText`.
 */
export function createLogger(options: CreateLoggerOptions): StructuredLogger {
  const pino = loadPino();
  const scrub = secretScrubber(options.secrets ?? []);
  const text = options.playerText;
  const serializeError = (error: unknown) => errorFields(error, { text });
  const out = options.destination;
  const stream: LogDestination =
    options.format === 'pretty'
      ? { write: (line) => (out ?? (isWarningOrWorse(line) ? process.stderr : process.stdout)).write(prettyLine(scrub(line))) }
      : out
        ? { write: (line) => out.write(scrub(line)) }
        : stdoutJson(pino, scrub);
  const root = pino(
    {
      level: options.level,
      formatters: { level: (label) => ({ level: label }) },
      timestamp: options.format === 'pretty' ? pino.stdTimeFunctions.epochTime : pino.stdTimeFunctions.isoTime,
      mixin: () => ({ ...logScope(), ...activeTraceIds() }),
      serializers: { err: serializeError, error: serializeError },
      redact: { paths: redactPaths({ text }), censor: REDACTED },
    },
    stream,
  );
  return wrap(root);
}

/**
 * pino, required when a logger is made rather than at the top: a process or test that gives the
 * engine its own logger (every engine test file) never needs it.
 */
function loadPino(): PinoModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('pino') as PinoModule;
}

function stdoutJson(pino: PinoModule, scrub: (line: string) => string): LogDestination {
  const stdout = pino.destination({ dest: 1, sync: true });
  return { write: (line) => stdout.write(scrub(line)) };
}

function wrap(logger: pino.Logger): StructuredLogger {
  const at =
    (level: 'info' | 'warn' | 'error' | 'debug') =>
    (message: string, fields?: LogFields): void => {
      if (fields) logger[level]({ ...fields }, message);
      else logger[level](message);
    };
  return { log: at('info'), warn: at('warn'), error: at('error'), debug: at('debug'), child: (bindings) => wrap(logger.child({ ...bindings })) };
}
