import { join } from 'node:path';
import { rebuildInline, type StoredEvent } from '../../../events';
import { endpointFor, parseLlmConfig, ProviderRegistry } from '../../../providers';
import { dumpProjections } from '../../../../test/support/projection-dump';
import { SMALL_WINDOW_LLM } from '../../../../test/support/small-window-llm';
import { HistoryFold } from '../../history-fold';
import { loadRuntimeHistory } from '../../history-loader';
import { engineInlineProjections } from '../../projections';
import { auditTurn } from '../../turn-audit';
import { historyReadLimit } from '../../turn/deps';
import { TurnRunner } from '../../turn/turn-runner';
import { eventually, type TurnHarness, turnHarness } from '../../turn/test/harness';

/** The repository's default plugins: the narrator and the default history-compaction plugin. */
const DEFAULT_PLUGINS = join(__dirname, '..', '..', '..', '..', 'plugins');

type Data = Record<string, unknown>;
const of = (events: StoredEvent[], type: string) => events.filter((e) => e.type === type).map((e) => e.data as Data);

describe('a long session with the default history-compaction plugin on an 8k window (emulator as story and summary model)', () => {
  let h: TurnHarness;
  beforeAll(async () => {
    h = await turnHarness({ pluginsDir: DEFAULT_PLUGINS, handlers: (deps) => new TurnRunner(deps) });
    h.deps.providers = new ProviderRegistry(parseLlmConfig(SMALL_WINDOW_LLM), (protocol) => endpointFor(protocol, {}, h.emulator.url));
  });
  afterAll(() => h.close());

  it('compacts several times; each compaction one event with its barrier end; no message lost; summaries within the cap; audit and replay exact', async () => {
    const session = await h.session();
    const TURNS = 24;
    const turnIds: string[] = [];
    for (let i = 1; i <= TURNS; i++) {
      const job = await h.input(session, `Turn ${i}: ${'I search the flooded archive shelf by shelf, reading every spine aloud. '.repeat(40)}`);
      await h.queue.enqueue(job);
      await eventually(async () => ['committed', 'failed'].includes((await h.deps.readModels.execution(job.tenantId, job.executionId))?.status ?? ''), 'ended');
      expect((await h.deps.readModels.execution(job.tenantId, job.executionId))?.status).toBe('committed');
      turnIds.push(job.turnId);
    }
    const events = await h.events(session.sessionId);
    const passed = of(events, 'compaction.barrier-passed@1');
    expect(passed.map((p) => p.outcome)).toEqual(passed.map(() => 'compacted'));
    expect(passed.length).toBeGreaterThanOrEqual(2);
    const compacted = of(events, 'history.compacted@1');
    expect(compacted.map((c) => c.compactionId)).toEqual(passed.map((p) => p.compactionId));

    // no message lost from the log: every turn's input and story are rows, compacted or not
    const read = await loadRuntimeHistory(h.deps.readModels, session.tenantId, session.sessionId, historyReadLimit(h.deps), { withCoverage: true });
    expect(read.stats).toMatchObject({ total: 2 * TURNS, turns: TURNS });
    // markers and summaries agree: the summaries cover exactly the compacted prefix, in order
    const all = (await h.deps.readModels.messages(session.tenantId, session.sessionId)).map((m) => m.messageId);
    expect(read.summaries.flatMap((s) => s.messageIds ?? [])).toEqual(all.slice(0, read.stats.compacted));
    expect(read.summaries.length).toBeLessThanOrEqual(8);

    // the story request after the first compaction carries the envelope
    const lastCall = of(events, 'llm.calling@1').at(-1)!;
    expect(lastCall.body as string).toContain('<compacted_history>');

    for (const turnId of turnIds)
      expect((await auditTurn({ ...h.deps, historyReadLimit: historyReadLimit(h.deps) }, session.sessionId, turnId)).identical).toBe(true);

    const fold = new HistoryFold();
    for (const e of events) fold.apply(e);
    expect(fold.uncompacted(session.sessionId, 1000)).toEqual(read.messages);
    const rows = await dumpProjections(h.database.db);
    expect((await rebuildInline({ db: h.database.db, projections: engineInlineProjections })).failures).toEqual([]);
    expect(await dumpProjections(h.database.db)).toEqual(rows);
  }, 120_000);
});
