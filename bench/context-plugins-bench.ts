import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  buildRuntimeRequest,
  type ExecutionScope,
  LiveResolver,
  loadRuntimeHistory,
  PluginHost,
  readSelfData,
  RuntimeCatalog,
  staticSegments,
  storePluginData,
  turnNumberOf,
} from '../libs/engine';
import { type EventStore, type NewEvent, PluginDataStore } from '../libs/events';
import { loadPlugins } from '../libs/plugins-sdk';
import { BENCH_TENANT, benchProviders, openBenchDatabase, seedSessions } from './bench-sessions';
import { median, percentile } from './stats';

const REPO = join(__dirname, '..');
export const PLUGIN_COUNT = 20;
export const SEGMENT_PROVIDERS = 5;
/** Rows in the narrator's `ledger` namespace; its `io.selfData` reads the default bounded 50. */
export const SELF_DATA_ROWS = 500;
const SELF_DATA_REWRITES = 150;
const HISTORY_READ_LIMIT = 400;
const WARM_UP = 5;

interface Sample {
  historyRead: number;
  selfDataRead: number;
  request: number;
  total: number;
}

/** What one iteration's request held (checked: the bench measures the pieces it names). */
interface Shape {
  messages: number;
  summaries: number;
  selfDataRows: number;
  selfDataTotal: number;
  dynamicSegments: number;
  handlersRun: number;
  body: string;
}

/** The request has the bounded selfData block and every provider's turn segment, and every handler ran. */
function checkShape(size: number, shape: Shape): void {
  const problems = [
    shape.selfDataRows === 50 && shape.selfDataTotal === SELF_DATA_ROWS ? null : `selfData ${shape.selfDataRows}/${shape.selfDataTotal} rows`,
    shape.body.includes('<self-data namespace=\\"ledger\\">') && shape.body.includes('- item-0 |') ? null : 'no selfData block in the body',
    shape.dynamicSegments === SEGMENT_PROVIDERS && shape.handlersRun === SEGMENT_PROVIDERS
      ? null
      : `${shape.dynamicSegments} dynamic segments, ${shape.handlersRun} handlers run`,
    Array.from({ length: SEGMENT_PROVIDERS }, (_, k) => pluginId(k + 1)).every((id) => shape.body.includes(`<${id}-watch>Turn `))
      ? null
      : 'a turn segment is missing',
  ].filter((p) => p !== null);
  if (problems.length > 0) throw new Error(`context-plugins bench at ${size} messages: ${problems.join('; ')}`);
}

const pluginId = (i: number) => (i === 0 ? 'narrator' : `keeper-${String(i).padStart(2, '0')}`);
/** keeper-01 … keeper-05 provide a dynamic turn segment. */
const providesSegment = (i: number) => i >= 1 && i <= SEGMENT_PROVIDERS;
const quoted = (s: string) => JSON.stringify(s);

/** One plugin folder as an author writes it: PLUGIN.md (manifest, static segments, body) and, for a provider, server/index.ts. */
function writePlugin(root: string, i: number): void {
  const id = pluginId(i);
  const dir = join(root, id);
  mkdirSync(join(dir, 'server'), { recursive: true });
  const narrator = i === 0;
  const front = [
    `id: ${id}`,
    `name: ${id}`,
    'version: 0.0.1',
    'runtime:',
    `  id: ${id}`,
    '  schedule:',
    `    stage: ${narrator ? 'narrative' : 'post-turn'}`,
    `  outputKind: ${narrator ? 'story' : 'structured'}`,
    ...(narrator ? ['  io:', '    selfData: [ledger]'] : ['  agent:', '    history:', '      maxTurns: 1']),
    'contributes:',
    '  prompt:',
    `    - id: ${id}-rules`,
    `      content: ${quoted(`<${id}-rules>${'Keep the ledger exact. '.repeat(20)}</${id}-rules>`)}`,
    '      position: system',
    '      volatility: session',
    `      order: ${i}`,
    `    - id: ${id}-style`,
    `      content: ${quoted(`Style note ${i}: stay terse.`)}`,
    '      position: pre-history',
    ...(providesSegment(i) ? ['  extensions:', '    - point: prompt.segment@1', `      id: ${id}-watch`] : []),
  ];
  const body = narrator ? 'You are the narrator. '.repeat(40) : `You keep ledger ${i}. `.repeat(20);
  writeFileSync(join(dir, 'PLUGIN.md'), `---\n${front.join('\n')}\n---\n${body}\n`);
  if (!providesSegment(i)) return;
  // three turn segments in the system prompt, two at a depth in the conversation
  const position = i <= 3 ? `'system'` : '{ depth: 2 }';
  writeFileSync(
    join(dir, 'server', 'index.ts'),
    `import type { PluginApi, ReturnedSegment } from ${quoted(join(REPO, 'libs', 'plugins-sdk'))};

export function register(api: PluginApi): void {
  api.provideExtension('prompt.segment@1', '${id}-watch', {
    async handler(input, ctx): Promise<ReturnedSegment[]> {
      const state = await ctx.pluginData.get('state', 'current');
      return [
        {
          id: '${id}-watch',
          content: \`<${id}-watch>Turn \${ctx.session.turnNumber}: the player said \${ctx.sdk.escapeXml(input.playerInput.text)}. State: \${JSON.stringify(ctx.sdk.modelFacingJson(state))}</${id}-watch>\`,
          position: ${position},
          volatility: 'turn',
          order: ${i},
        },
      ];
    },
  });
}
`,
  );
}

