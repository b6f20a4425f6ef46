import type { ToolErrorCode, ToolOutcome } from './port';

/**
 * The JSON envelope of a tool result (what the model reads): `{ "ok": true, "data": … }` or
 * `{ "ok": false, "error": { "code", "message" } }`. The code is one of `TOOL_ERROR_CODES`;
 * the message is English. Business content in `data` is in the session's language.
 */
export function toolSuccess(data: unknown, effects: Partial<Pick<ToolOutcome, 'changes' | 'emissions' | 'done' | 'assets'>> = {}): ToolOutcome {
  return {
    content: JSON.stringify({ ok: true, data: data === undefined ? null : data }),
    ok: true,
    changes: effects.changes ?? [],
    emissions: effects.emissions ?? [],
    ...(effects.done ? { done: true } : {}),
    ...(effects.assets && effects.assets.length > 0 ? { assets: effects.assets } : {}),
  };
}

export function toolError(code: ToolErrorCode, message: string): ToolOutcome {
  return { content: JSON.stringify({ ok: false, error: { code, message } }), ok: false, errorCode: code, changes: [], emissions: [] };
}
