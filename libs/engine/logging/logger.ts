/**
 * Structured fields of a log line (ids, counts, `err`). Never player text or model text: a field
 * named like text (`text`, `input`, `reply`, `content`, ...) is redacted by the engine's logger
 * unless `COVEL_LOG_PLAYER_TEXT` is on, and an `err` is written without its message then.
 */
export type LogFields = Readonly<Record<string, unknown>>;

/**
 * Where the engine writes its operational lines (one line per event worth telling). A plain
 * `{ log, warn, error }` object of string-only functions is a Logger (tests, tools); the engine's
 * own (`createLogger`) also takes fields, has `debug` and makes child loggers.
 */
export interface Logger {
  log(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  debug?(message: string, fields?: LogFields): void;
  /** A logger whose every line carries `bindings` too. */
  child?(bindings: LogFields): Logger;
}

/** A Logger with every method: what `structured` and the engine's own logger give. */
export interface StructuredLogger extends Logger {
  debug(message: string, fields?: LogFields): void;
  child(bindings: LogFields): StructuredLogger;
}

/**
 * Any Logger as a StructuredLogger: the engine's own is returned as it is; a plain one gets a
 * `debug` that drops its lines and `child` loggers that pass the bindings on as fields (which a
 * string-only logger ignores).
 */
export function structured(logger: Logger): StructuredLogger {
  if (isStructured(logger)) return logger;
  return withBindings(logger, {});
}

function isStructured(logger: Logger): logger is StructuredLogger {
  return typeof logger.child === 'function' && typeof logger.debug === 'function';
}

function withBindings(plain: Logger, bindings: LogFields): StructuredLogger {
  const fields = (extra: LogFields | undefined): LogFields | undefined => (Object.keys(bindings).length === 0 ? extra : { ...bindings, ...extra });
  return {
    log: (m, f) => plain.log(m, fields(f)),
    warn: (m, f) => plain.warn(m, fields(f)),
    error: (m, f) => plain.error(m, fields(f)),
    debug: (m, f) => plain.debug?.(m, fields(f)),
    child: (more) => withBindings(plain, { ...bindings, ...more }),
  };
}
