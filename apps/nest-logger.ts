import type { LoggerService } from '@nestjs/common';
import type { StructuredLogger } from '../libs/engine';

/**
 * Nest's own lines (and `new Logger(...)` in the API) through the engine's logger: the same
 * format, level, redaction and secret scrubbing as every other line. Nest's routine start-up
 * lines (`log`, `verbose`: routes mapped, modules initialised) are debug lines, so at the default
 * level only its warnings and errors show, as before. A small adapter instead of nestjs-pino
 * (5.x needs Node 22; 4.6.x runs on Node 20 with Nest 11): nestjs-pino is built around pino-http's
 * per-request lines (one more dependency, and request objects to redact), while the engine's
 * logger is made before Nest (the composition root, workers, the plugin test harness) and its
 * ids come from the job being run, not from an HTTP request.
 */
export class NestEngineLogger implements LoggerService {
  constructor(private readonly logger: StructuredLogger) {}

  log(message: unknown, ...rest: unknown[]): void {
    this.logger.debug(...line(message, rest));
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.logger.debug(...line(message, rest));
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.logger.debug(...line(message, rest));
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.logger.warn(...line(message, rest));
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.logger.error(...line(message, rest));
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.logger.error(...line(message, rest));
  }
}

/** Nest's arguments (`message, [stack], [context]`) as a message and fields: the last string is the context. */
function line(message: unknown, rest: unknown[]): [string, Record<string, unknown>] {
  const strings = rest.filter((r): r is string => typeof r === 'string');
  const context = strings.length > 0 ? strings[strings.length - 1] : undefined;
  const stack = strings.length > 1 ? strings[0] : undefined;
  const fields: Record<string, unknown> = { component: 'nest', ...(context ? { context } : {}) };
  if (message instanceof Error) return [message.name, { ...fields, err: message }];
  if (stack) fields.stack = stack;
  return [typeof message === 'string' ? message : JSON.stringify(message), fields];
}
