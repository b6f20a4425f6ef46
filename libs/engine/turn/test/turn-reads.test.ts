import { turnContext } from '../../../../test/support/turn-context';
import { QueryCounter } from '../../../../test/support/query-counter';
import { parseExposition, total } from '../../../../test/support/prometheus-text';
import { EventStore } from '../../../events';
import { auditTurn } from '../../audit/turn-audit';
import { historyReadLimit } from '../../execution/deps';
import { loadRuntimeHistory } from '../../history';
import { EngineMetrics } from '../../metrics';
import { engineInlineProjections } from '../../startup/projections';
import { TurnRunner } from '../turn-runner';
import { type TurnHarness, turnHarness } from './harness';

/**
 * What one narrator-only turn reads of the session's log (issue 33: statements per turn): the turn
 * job reads the journal once; its inline runtime goes on from that journal (no second read), the
 * turn ends once the runtime committed (no third), and the first model call follows that read
 * with no catch-up read of its own, and the player's preferences come with the journal. Counted on the real store (PGlite), one turn run directly.
 */
describe('the reads of a narrator-only turn', () => {
  let h: TurnHarness;
  let runner!: TurnRunner;
  beforeAll(async () => {
    h = await turnHarness({
      pluginFilter: (p) => p.manifest.id === 'narrator',
      handlers: (deps) => (runner = new TurnRunner(deps)),
    });
  });
  afterAll(() => h.close());

  it('one journal read and no catch-up read: the inline runtime reuses the turn job journal, and the turn ends with its commit', async () => {
    const session = await h.session();
    // a first turn: the process reads what it keeps per session (session.created) before the counted one
    const first = await h.input(session, 'first');
    expect(await runner.turn(first, turnContext())).toEqual({ kind: 'done' });
    const job = await h.input(session, 'second');
    const journalReads = jest.spyOn(h.deps.store, 'readPendingSuffix');
    const streamReads = jest.spyOn(h.deps.store, 'readStream');
    const lastReads = jest.spyOn(h.deps.store, 'lastOfType');
    try {
      expect(await runner.turn(job, turnContext())).toEqual({ kind: 'done' });
      expect((await h.types(job.sessionId)).filter((t) => t === 'turn.committed@1')).toHaveLength(2);
      expect(journalReads).toHaveBeenCalledTimes(1);
      // catch-up reads (past a version), not the head reads of session.created
      expect(streamReads.mock.calls.filter(([, after]) => (after ?? 0) > 0)).toEqual([]);
      // the player's preferences before the input came with the journal's read: no read of their own
      expect(lastReads).not.toHaveBeenCalled();
    } finally {
      lastReads.mockRestore();
      journalReads.mockRestore();
      streamReads.mockRestore();
    }
  });

  it('the history and summaries the runtime reads come with the journal’s read (no read of their own), as their own read gives them', async () => {
    const session = await h.session();
    const first = await h.input(session, 'first');
    expect(await runner.turn(first, turnContext())).toEqual({ kind: 'done' });
    const job = await h.input(session, 'second');
    const before = await loadRuntimeHistory(h.deps.readModels, job.tenantId, job.sessionId, historyReadLimit(h.deps));
    expect(before.messages.length).toBeGreaterThan(0);
    const views = jest.spyOn(h.deps.readModels, 'historyView');
    const summaries = jest.spyOn(h.deps.readModels, 'summaries');
    try {
      expect(await runner.turn(job, turnContext())).toEqual({ kind: 'done' });
      expect(views).not.toHaveBeenCalled();
      expect(summaries).not.toHaveBeenCalled();
    } finally {
      views.mockRestore();
      summaries.mockRestore();
    }
    // the request the model got is the one a rebuild from the log makes (with the history read on its own)
    const audit = await auditTurn({ ...h.deps, historyReadLimit: historyReadLimit(h.deps) }, job.sessionId, job.turnId);
    expect(audit.identical).toBe(true);
  });

  it('the metrics take a committed turn’s timeline from the journal’s read and the turn’s appends: no statement of their own', async () => {
    const metrics = new EngineMetrics();
    const counter = new QueryCounter();
    metrics.attach({ db: h.database.db.withPlugin(counter) });
    const deps = { ...h.deps, metrics, store: new EventStore(h.database.db, { inline: engineInlineProjections, onAppended: metrics.onAppended }) };
    const hooked = new TurnRunner(deps);
    const session = await h.session();
    for (const text of ['first', 'second']) {
      const job = await h.input(session, text);
      expect(await hooked.turn(job, turnContext())).toEqual({ kind: 'done' });
    }
    await metrics.settled();
    expect(counter.queries).toBe(0);
    const body = parseExposition((await metrics.exposition()).body);
    expect(total(body, 'covel_turn_latency_seconds_count')).toBe(2);
    expect(total(body, 'covel_turn_engine_overhead_seconds_count')).toBe(2);
  });
});
