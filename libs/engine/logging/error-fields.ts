import { EngineError } from '../../errors';

/**
 * An error as log fields. Its message is written only with `text` on (`COVEL_LOG_PLAYER_TEXT`):
 * an error's message may quote what the player or the model wrote (an output that failed its
 * schema, a provider's answer echoing the request, a plugin's own message); the code, category
 * and name say what failed, and the whole message is in the execution's `execution.failed@1`.
 * A Node system error (ECONNREFUSED, ...) keeps its message: it names an address, never text.
 * The stack's frames are kept for errors that are not engine errors (bugs), without the message.
 */
export function errorFields(error: unknown, options: { text: boolean }): Record<string, unknown> {
  if (!(error instanceof Error)) return { type: typeof error, ...(options.text ? { message: String(error) } : {}) };
  const engine = error instanceof EngineError;
  const system = typeof (error as NodeJS.ErrnoException).syscall === 'string';
  const code = engine ? error.code : stringCode(error);
  return {
    name: error.name,
    ...(code ? { code } : {}),
    ...(engine ? { category: error.category } : {}),
    ...(options.text || system ? { message: error.message } : {}),
    ...(!engine && error.stack ? { stack: options.text ? error.stack : frames(error.stack) } : {}),
  };
}

function stringCode(error: Error): string | undefined {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/** The stack without its first lines (the message, which may span lines): only the `at ...` frames. */
function frames(stack: string): string {
  return stack
    .split('\n')
    .filter((line) => /^\s+at /.test(line))
    .join('\n');
}
