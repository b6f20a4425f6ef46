import { truncateText } from '../../../text';

/** A code for the error that carries no data: PostgreSQL SQLSTATE, engine error code, or the class name. */
export function errorCodeOf(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const code = (error as { code: unknown }).code;
    if (typeof code === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(code)) return code;
  }
  if (error instanceof Error && /^[A-Za-z0-9_]{1,64}$/.test(error.name)) return error.name;
  return 'UNKNOWN';
}

/** One line: the error's class, message and code, at most 500 characters. */
export function describeError(error: unknown): string {
  const message = (error instanceof Error ? `${error.name}: ${error.message}` : String(error)).replace(/\s+/g, ' ').trim();
  const line = `${message} (code ${errorCodeOf(error)})`;
  const short = truncateText(line, 499);
  return short === line ? line : `${short}…`;
}
