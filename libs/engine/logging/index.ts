export { createLogger, LOG_FORMATS, LOG_LEVELS } from './create-logger';
export type { CreateLoggerOptions, LogDestination, LogFormat, LogLevel, LogSettings } from './create-logger';
export { errorFields } from './error-fields';
export { REDACTED, redactPaths, secretValues } from './redaction';
export { addToLogScope, logScope, withLogScope } from './scope';
export { jobLogFields } from './job-fields';
