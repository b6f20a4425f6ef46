import { type ExtensionSegment, type MessageSectionName, type Placement, placeSegments, stripCacheBreaks, type SystemSectionName } from '../context';
import { type RebuiltCall, type RuntimeRequest, type RuntimeRequestInputs, runtimeView } from '../engine';
import type { EventData } from '../events';

/** A segment that reached the runtime, where it was placed, and which plugin gave it (set by the host). */
export interface SegmentView extends ExtensionSegment {
  placement: Placement;
}

export interface MessageView {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** The request section the message belongs to (`system`, `history`, `turn-context`, …); null when a PreLLMCall hook changed the message count. */
  section: 'system' | MessageSectionName | null;
}

/**
 * One model request of a runtime, as an author asserts on it. `raw` and `body` are exactly what
 * the log recorded (`llm.calling@1`: the wire body sent to the provider); the structured parts are
 * re-derived from the log by the engine's request rebuild (no plugin code runs for them), and
 * `identical` says that rebuild gave the same bytes.
 */
export interface RequestView {
  callId: string;
  pluginId: string;
  runtimeId: string;
  attempt: number;
  provider: string;
  model: string;
  /** The recorded request body, byte for byte. */
  raw: string;
  /** `raw`, parsed. */
  body: Record<string, unknown>;
  /** The names of the tools the body offers, in body order (OpenAI `tools[].function.name`, Anthropic `tools[].name`); empty when none. */
  toolNames: readonly string[];
  /** The system prompt as assembled (cache markers removed; before PreLLMCall hooks). */
  systemPrompt: string;
  /** The system prompt's sections in order (`preamble`, `runtime-body`, `segments`, …). */
  systemSections: readonly { name: SystemSectionName; text: string }[];
  /** This turn's data blocks: the turn-context message's content ('' when none; after PostContextAssembly). */
  turnContext: string;
  /** Every segment that reached this runtime (static and dynamic), in placement order. */
  segments: readonly SegmentView[];
  /** The provider-neutral messages the body was built from (after PreLLMCall hooks), the system prompt first. */
  messages: readonly MessageView[];
  /** The request rebuilt from the log equals `raw`. */
  identical: boolean;
  /** The text of one system section, or undefined when the request has none. */
  section(name: SystemSectionName): string | undefined;
  /** The segments a plugin gave this request. */
  segmentsOf(providerPluginId: string): readonly SegmentView[];
}

const PLACEMENT_ORDER: readonly Placement[] = ['system-prompt', 'system-prompt-turn', 'turn-context', 'pre-history-messages', 'post-history', 'depth'];

export function requestView(
  calling: EventData<'llm.calling@1'>,
  rebuilt: RebuiltCall,
  request: RuntimeRequest & { inputs: RuntimeRequestInputs },
): RequestView {
  const { context } = request;
  const placed = placeSegments(request.segments, runtimeView(request.inputs.runtime, request.inputs.stageIndex));
  const segments = PLACEMENT_ORDER.flatMap((placement) => placed[placement].map((s): SegmentView => Object.freeze({ ...s, placement })));
  const sections = calling.layout?.messageSections;
  const messages = request.messages.map((m, i): MessageView => ({
    role: m.role,
    content: stripCacheBreaks(m.content),
    section: sections && sections.length === request.messages.length ? (sections[i] as MessageView['section']) : null,
  }));
  const systemSections = context.systemSections.map((s) => ({ name: s.name, text: stripCacheBreaks(s.text) }));
  const body = JSON.parse(calling.body) as Record<string, unknown>;
  return Object.freeze({
    callId: calling.callId,
    pluginId: calling.pluginId,
    runtimeId: calling.runtimeId,
    attempt: calling.attempt,
    provider: calling.provider,
    model: calling.model,
    raw: calling.body,
    body,
    toolNames: toolNamesOf(body),
    systemPrompt: stripCacheBreaks(context.systemPrompt),
    systemSections,
    turnContext: context.turnContext,
    segments,
    messages,
    identical: rebuilt.identical,
    section: (name: SystemSectionName) => systemSections.find((s) => s.name === name)?.text,
    segmentsOf: (provider: string) => segments.filter((s) => s.providerPluginId === provider),
  });
}

/** The names of the tools a provider request body offers, in body order (OpenAI chat and Anthropic shapes). */
export function toolNamesOf(body: Record<string, unknown>): readonly string[] {
  const tools = Array.isArray(body.tools) ? (body.tools as { name?: string; function?: { name?: string } }[]) : [];
  return tools.map((t) => t.function?.name ?? t.name ?? '');
}
