import type { BuildContextParams, ExtensionSegment, HistoryMessage, RuntimeView } from '..';

/** Small builders for contract tests: no I/O, plain data in. */
export const narrator: RuntimeView = {
  pluginId: 'narrator',
  runtimeId: 'narrator',
  outputKind: 'story',
  contract: 'narrative-engine@2',
  body: 'You are the narrator.',
  history: {},
  stageIndex: 1,
};

export const tracker: RuntimeView = {
  pluginId: 'world-init',
  runtimeId: 'dimension-tracker',
  outputKind: 'none',
  body: 'Track the dimensions.',
  history: { maxTurns: 1 },
  stageIndex: 2,
};

export function turn(n: number, extra: Partial<HistoryMessage>[] = []): HistoryMessage[] {
  return [
    { messageId: `u${n}`, turnId: `t${n}`, role: 'user', sourceType: 'player', pluginId: null, runtimeId: null, outputKind: null, text: `input ${n}` },
    {
      messageId: `a${n}`,
      turnId: `t${n}`,
      role: 'assistant',
      sourceType: 'runtime',
      pluginId: 'narrator',
      runtimeId: 'narrator',
      outputKind: 'story',
      text: `story ${n}`,
    },
    ...extra.map((e, i) => ({
      messageId: `x${n}-${i}`,
      turnId: `t${n}`,
      role: 'assistant' as const,
      sourceType: 'runtime' as const,
      pluginId: 'other',
      runtimeId: 'r',
      outputKind: 'structured' as const,
      text: 'data',
      ...e,
    })),
  ];
}

export function history(turns: number): HistoryMessage[] {
  return Array.from({ length: turns }, (_, i) => turn(i + 1)).flat();
}

export function segment(id: string, over: Partial<ExtensionSegment> = {}): ExtensionSegment {
  return { id, providerPluginId: 'narrator', content: `<${id}/>`, position: 'system', volatility: 'stable', role: 'system', order: 0, ...over };
}

export function params(over: Partial<BuildContextParams> = {}): BuildContextParams {
  return { locale: 'en', runtime: narrator, history: history(2), playerInput: { messageId: 'u-now', text: 'go north' }, ...over };
}