/** Generates the 20 plugin folders into a temporary directory. */
export function writeBenchPlugins(): string {
  const root = mkdtempSync(join(tmpdir(), 'covel-bench-plugins-'));
  for (let i = 0; i < PLUGIN_COUNT; i++) writePlugin(root, i);
  return root;
}

/**
 * The session's plugin data, as function runtimes write it: `plugin-data.written@1` events in the
 * session's stream (so the inline projection fills `plugin_data`): the narrator's `ledger` of
 * SELF_DATA_ROWS rows, some of them rewritten later (recency differs from creation order), and
 * one `state/current` row per segment provider.
 */
export async function seedPluginData(store: EventStore, tenantId: string, sessionId: string): Promise<void> {
  let version = await store.streamVersion(sessionId);
  const ref = () => ({ executionId: randomUUID(), turnId: randomUUID(), attempt: 1 });
  const events: NewEvent[] = [];
  for (let r = 0; r < SELF_DATA_ROWS; r++)
    events.push({
      type: 'plugin-data.written@1',
      data: {
        ...ref(),
        pluginId: 'narrator',
        namespace: 'ledger',
        key: `item-${r}`,
        value: { name: `Item ${r}`, count: r % 7, notes: `found near ridge ${r}` },
      },
    });
  for (let r = 0; r < SELF_DATA_REWRITES; r++) {
    const key = `item-${(r * 37) % SELF_DATA_ROWS}`;
    events.push({
      type: 'plugin-data.written@1',
      data: { ...ref(), pluginId: 'narrator', namespace: 'ledger', key, value: { name: key, count: r, notes: 'moved' } },
    });
  }
  for (let i = 1; i <= SEGMENT_PROVIDERS; i++)
    events.push({
      type: 'plugin-data.written@1',
      data: { ...ref(), pluginId: pluginId(i), namespace: 'state', key: 'current', value: { watch: i, alert: false } },
    });
  for (let at = 0; at < events.length; at += 400) {
    const batch = events.slice(at, at + 400);
    version = (await store.append({ tenantId, streamId: sessionId, expectedVersion: version, events: batch })).version;
  }
}

export interface ContextPluginsBenchRow {
  messages: number;
  uncompactedRead: number;
  summaries: number;
  selfDataRows: number;
  selfDataTotal: number;
  dynamicSegments: number;
  medianHistoryReadMs: number;
  medianSelfDataReadMs: number;
  medianRequestMs: number;
  medianTotalMs: number;
  p95TotalMs: number;
}

export interface ContextPluginsBench {
  plugins: number;
  segmentProviders: number;
  selfDataNamespaceRows: number;
  rows: ContextPluginsBenchRow[];
}

/**
 * Per iteration, what the worker does for the narrator's request (runtime-step.ts): the bounded
 * history read and the `io.selfData` read (in parallel, as the worker reads its inputs), then
 * `buildRuntimeRequest` with the plugins: a fresh `LiveResolver` with nothing recorded, so every
 * `prompt.segment@1` handler runs (each reads its plugin's data from the store), the assembly with
 * the selfData block, and the wire body. That is the first runtime of an execution, the most
 * expensive case: later runtimes of the same execution reuse the recorded results.
 */
