import { serializeSystemPrompt } from './cache-boundaries';
import { dataBlock } from '../data-boundary';
import { insertAtDepth, type PlacedMessage } from './depth-insertion';
import { placeSegments } from './extension-segments';
import { fixedText } from './fixed-text';
import { assertNoHiddenData } from './hidden-data';
import { historyWindow, includesSummaries } from './history-window';
import { RECENT_IMAGES_MAX, recentImagesText } from './images';
import { applyPostContextAssembly } from './post-context-assembly';
import { frameworkPreamble } from './preamble';
import { CURRENT_TURN, protectionOf } from './protected-range';
import { pointStoryInputs, thisTurnStoryText } from './story-text';
import { systemSections } from './system-prompt';
import { renderTurnContext } from './turn-context';
import type { AssembledContext, BuildContextParams, ContextMessage, MessageSectionName } from './types';

/**
 * The one entry point of prompt assembly (spec §1–§3, §5). Pure: every read happened before it,
 * and everything it needs is in `params`.
 */
export async function buildContext(params: BuildContextParams): Promise<AssembledContext> {
  const assembled = assemble(params);
  return (params.postContextAssembly ?? []).length === 0 ? assembled : withPostContextAssembly(assembled, params);
}

/** Everything before the PostContextAssembly hooks: what buildContext returns without hooks. */
function assemble(params: BuildContextParams): AssembledContext {
  const { runtime, locale } = params;
  assertNoHiddenData(params);
  const t = fixedText(locale);
  const placed = placeSegments(params.segments ?? [], runtime);

  // system prompt (§2), with cache boundaries (§5)
  const preamble = frameworkPreamble(locale, runtime, params.languageName);
  const sections = systemSections({
    locale,
    preamble,
    body: runtime.body,
    segments: placed['system-prompt'],
    lorebook: params.lorebook ?? [],
    eventCatalog: params.eventCatalog ?? [],
    activation: params.activation,
    turnSegments: placed['system-prompt-turn'],
  });
  const systemPrompt = serializeSystemPrompt(sections, true);

  // this turn's story text (§1) and the inputs that point at it
  const story = thisTurnStoryText(params.executionOutputs ?? [], runtime);
  const inputs = pointStoryInputs(params.inputs ?? [], story, t.storyPointer);
  const turnContext = renderTurnContext({
    locale,
    selfData: params.selfData ?? [],
    inputs,
    exports: params.exports ?? [],
    activation: params.activation,
    turnSegments: placed['turn-context'],
  });

  // conversation: pre-history, summaries, history, then the current turn
  const conversation: PlacedMessage[] = [];
  for (const s of placed['pre-history-messages']) conversation.push({ message: { role: s.role, content: s.content }, section: 'pre-history' });
  const summaries = includesSummaries(runtime) ? (params.summaries ?? []) : [];
  if (summaries.length > 0) {
    const envelope = dataBlock('compacted_history', summaries.map((s) => s.content.trim()).join('\n\n'));
    conversation.push({ message: { role: 'user', content: `${envelope}\n\n${t.summaryNote}` }, section: 'summary' });
  }
  for (const m of historyWindow(params.history, runtime)) conversation.push({ message: { role: m.role, content: m.text }, section: 'history' });
  if (runtime.outputKind === 'story' && (params.recentImages ?? []).length > 0) {
    // the images the caller could attach (read, checked, this session's): the text lists exactly those
    const images = params.recentImages!.slice(-RECENT_IMAGES_MAX).map((i) => ({ ...i }));
    conversation.push({ message: { role: 'user', content: recentImagesText(locale, images), images }, section: 'recent-images' });
  }
  const currentTurnUserMessages: ContextMessage[] = params.resume
    ? params.resume.currentTurnUserMessages.map((m) => ({ ...m }))
    : [{ role: 'user', content: params.playerInput.text }, ...(params.midTurnMessages ?? []).map((m) => ({ role: 'user' as const, content: m.text }))];
  const [input, ...midTurn] = currentTurnUserMessages;
  // an activation's execution (event or manual) has no player text: no empty user message
  if (input && input.content !== '') conversation.push({ message: input, section: 'player-input' });
  for (const o of story) conversation.push({ message: { role: 'assistant', content: o.text }, section: 'story-text' });
  if (story.length > 0) conversation.push({ message: { role: 'user', content: t.storyEndingHint }, section: 'ending-hint' });
  for (const m of midTurn) conversation.push({ message: m, section: 'mid-turn' });

  // depth insertions (lorebook, then segments) count conversation messages only
  const depthItems = [
    ...(params.lorebook ?? [])
      .filter((e): e is typeof e & { position: { depth: number } } => typeof e.position === 'object')
      .sort((a, b) => a.order - b.order || (a.id < b.id ? -1 : 1))
      .map((e) => ({ depth: e.position.depth, message: { role: 'system' as const, content: e.content } })),
    ...placed.depth.map((s) => ({ depth: (s.position as { depth: number }).depth, message: { role: s.role, content: s.content } })),
  ];
  const withDepth = insertAtDepth(conversation, depthItems);

  // the turn context sits right before the current turn
  const firstCurrent = withDepth.findIndex((m) => CURRENT_TURN.includes(m.section));
  const at = firstCurrent === -1 ? withDepth.length : firstCurrent;
  if (turnContext) withDepth.splice(at, 0, { message: { role: 'system', content: turnContext }, section: 'turn-context' });
  for (const s of placed['post-history']) withDepth.push({ message: { role: s.role, content: s.content }, section: 'post-history' });

  const messages = withDepth.map((m) => m.message);
  const messageSections = withDepth.map((m) => m.section);
  return {
    systemPrompt,
    systemSections: sections.filter((s) => s.text.trim() !== ''),
    messages,
    messageSections,
    ...protectionOf(messages, messageSections),
    continuation: { currentTurnUserMessages },
  };
}

