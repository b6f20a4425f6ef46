import { randomUUID } from 'node:crypto';
import { buildContext } from '../libs/context';
import { buildRuntimeRequest, loadRuntimeHistory, RuntimeCatalog, staticSegments } from '../libs/engine';
import { EventStore, inlineProjections, migrateToLatest, type NewEvent, openDatabase, ReadModels } from '../libs/events';
import { type LoadedPlugin, PluginManifest, RuntimeManifest } from '../libs/plugins-sdk';
import { ProviderRegistry } from '../libs/providers';

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

const text = (n: number) => `Turn ${n}: the embers shift as the travellers cross the ridge and argue about the map. `.repeat(3);

/**
 * A session of `messages` committed messages, compacted the way the default policy keeps it:
 * at most ~60 uncompacted messages and at most eight summary segments.
 */
export async function seedSession(store: EventStore, tenantId: string, messages: number): Promise<string> {
  const sessionId = randomUUID();
  let version = 0;
  let pending: NewEvent[] = [{ type: 'session.created@1', data: { sessionId, worldId: 'emberback', locale: 'en' } }];
  const flush = async () => {
    if (pending.length === 0) return;
    version = (await store.append({ tenantId, streamId: sessionId, expectedVersion: version, events: pending })).version;
    pending = [];
  };
  let uncompacted: string[] = [];
  let summaries: string[] = [];
  for (let t = 0; t < messages / 2; t++) {
    const executionId = randomUUID();
    const turnId = randomUUID();
    const userId = randomUUID();
    const storyId = randomUUID();
    pending.push({ type: 'player-input.submitted@1', data: { executionId, turnId, messageId: userId, text: `I do thing ${t}` } });
    pending.push({
      type: 'turn.committed@1',
      data: {
        executionId,
        turnId,
        attempt: 1,
        messages: [
          { messageId: userId, role: 'user', sourceType: 'player', pluginId: null, runtimeId: null, outputKind: null, text: `I do thing ${t}` },
          { messageId: storyId, role: 'assistant', sourceType: 'runtime', pluginId: 'narrator', runtimeId: 'narrator', outputKind: 'story', text: text(t) },
        ],
      },
    });
    uncompacted.push(userId, storyId);
    if (uncompacted.length > 60) {
      const covered = uncompacted.slice(0, 40);
      uncompacted = uncompacted.slice(40);
      const summaryId = randomUUID();
      const batch: { summaryId: string; messageIds: string[]; replacesSummaryIds: string[]; content: string }[] = [];
      if (summaries.length >= 8) {
        const [a, b] = summaries;
        batch.push({ summaryId: randomUUID(), messageIds: [], replacesSummaryIds: [a, b], content: `Merged summary up to turn ${t}. ` });
        summaries = [a, ...summaries.slice(2)];
      }
      batch.push({ summaryId, messageIds: covered, replacesSummaryIds: [], content: `Summary up to turn ${t}: the party crossed ${t} ridges. `.repeat(4) });
      summaries.push(summaryId);
      pending.push({ type: 'history.compacted@1', data: { compactionId: randomUUID(), summaries: batch } });
    }
    if (pending.length >= 400) await flush();
  }
  await flush();
  return sessionId;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
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
  const open = await openDatabase({ kind: 'pglite' });
  try {
    await migrateToLatest(open.db);
    const store = new EventStore(open.db, { inline: inlineProjections });
    const readModels = new ReadModels(open.db);
    const plugins = benchPlugins();
    const catalog = new RuntimeCatalog(plugins);
    const narrator = catalog.all()[0];
    const providers = new ProviderRegistry(
      {
        slots: {
          story: { protocol: 'openai-chat', model: 'bench', contextWindow: 128_000, maxOutputTokens: 1024, cacheBoundaries: true },
          fast: { protocol: 'openai-chat', model: 'bench', contextWindow: 128_000, maxOutputTokens: 512, cacheBoundaries: true },
        },
      },
      () => ({ kind: 'emulator', apiKey: 'bench', baseURL: 'http://127.0.0.1:9/v1' }),
    );
    const segments = staticSegments(plugins, 'en');
    const rows: ContextBenchRow[] = [];
    for (const size of sizes) {
      const started = Date.now();
      const sessionId = await seedSession(store, 'bench', size);
      log(`  seeded ${size} messages in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      const reads: number[] = [];
      const builds: number[] = [];
      const totals: number[] = [];
      let last = { messages: 0, summaries: 0 };
      for (let i = 0; i < iterations + 5; i++) {
        const t0 = performance.now();
        const history = await loadRuntimeHistory(readModels, 'bench', sessionId, 400);
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
