import {
  type AssembledContext,
  type BuildContextParams,
  type ExtensionSegment,
  type HistoryMessage,
  type PostContextAssemblyHook,
  type PostContextAssemblyPayload,
  withPostContextAssembly,
} from '../../context';
import type { ReturnedSegment } from '../../plugins-sdk';
import type { ChatMessage } from '../../providers';
import type { HookInput } from './invoke';
import type { ExtensionRegistry } from './registry';
import { type ExtensionResolver, resolveShared } from './resolver';

/** The plugins' part of one runtime's request: what is registered, and how a result is obtained. */
export interface RequestPlugins {
  registry: ExtensionRegistry;
  resolver: ExtensionResolver;
}

type RuntimeIds = HookInput['runtime'];

/**
 * Spec §1 step 2: `prompt.history-transform@1` providers in turn, each on the previous one's
 * result (a copy: the messages read from the store are never changed, nor scheduling counts).
 */
export async function transformHistory(plugins: RequestPlugins, history: readonly HistoryMessage[]): Promise<readonly HistoryMessage[]> {
  let messages = history;
  for (const provider of plugins.registry.providers('prompt.history-transform@1')) {
    messages = (await plugins.resolver.resolve(provider, { messages })) as HistoryMessage[];
  }
  return messages;
}

/**
 * Spec §3 "Dynamic content": every `prompt.segment@1` provider's segments, with the provider's
 * plugin id set by the host. The input is the same for every runtime of an execution.
 */
export async function dynamicSegments(plugins: RequestPlugins, playerInput: { text: string }): Promise<ExtensionSegment[]> {
  const out: ExtensionSegment[] = [];
  for (const provider of plugins.registry.providers('prompt.segment@1')) {
    // read-only: each field is copied into the segment below
    const returned = (await resolveShared(plugins.resolver, provider, { playerInput: { text: playerInput.text } })) as Required<
      Omit<ReturnedSegment, 'providerPluginId'>
    >[];
    for (const s of returned) {
      out.push({
        id: s.id,
        providerPluginId: provider.pluginId,
        content: s.content,
        position: s.position,
        volatility: s.volatility,
        role: s.role,
        order: s.order,
        ...(s.audience !== undefined ? { audience: s.audience } : {}),
      });
    }
  }
  return out;
}

/**
 * Spec §1 step 6: the `PostContextAssembly` hooks, as buildContext hooks returning each hook's
 * resolved (recorded) result. Hooks may be async and buildContext runs its hooks synchronously, so
 * hook n's payload is captured from `assembled` (buildContext's answer for `params` without hooks)
 * with hooks 0..n-1 applied, then resolved; the context is not assembled again for each hook.
 */
export async function postContextHooks(
  plugins: RequestPlugins,
  params: BuildContextParams,
  assembled: AssembledContext,
  runtime: RuntimeIds,
): Promise<PostContextAssemblyHook[]> {
  const resolved: PostContextAssemblyHook[] = [];
  for (const hook of plugins.registry.hooksOf('PostContextAssembly', runtime)) {
    let payload: PostContextAssemblyPayload | undefined;
    const capture: PostContextAssemblyHook = (p) => {
      payload = p;
      return undefined;
    };
    withPostContextAssembly(assembled, { ...params, postContextAssembly: [...resolved, capture] });
    const result = await plugins.resolver.resolve(hook, { runtime, payload } satisfies HookInput);
    resolved.push(() => structuredClone(result));
  }
  return resolved;
}

/** `PreLLMCall`: each hook may replace the request's messages (system first); the model and settings stay. */
export async function preLlmCall(plugins: RequestPlugins, runtime: RuntimeIds, model: string, messages: ChatMessage[]): Promise<ChatMessage[]> {
  let current = messages;
  for (const hook of plugins.registry.hooksOf('PreLLMCall', runtime)) {
    const result = (await plugins.resolver.resolve(hook, { runtime, payload: { model, messages: current } } satisfies HookInput)) as {
      messages?: ChatMessage[];
    } | null;
    if (result?.messages) current = result.messages;
  }
  return current;
}
