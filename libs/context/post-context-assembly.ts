import { z } from 'zod';
import { stripCacheBreaks } from './cache-boundaries';
import { traceOrigins } from './message-origins';
import type { ContextMessage, HookSources, PostContextAssemblyHook } from './types';
import { EngineError } from '../errors';

const HookResult = z
  .object({
    systemPrompt: z.string().optional(),
    messages: z
      .array(
        z.object({
          role: z.enum(['system', 'user', 'assistant']),
          content: z.string(),
          images: z.array(z.object({ mediaId: z.string(), description: z.string() })).optional(),
        }),
      )
      .optional(),
  })
  .nullish();

/** A hook returned something that is not `{ systemPrompt?, messages? }`. */
export class HookResultError extends EngineError {
  readonly code = 'HOOK_RESULT_INVALID';
  readonly category = 'invalid';
  constructor(
    readonly hookIndex: number,
    override readonly issues: { path: string; message: string }[],
  ) {
    super(`PostContextAssembly hook #${hookIndex} returned an invalid result: ${issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ')}`);
  }
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}

/**
 * Spec §3: hooks may rewrite systemPrompt and messages. The framework head is put back at the
 * front when a returned systemPrompt does not start with it; the read-only sources are frozen
 * copies and anything else a hook returns (sources, frameworkHead) is ignored. `origins` says,
 * for each resulting message, which starting message it is (null: added by a hook), through
 * every hook in turn (see {@link traceOrigins}).
 */
export function applyPostContextAssembly(
  hooks: readonly PostContextAssemblyHook[],
  start: { systemPrompt: string; messages: ContextMessage[] },
  sources: HookSources,
  frameworkHead: string,
): { systemPrompt: string; messages: ContextMessage[]; origins: (number | null)[] } {
  let { systemPrompt, messages } = start;
  let origins: (number | null)[] = messages.map((_, i) => i);
  const plainHead = stripCacheBreaks(frameworkHead);
  const frozenSources = deepFreeze(structuredClone(sources));
  hooks.forEach((hook, index) => {
    const given = messages.map((m) => ({ ...m }));
    const raw = hook({ systemPrompt, messages: given, sources: frozenSources });
    const parsed = HookResult.safeParse(raw);
    if (!parsed.success)
      throw new HookResultError(
        index,
        parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
      );
    if (parsed.data?.systemPrompt !== undefined) {
      const returned = parsed.data.systemPrompt;
      systemPrompt = stripCacheBreaks(returned).startsWith(plainHead) ? returned : `${frameworkHead}\n\n${returned}`;
    }
    if (parsed.data?.messages !== undefined) {
      const returnedRaw = (raw as { messages: unknown[] }).messages;
      const from = traceOrigins({ before: messages, given, returnedRaw, returned: parsed.data.messages });
      origins = from.map((j) => (j === null ? null : origins[j]));
      messages = parsed.data.messages;
    }
  });
  return { systemPrompt, messages, origins };
}
