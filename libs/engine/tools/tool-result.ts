import { fixedText } from '../../context';
import type { Locale } from '../../plugins-sdk';
import type { ToolErrorCode, ToolOutcome } from './port';

/** What a successful call did that stands at once (plugin-data writes) or ends the runtime. */
type ImmediateEffects = Partial<Pick<ToolOutcome, 'changes' | 'done'>> & { emissions?: never; assets?: never };

/**
 * Effects that only take hold when the turn ends: emitted events (the runtimes they trigger run
 * after the execution) and generated media (the commit shows them). `locale`: the session's
 * instruction language, for the staged notice.
 */
type StagedEffects = Partial<Pick<ToolOutcome, 'changes' | 'done' | 'emissions' | 'assets'>> & { locale: Locale };

/**
 * The JSON envelope of a tool result (what the model reads): `{ "ok": true, "data": … }` or
 * `{ "ok": false, "error": { "code", "message" } }`. The code is one of `TOOL_ERROR_CODES`;
 * the message is English. Business content in `data` is in the session's language. A call that
 * emitted events or generated media gets `"staged"` too: the framework's notice that those take
 * effect when the turn ends, in the instruction language (spec §6; elision keeps it, spec §5).
 */
export function toolSuccess(data: unknown, effects: ImmediateEffects | StagedEffects = {}): ToolOutcome {
  const emissions = effects.emissions ?? [];
  const assets = effects.assets ?? [];
  const staged = 'locale' in effects && (emissions.length > 0 || assets.length > 0) ? fixedText(effects.locale).toolStaged : undefined;
  return {
    content: JSON.stringify({ ok: true, data: data === undefined ? null : data, ...(staged === undefined ? {} : { staged }) }),
    ok: true,
    changes: effects.changes ?? [],
    emissions,
    ...(effects.done ? { done: true } : {}),
    ...(assets.length > 0 ? { assets } : {}),
  };
}

export function toolError(code: ToolErrorCode, message: string): ToolOutcome {
  return { content: JSON.stringify({ ok: false, error: { code, message } }), ok: false, errorCode: code, changes: [], emissions: [] };
}