/**
 * The PostContextAssembly phase of buildContext (spec §3): `params.postContextAssembly` applied to
 * `assembled`, which must be buildContext's answer for the same params without hooks (any
 * `trimmedAssembly` aside: only this phase reads it). `buildContext(params)` equals
 * `withPostContextAssembly(await buildContext({ ...params, postContextAssembly: [] }), params)`, so a
 * caller that runs hooks one at a time, or tries several, assembles the context once.
 */
export function withPostContextAssembly(assembled: AssembledContext, params: BuildContextParams): AssembledContext {
  const { runtime, locale } = params;
  const hooks = params.postContextAssembly ?? [];
  if (hooks.length === 0) return assembled;

  // PostContextAssembly (§3), on the assembly as the caller's budget check left it (§5); then the
  // sections, the protected messages and the turn context are read again from the messages the
  // hooks returned, each known by where it came from
  const start = params.trimmedAssembly ?? { messages: assembled.messages, messageSections: assembled.messageSections };
  const preamble = frameworkPreamble(locale, runtime, params.languageName);
  const frameworkHead = serializeSystemPrompt([{ name: 'preamble', text: preamble }], true);
  const rewritten = applyPostContextAssembly(
    hooks,
    { systemPrompt: assembled.systemPrompt, messages: [...start.messages] },
    { promptTemplate: params.promptTemplate ?? runtime.body, inputSlots: params.inputs ?? [], characterSummary: params.characterSummary ?? '' },
    frameworkHead,
  );
  // a message a hook added counts as history; `continuation` keeps the current turn's user
  // messages as assembled: a resumed runtime assembles from them and runs the same hooks again
  const sectionsAfter = rewritten.origins.map((o): MessageSectionName => (o === null ? 'history' : start.messageSections[o]));
  return {
    ...assembled,
    systemPrompt: rewritten.systemPrompt,
    messages: rewritten.messages,
    messageSections: sectionsAfter,
    ...protectionOf(rewritten.messages, sectionsAfter),
  };
}
