import { join } from 'node:path';
import { estimateTokens } from '../../../libs/context';
import { emptyPluginData, loadPluginEntries, pluginSdk } from '../../../libs/engine';
import {
  type CompactInput,
  type CompactionContext,
  CompactResult,
  type CompactSummaryView,
  loadPlugin,
  type Locale,
  type PluginHistoryMessage,
  type SummaryModel,
  type SummaryReply,
} from '../../../libs/plugins-sdk';

export const PLUGIN_ROOT = join(__dirname, '..');

export type SummaryRequest = Parameters<SummaryModel['complete']>[0];
type Scripted = SummaryReply | ((request: SummaryRequest) => SummaryReply);

/** A summary model that answers from a queue and records every request (the emulator path comes with the barrier). */
export class ScriptedModel implements SummaryModel {
  readonly requests: SummaryRequest[] = [];
  constructor(private readonly replies: Scripted[]) {}
  async complete(request: SummaryRequest): Promise<SummaryReply> {
    this.requests.push(request);
    const next = this.replies.shift();
    if (!next) throw new Error(`no scripted summary reply left for request ${this.requests.length}`);
    return typeof next === 'function' ? next(request) : next;
  }
}

export const stop = (text: string): SummaryReply => ({ text, finishReason: 'stop' });
export const cut = (text: string): SummaryReply => ({ text, finishReason: 'length' });

/** The plugin loaded as the engine loads it (its folder, its server entry's `register`), with its one provider's handler. */
export async function loadProvider() {
  const plugin = loadPlugin(PLUGIN_ROOT);
  const registry = await loadPluginEntries([plugin], pluginSdk);
  const [provider] = registry.providers('history.compact@2');
  const handler = provider.handler as unknown as (input: CompactInput, ctx: CompactionContext) => Promise<unknown>;
  return {
    plugin,
    provider,
    /** Runs the handler the way the framework will: the result checked against the point's schema. */
    async compact(input: CompactInput, model: SummaryModel, locale: Locale = 'en'): Promise<CompactResult> {
      return CompactResult.parse(await handler(input, compactionContext(model, locale)));
    },
  };
}

export function compactionContext(model: SummaryModel, locale: Locale = 'en'): CompactionContext {
  return Object.freeze({
    pluginId: 'history-compaction',
    locale,
    session: Object.freeze({ id: 'session-1', turnNumber: 40 }),
    world: null,
    settings: Object.freeze({}),
    pluginData: emptyPluginData.reader({ tenantId: 't', sessionId: 'session-1', pluginId: 'history-compaction' }),
    sdk: Object.freeze({ ...pluginSdk, pluginRoot: PLUGIN_ROOT }),
    services: async () => [],
    summaryModel: model,
    estimateTokens,
  });
}

export { estimateTokens };

/** A message of turn `turn`: `player` is the player's input (role user), `story` the narrator's reply, `image` an image description row. */
export function message(id: string, turn: number, kind: 'player' | 'story' | 'image', text: string): PluginHistoryMessage {
  const base = { messageId: id, turnId: `turn-${turn}`, text };
  if (kind === 'player') return { ...base, role: 'user', sourceType: 'player', pluginId: null, runtimeId: null, outputKind: null };
  if (kind === 'image') return { ...base, role: 'user', sourceType: 'system', pluginId: null, runtimeId: null, outputKind: null };
  return { ...base, role: 'assistant', sourceType: 'runtime', pluginId: 'narrator', runtimeId: 'narrator', outputKind: 'story' };
}

/** `turns` turns of a player message and a story reply each, texts of about `tokens` estimated tokens each. */
export function turns(count: number, tokens = 40, from = 1): PluginHistoryMessage[] {
  const text = (label: string) => `${label} ${'lorem ipsum dolor sit amet '.repeat(tokens)}`.slice(0, tokens * 4); // ASCII: exactly `tokens`
  return Array.from({ length: count }, (_, i) => [
    message(`m${from + i}a`, from + i, 'player', text(`Player ${from + i}.`)),
    message(`m${from + i}b`, from + i, 'story', text(`Story ${from + i}.`)),
  ]).flat();
}

/** A text the framework's estimate counts as exactly `tokens` (ASCII, a multiple of four characters), with one section heading. */
export function textOf(tokens: number, label = 'summary'): string {
  const head = `## Events\n${label}: `;
  return `${head}${'x'.repeat(Math.max(0, tokens * 4 - head.length))}`;
}

/** A saved summary of `tokens` estimated tokens. */
export function summary(id: string, tokens: number): CompactSummaryView {
  return { summaryId: id, content: textOf(tokens, id), messageIds: [`${id}-source`], truncated: false };
}

export const ids = (messages: readonly PluginHistoryMessage[]) => messages.map((m) => m.messageId);
