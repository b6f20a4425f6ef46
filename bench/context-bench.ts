import { buildContext } from '../libs/context';
import { buildRuntimeRequest, loadRuntimeHistory, RuntimeCatalog, staticSegments } from '../libs/engine';
import { type LoadedPlugin, PluginManifest, RuntimeManifest } from '../libs/plugins-sdk';
import { BENCH_TENANT, benchProviders, openBenchDatabase, seedSessions } from './bench-sessions';
import { median } from './stats';

/** 20 plugins: the narrator and 19 bookkeeping runtimes, each with two static segments. */
export function benchPlugins(): LoadedPlugin[] {
  return Array.from({ length: 20 }, (_, i) => {
    const id = i === 0 ? 'narrator' : `keeper-${String(i).padStart(2, '0')}`;
    const segments = [
      {
        id: `${id}-rules`,
        content: `<${id}-rules>${'Keep the ledger exact. '.repeat(20)}</${id}-rules>`,
        position: 'system' as const,
        role: 'system' as const,
        volatility: 'session' as const,
        order: i,
      },
      {
        id: `${id}-style`,
        content: `Style note ${i}: stay terse.`,
        position: 'pre-history' as const,
        role: 'system' as const,
        volatility: 'stable' as const,
        order: 0,
      },
    ];
    const body = i === 0 ? 'You are the narrator. '.repeat(40) : `You keep ledger ${i}. `.repeat(20);
    const runtime = RuntimeManifest.parse({
      id,
      schedule: { stage: i === 0 ? 'narrative' : 'post-turn' },
      outputKind: i === 0 ? 'story' : 'structured',
      agent: { history: i === 0 ? {} : { maxTurns: 1 } },
    });
    const bodies = { en: body, 'zh-Hans': body };
    return {
      root: '(bench)',
      entry: null,
      manifest: PluginManifest.parse({ id, name: id, version: '0.0.0', runtime, contributes: { prompt: segments } }),
      runtimes: [{ id, fullId: `${id}/${id}`, manifest: runtime, bodies, file: '(bench)', inline: true }],
      bodies,
      staticSegments: { en: segments, 'zh-Hans': segments },
    };
  });
}

export interface ContextBenchRow {
  messages: number;
  uncompactedRead: number;
  summaries: number;
  medianReadMs: number;
  medianBuildContextMs: number;
  medianTotalMs: number;
}

/** Reads (bounded) + buildContext + request body for the narrator, per session size. */
export async function runContextBench(sizes: readonly number[], iterations: number, log: (line: string) => void): Promise<ContextBenchRow[]> {
  const { open, store, readModels } = await openBenchDatabase();
  try {
    const plugins = benchPlugins();
    const catalog = new RuntimeCatalog(plugins);
    const narrator = catalog.all()[0];
    const providers = benchProviders();
    const segments = staticSegments(plugins, 'en');
    const rows: ContextBenchRow[] = [];
    for (const { size, sessionId } of await seedSessions(store, sizes, log)) {
      const reads: number[] = [];
      const builds: number[] = [];
      const totals: number[] = [];
      let last = { messages: 0, summaries: 0 };
      for (let i = 0; i < iterations + 5; i++) {
        const t0 = performance.now();
        const history = await loadRuntimeHistory(readModels, BENCH_TENANT, sessionId, 400);
        const t1 = performance.now();
        const inputs = {
          sessionId,
          locale: 'en' as const,
          runtime: narrator,
          stageIndex: 1,
          history: history.messages,
          summaries: history.summaries,
          playerInput: { messageId: 'now', text: 'go on' },
          outputs: [],
          segments,
          world: null,
          scanTail: [],
        };
        await buildRuntimeRequest(inputs, providers);
        const t2 = performance.now();
        // buildContext alone (no reads): the pure part
        const b0 = performance.now();
        await buildContext({
          locale: 'en',
          runtime: { pluginId: 'narrator', runtimeId: 'narrator', outputKind: 'story', body: narrator.bodies.en, history: {}, stageIndex: 1 },
          history: history.messages,
          summaries: history.summaries,
          playerInput: { messageId: 'now', text: 'go on' },
          segments,
        });
        const b1 = performance.now();
        if (i >= 5) {
          reads.push(t1 - t0);
          builds.push(b1 - b0);
          totals.push(t2 - t0);
        }
        last = { messages: history.messages.length, summaries: history.summaries.length };
      }
      rows.push({
        messages: size,
        uncompactedRead: last.messages,
        summaries: last.summaries,
        medianReadMs: median(reads),
        medianBuildContextMs: median(builds),
        medianTotalMs: median(totals),
      });
    }
    return rows;
  } finally {
    await open.close();
  }
}
