import { EventStore, inlineProjections, migrateToLatest, type NewEvent, openDatabase } from '../../../events';
import { QueryCounter } from '../../../../test/support/query-counter';
import { EngineMetrics, type TimelineEvent, turnTimeline, unionLength } from '..';
import { readTimeline } from '../turn-timeline';
import { StreamTails } from '../stream-tails';
import { parseExposition, total } from '../../../../test/support/prometheus-text';

const at = (type: string, recordedAt: number, extra: Partial<TimelineEvent> = {}): TimelineEvent => ({
  type,
  recordedAt,
  callId: null,
  attempt: null,
  stage: null,
  runtime: null,
  ...extra,
});

describe('turnTimeline', () => {
  it('overlapping model calls of parallel runtimes count once; a call without an answer adds nothing', () => {
    expect(
      unionLength([
        [0, 10],
        [5, 20],
        [30, 40],
      ]),
    ).toBe(30);
    expect(unionLength([])).toBe(0);
    const t = turnTimeline(
      [
        at('player-input.submitted@1', 1_000),
        at('execution.started@1', 1_010, { attempt: 1 }),
        at('llm.calling@1', 1_020, { callId: 'lost' }), // an attempt that died mid-call
        at('execution.started@1', 1_100, { attempt: 2 }),
        at('llm.calling@1', 1_110, { callId: 'a' }),
        at('llm.calling@1', 1_120, { callId: 'b' }),
        at('llm.responded@1', 1_300, { callId: 'a' }),
        at('runtime.output.produced@1', 1_300, { attempt: 2, stage: 'story', runtime: 'narrator/narrator' }),
        at('llm.responded@1', 1_400, { callId: 'b' }),
        at('runtime.output.produced@1', 1_400, { attempt: 2, stage: 'story', runtime: 'other/teller' }),
        at('runtime.output.produced@1', 1_500, { attempt: 2, stage: 'bookkeeping', runtime: 'codex/keeper' }),
        at('turn.committed@1', 1_500, { attempt: 2 }),
      ],
      2,
    );
    expect(t).toEqual({
      latencyMs: 500,
      modelMs: 290,
      overheadMs: 210,
      stages: [
        { stage: 'story', ms: 300 },
        { stage: 'bookkeeping', ms: 100 },
      ],
      runtimes: [
        { runtime: 'narrator/narrator', stage: 'story', ms: 200 },
        { runtime: 'other/teller', stage: 'story', ms: 300 },
        { runtime: 'codex/keeper', stage: 'bookkeeping', ms: 100 },
      ],
    });
  });

  it('outputs an earlier attempt produced (reused) are not this attempt’s runtimes; no input or commit: nothing', () => {
    const t = turnTimeline(
      [
        at('runtime.activated@1', 0),
        at('runtime.output.produced@1', 50, { attempt: 1, runtime: 'p/r' }),
        at('execution.started@1', 100, { attempt: 2 }),
        at('runtime.output.produced@1', 150, { attempt: 2, runtime: 'p/s' }),
        at('turn.committed@1', 150, { attempt: 2 }),
      ],
      2,
    );
    expect(t?.runtimes).toEqual([{ runtime: 'p/s', stage: '(none)', ms: 50 }]);
    expect(turnTimeline([at('turn.committed@1', 5)], 1)).toBeNull();
  });
});

describe('readTimeline', () => {
  it('reads a committed execution’s events in one statement, not another execution’s', async () => {
    const open = await openDatabase({ kind: 'pglite' });
    try {
      await migrateToLatest(open.db);
      const store = new EventStore(open.db, { inline: inlineProjections });
      const s = 'session-1';
      const input = (n: number): NewEvent => ({
        type: 'player-input.submitted@1',
        data: { executionId: `e${n}`, turnId: `t${n}`, messageId: `m${n}`, text: `${n}` },
      });
      const started = (n: number): NewEvent => ({ type: 'execution.started@1', data: { executionId: `e${n}`, turnId: `t${n}`, attempt: 1, workerId: 'w' } });
      const committed = (n: number): NewEvent => ({ type: 'turn.committed@1', data: { executionId: `e${n}`, turnId: `t${n}`, attempt: 1, messages: [] } });
      let version = 0;
      for (const events of [[input(1)], [started(1)], [committed(1)], [input(2)], [started(2)], [committed(2)]])
        version = (await store.append({ tenantId: 't', streamId: s, expectedVersion: version, events })).version;
      const counter = new QueryCounter();
      const events = await readTimeline(open.db.withPlugin(counter), { tenantId: 't', sessionId: s, executionId: 'e2', committedVersion: version });
      expect(counter.queries).toBe(1);
      expect(events.map((e) => [e.type, e.attempt])).toEqual([
        ['player-input.submitted@1', null],
        ['execution.started@1', 1],
        ['turn.committed@1', 1],
      ]);
      expect(await readTimeline(open.db, { tenantId: 'other', sessionId: s, executionId: 'e2', committedVersion: version })).toEqual([]);
    } finally {
      await open.close();
    }
  });
});