export async function runContextPluginsBench(sizes: readonly number[], iterations: number, log: (line: string) => void): Promise<ContextPluginsBench> {
  const pluginsDir = writeBenchPlugins();
  const { open, store, readModels } = await openBenchDatabase();
  try {
    const pluginData = new PluginDataStore(open.db);
    const plugins = loadPlugins(pluginsDir);
    const host = await PluginHost.load(plugins, { pluginData: storePluginData(pluginData) });
    const catalog = new RuntimeCatalog(plugins, undefined, host);
    const narrator = catalog.find('narrator', 'narrator')!;
    const providers = benchProviders();
    const segments = staticSegments(plugins, 'en');
    const tenantId = BENCH_TENANT;
    const seeded = await seedSessions(store, sizes, log, {
      more: (sessionId) => seedPluginData(store, tenantId, sessionId),
      moreLabel: `and ${SELF_DATA_ROWS} plugin data rows`,
    });
    const sessions: { size: number; sessionId: string; samples: Sample[]; last?: Shape }[] = seeded.map((s) => ({ ...s, samples: [] }));
    const once = async (sessionId: string): Promise<{ sample: Sample; shape: Shape }> => {
      const t0 = performance.now();
      let historyDone = 0;
      let selfDataDone = 0;
      const [history, selfData] = await Promise.all([
        loadRuntimeHistory(readModels, tenantId, sessionId, HISTORY_READ_LIMIT).then((h) => ((historyDone = performance.now()), h)),
        readSelfData(pluginData, { tenantId, sessionId, pluginId: narrator.pluginId }, narrator.manifest.io.selfData).then(
          (s) => ((selfDataDone = performance.now()), s),
        ),
      ]);
      const t1 = performance.now();
      const scope: ExecutionScope = { tenantId, sessionId, turnNumber: turnNumberOf(history.messages), locale: 'en', world: null };
      const resolver = new LiveResolver(new Map(), host.invoker(scope));
      const request = await buildRuntimeRequest(
        {
          sessionId,
          locale: 'en',
          runtime: narrator,
          stageIndex: catalog.stageIndex(narrator),
          history: history.messages,
          summaries: history.summaries,
          playerInput: { messageId: 'now', text: 'go on' },
          outputs: [],
          segments,
          world: null,
          scanTail: history.scanTail,
          selfData,
        },
        providers,
        { registry: host.registry, resolver },
      );
      const body = JSON.stringify(request.body); // the bytes recorded with llm.calling and sent
      const t2 = performance.now();
      const sample = { historyRead: historyDone - t0, selfDataRead: selfDataDone - t0, request: t2 - t1, total: t2 - t0 };
      const shape = {
        messages: history.messages.length,
        summaries: history.summaries.length,
        selfDataRows: selfData[0].rows.length,
        selfDataTotal: selfData[0].totalRows,
        dynamicSegments: request.segments.length - segments.length,
        handlersRun: resolver.fresh.length,
        body,
      };
      return { sample, shape };
    };
    // sizes interleaved, after a warm-up round of each: JIT warm-up and machine noise fall on every size alike
    for (let i = 0; i < WARM_UP + iterations; i++) {
      for (const s of sessions) {
        const { sample, shape } = await once(s.sessionId);
        if (i >= WARM_UP) s.samples.push(sample);
        s.last = shape;
      }
    }
    const rows = sessions.map(({ size, samples, last }): ContextPluginsBenchRow => {
      checkShape(size, last!);
      const totals = samples.map((x) => x.total);
      return {
        messages: size,
        uncompactedRead: last!.messages,
        summaries: last!.summaries,
        selfDataRows: last!.selfDataRows,
        selfDataTotal: last!.selfDataTotal,
        dynamicSegments: last!.dynamicSegments,
        medianHistoryReadMs: median(samples.map((x) => x.historyRead)),
        medianSelfDataReadMs: median(samples.map((x) => x.selfDataRead)),
        medianRequestMs: median(samples.map((x) => x.request)),
        medianTotalMs: median(totals),
        p95TotalMs: percentile(totals, 0.95),
      };
    });
    return { plugins: plugins.length, segmentProviders: host.registry.providers('prompt.segment@1').length, selfDataNamespaceRows: SELF_DATA_ROWS, rows };
  } finally {
    await open.close();
    rmSync(pluginsDir, { recursive: true, force: true });
  }
}