describe('a committed turn’s timeline from what the process holds', () => {
  const s = 'session-1';
  const input = (n: number): NewEvent => ({
    type: 'player-input.submitted@1',
    data: { executionId: `e${n}`, turnId: `t${n}`, messageId: `m${n}`, text: `${n}` },
  });
  const started = (n: number, attempt = 1): NewEvent => ({
    type: 'execution.started@1',
    data: { executionId: `e${n}`, turnId: `t${n}`, attempt, workerId: 'w' },
  });
  const committed = (n: number, attempt = 1): NewEvent => ({
    type: 'turn.committed@1',
    data: { executionId: `e${n}`, turnId: `t${n}`, attempt, messages: [] },
  });
  const ref = (executionId: string, committedVersion: number) => ({ tenantId: 't', sessionId: s, executionId, committedVersion });

  async function withStore(run: (store: EventStore, db: Awaited<ReturnType<typeof openDatabase>>['db']) => Promise<void>) {
    const open = await openDatabase({ kind: 'pglite' });
    try {
      await migrateToLatest(open.db);
      const store = new EventStore(open.db, { inline: inlineProjections });
      await run(store, open.db);
    } finally {
      await open.close();
    }
  }

  it('a journal read and the appends after it give the events the log read gives; a gap, another tenant or an input before the read: not answered', async () => {
    await withStore(async (store, db) => {
      const tails = new StreamTails();
      let version = 0;
      const append = async (events: NewEvent[], heard = true) => {
        const result = await store.append({ tenantId: 't', streamId: s, expectedVersion: version, events });
        version = result.version;
        if (heard) tails.appended(result.events);
        return result;
      };
      await append([input(1)]);
      await append([started(1)]);
      await append([committed(1)]);
      await append([input(2), input(3)]);
      // the journal's read: the pending suffix, from e2's input on
      tails.read((await store.readPendingSuffix('t', s)).events);
      await append([started(2, 1)]);
      await append([started(2, 2)]);
      await append([committed(2, 2)]);
      expect(tails.timeline(ref('e2', version))).toEqual(await readTimeline(db, ref('e2', version)));
      expect((await readTimeline(db, ref('e2', version))).map((e) => [e.type, e.attempt])).toEqual([
        ['player-input.submitted@1', null],
        ['execution.started@1', 1],
        ['execution.started@1', 2],
        ['turn.committed@1', 2],
      ]);
      expect(tails.timeline(ref('e2', version))).toBeUndefined(); // let go once asked
      // e3: its input is in the read, but an append this process did not make comes between
      tails.read((await store.readPendingSuffix('t', s)).events);
      await append([started(3)], false);
      await append([committed(3)]);
      expect(tails.timeline(ref('e3', version))).toBeUndefined();
      // another tenant's ref, or an execution whose input is before the read
      await append([input(4)]);
      tails.read((await store.readPendingSuffix('t', s)).events);
      await append([started(4)]);
      await append([committed(4)]);
      expect(tails.timeline({ ...ref('e4', version), tenantId: 'other' })).toBeUndefined();
      // a read that starts after the execution's input
      await append([input(5)]);
      await append([started(5)]);
      tails.read(await store.readStream(s, version - 1));
      await append([committed(5)]);
      expect(tails.timeline(ref('e5', version))).toBeUndefined();
    });
  });

  it('the metrics observe a turn committed after a journal read with no statement of their own; without the read, the log is read', async () => {
    await withStore(async (store, db) => {
      const metrics = new EngineMetrics();
      const counter = new QueryCounter();
      metrics.attach({ db: db.withPlugin(counter) });
      const hooked = new EventStore(db, { inline: inlineProjections, onAppended: metrics.onAppended });
      let version = (await store.append({ tenantId: 't', streamId: s, expectedVersion: 0, events: [input(1)] })).version;
      metrics.heard((await store.readPendingSuffix('t', s)).events);
      version = (await hooked.append({ tenantId: 't', streamId: s, expectedVersion: version, events: [started(1)] })).version;
      version = (await hooked.append({ tenantId: 't', streamId: s, expectedVersion: version, events: [committed(1)] })).version;
      await metrics.settled();
      expect(counter.queries).toBe(0);
      const scrape = async () => parseExposition((await metrics.exposition()).body);
      expect(total(await scrape(), 'covel_turn_latency_seconds_count')).toBe(1);
      // not heard: read from the log, observed the same (the scrape's own reads not counted)
      counter.queries = 0;
      version = (await store.append({ tenantId: 't', streamId: s, expectedVersion: version, events: [input(2)] })).version;
      version = (await hooked.append({ tenantId: 't', streamId: s, expectedVersion: version, events: [started(2)] })).version;
      await hooked.append({ tenantId: 't', streamId: s, expectedVersion: version, events: [committed(2)] });
      await metrics.settled();
      expect(counter.queries).toBe(1);
      expect(total(await scrape(), 'covel_turn_latency_seconds_count')).toBe(2);
    });
  });
});
