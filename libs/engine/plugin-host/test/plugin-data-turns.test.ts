import { join } from 'node:path';
import { sql } from 'kysely';
import { PluginDataStore, type StoredEvent } from '../../../events';
import { behaviour, calls } from '../../../../test/fixtures/data-plugins/ledger/server';
import { QueryCounter } from '../../../../test/support/query-counter';
import { claimExecution } from '../../turn/claim';
import { historyReadLimit } from '../../execution/deps';
import { runRuntimeStep } from '../../turn/runtime-step';
import { loadSessionJournal } from '../../session/session-reads';
import { TurnRunner } from '../../turn/turn-runner';
import { eventually, type TurnHarness, turnHarness } from '../../turn/test/harness';
import { rebuildRequests } from '../../audit/request-rebuild';
import type { TurnJob } from '../../queue';
import { storePluginData } from '../store-plugin-data';
import { RuntimeCatalog } from '../../catalog/runtime-catalog';
import type { LoadedPlugin } from '../../../plugins-sdk';

const DATA_PLUGINS = join(__dirname, '..', '..', '..', '..', 'test', 'fixtures', 'data-plugins');
const TIMEOUT_MS = 300;

type Data = Record<string, unknown>;
const of = (events: StoredEvent[], type: string, executionId?: string) =>
  events.filter((e) => e.type === type && (executionId === undefined || (e.data as Data).executionId === executionId)).map((e) => e.data as Data);

/** The turn-context message of each recorded request (by its layout). */
function turnContexts(events: StoredEvent[], executionId?: string): string[] {
  return of(events, 'llm.calling@1', executionId).map((call) => {
    const body = JSON.parse(call.body as string) as { messages: { role: string; content: string }[] };
    const sections = (call.layout as { messageSections: string[] }).messageSections;
    return body.messages[sections.indexOf('turn-context')].content;
  });
}

describe('plugin data in real turns (ledger: a function runtime writes in pre-turn, an agent reads io.selfData in narrative, a segment reads ctx.pluginData)', () => {
  let h: TurnHarness;
  beforeAll(async () => {
    h = await turnHarness({ pluginsDir: DATA_PLUGINS, handlerTimeoutMs: TIMEOUT_MS, handlers: (deps) => new TurnRunner(deps) });
  });
  afterAll(() => h.close());
  beforeEach(() => {
    Object.assign(behaviour, { tally: 'ok', segmentWrites: false, duringSegment: null, lateWrite: null });
    h.deps.pluginData = new PluginDataStore(h.database.db);
  });

  const status = async (job: TurnJob) => (await h.deps.readModels.execution(job.tenantId, job.executionId))?.status;
  const ended = (job: TurnJob) => eventually(async () => ['committed', 'failed'].includes((await status(job)) ?? ''), 'the execution ended');
  const rebuild = async (sessionId: string) =>
    rebuildRequests(await h.events(sessionId), h.deps.catalog, h.deps.providers, h.deps.worlds, { historyReadLimit: historyReadLimit(h.deps) });
  const turn = async (session: { tenantId: string; sessionId: string }, text: string) => {
    const job = await h.input(session, text);
    await h.queue.enqueue(job);
    await ended(job);
    return job;
  };
  /** `rows` rows `k1`…`kN` (`{ n }`) in the ledger's namespace `big`, written straight to the table (no events). */
  const bigLedger = async (session: { tenantId: string; sessionId: string }, rows: number) => {
    await sql`
      insert into plugin_data (tenant_id, session_id, plugin_id, namespace, key, value, created_position, updated_position)
      select ${session.tenantId}, ${session.sessionId}, 'ledger', 'big', 'k' || g, jsonb_build_object('n', g), g, g
      from generate_series(1, ${rows}) g`.execute(h.database.db);
    await sql`
      insert into plugin_data_namespaces (tenant_id, session_id, plugin_id, namespace, row_count)
      values (${session.tenantId}, ${session.sessionId}, 'ledger', 'big', ${rows})`.execute(h.database.db);
  };
  const claimed = async (job: TurnJob) => {
    const journal = await loadSessionJournal(h.deps, job);
    return (await claimExecution(h.deps, job, journal, journal.get(job.executionId)!))!;
  };

  it('stage 2 sees what the function wrote in stage 1: selfData rows (through the data boundary) and the segment in its turn context; the rebuild is identical', async () => {
    const session = await h.session();
    const before = { ...calls };
    const first = await turn(session, 'Open the ledger');
    expect(await status(first)).toBe('committed');
    expect(calls.tally - before.tally).toBe(1);
    let events = await h.events(session.sessionId);

    // the writes, the output and (the last stage being later) nothing else: one append, writes first
    const tallyOutput = events.findIndex((e) => e.type === 'runtime.output.produced@1' && (e.data as Data).runtimeId === 'tally');
    expect(events.slice(tallyOutput - 3, tallyOutput + 1).map((e) => e.type)).toEqual([
      'plugin-data.written@1',
      'plugin-data.written@1',
      'plugin-data.written@1',
      'runtime.output.produced@1',
    ]);
    expect(of(events, 'plugin-data.written@1').map((w) => [w.pluginId, w.namespace, w.key, w.attempt])).toEqual([
      ['ledger', 'facts', 'turn-1', 1],
      ['ledger', 'facts', 'latest', 1],
      ['ledger', '_hidden.secrets', 'villain', 1],
    ]);
    // the output is the JSON text of the result (reads saw the function's own writes; a missing key is null)
    const output = events[tallyOutput].data as Data;
    expect(output).toMatchObject({ stage: 'pre-turn', outputKind: 'structured' });
    expect(JSON.parse(output.text as string)).toEqual({ turn: 1, keys: ['turn-1', 'latest'], latest: { turn: 1 }, missing: null });
    // a function runtime calls no model
    expect(of(events, 'llm.calling@1').map((c) => c.runtimeId)).toEqual(['chronicle']);

    const [context] = turnContexts(events);
    expect(context).toContain(
      '<self-data namespace="facts">\n- turn-1 | {"date":"the third day of Frost","note":"Turn 1: 墨 🙂"}\n- latest | {"turn":1}\n</self-data>',
    );
    expect(context).toContain('Ledger latest: {"turn":1}');
    expect(context).not.toContain(session.sessionId);
    expect(context).not.toContain('2026-01-02');
    expect(context).not.toContain('the miller'); // _hidden.secrets is not declared, and could not be

    // the store holds the rows (the inline read model of the session)
    const stored = h.deps.pluginData.scope({ ...session, pluginId: 'ledger' });
    expect((await stored.list('facts')).map((r) => r.key)).toEqual(['turn-1', 'latest']);

    // turn 2: turn-1 deleted, turn-2 written, latest rewritten (keeps its place by creation)
    const second = await turn(session, 'Turn the page');
    expect(await status(second)).toBe('committed');
    events = await h.events(session.sessionId);
    expect(of(events, 'plugin-data.deleted@1').map((d) => [d.namespace, d.key])).toEqual([['facts', 'turn-1']]);
    const [, context2] = turnContexts(events);
    expect(context2).toContain(
      '<self-data namespace="facts">\n- latest | {"turn":2}\n- turn-2 | {"date":"the third day of Frost","note":"Turn 2: 墨 🙂"}\n</self-data>',
    );
    expect(context2).toContain('Ledger latest: {"turn":2}');

    const counted = { ...calls };
    const rebuilt = await rebuild(session.sessionId);
    expect(rebuilt.map((c) => [c.runtimeId, c.identical])).toEqual([
      ['chronicle', true],
      ['chronicle', true],
    ]);
    expect(calls).toEqual(counted); // no plugin code ran in the rebuild
    expect(rebuilt[1].sources.find((x) => x.section === 'turn-context')?.items).toEqual(['self-data facts: 2 of 2 rows', 'ledger/ledger-latest']);
  });

  it('spec §1 "Injecting the hidden world data _hidden.* throws an error directly": a runtime whose io.selfData names _hidden.* (a manifest that skipped the loader\'s check) fails with HIDDEN_DATA_INJECTION; nothing is sent', async () => {
    // the loader refuses such a manifest at start-up (function-entries.test.ts); this catalog's chronicle bypasses it
    const loaded = h.deps.catalog;
    const hiddenToo = (plugin: LoadedPlugin): LoadedPlugin => ({
      ...plugin,
      runtimes: plugin.runtimes.map((r) =>
        r.id === 'chronicle'
          ? { ...r, manifest: { ...r.manifest, io: { ...r.manifest.io, selfData: [...r.manifest.io.selfData, { namespace: '_hidden.secrets' }] } } }
          : r,
      ),
    });
    h.deps.catalog = new RuntimeCatalog(loaded.plugins.map(hiddenToo), loaded.stages, loaded.host);
    try {
      const session = await h.session();
      const from = h.emulator.requests.length;
      const job = await turn(session, 'Read the secrets');
      expect(await status(job)).toBe('failed');
      const events = await h.events(session.sessionId);
      // the function wrote the secret row in stage 1; the agent's request is never assembled, nothing reaches the model
      expect(of(events, 'plugin-data.written@1').map((w) => w.namespace)).toContain('_hidden.secrets');
      expect(of(events, 'llm.calling@1')).toEqual([]);
      expect(h.emulator.requests.length).toBe(from);
      expect(of(events, 'execution.failed@1').map((f) => f.error)).toEqual([
        {
          code: 'HIDDEN_DATA_INJECTION',
          message: expect.stringContaining('"_hidden.secrets" is hidden world data (_hidden.*) and cannot be injected into a prompt'),
        },
      ]);
    } finally {
      h.deps.catalog = loaded;
    }
  });

  it('two copies of one function job at once: the first append wins, the other records nothing', async () => {
    const job = await h.input(await h.session(), 'twice');
    const attempt = await claimed(job);
    const tally = { ...job, attempt, pluginId: 'ledger', runtimeId: 'tally' };
    const results = await Promise.all([runRuntimeStep(h.deps, tally), runRuntimeStep(h.deps, tally)]);
    expect(results.sort()).toEqual(['produced', 'reused']);
    const events = await h.events(job.sessionId);
    expect(of(events, 'plugin-data.written@1')).toHaveLength(3);
    expect(of(events, 'runtime.output.produced@1')).toHaveLength(1);
  });

  it('a function runtime runs once per execution: a repeated or retried job reuses the recorded output and writes', async () => {
    const job = await h.input(await h.session(), 'once');
    const first = await claimed(job);
    const before = calls.tally;
    const tally = { ...job, attempt: first, pluginId: 'ledger', runtimeId: 'tally' };
    expect(await runRuntimeStep(h.deps, tally)).toBe('produced');
    expect(await runRuntimeStep(h.deps, tally)).toBe('reused');
    const second = await claimed(job);
    expect(await runRuntimeStep(h.deps, { ...tally, attempt: second })).toBe('reused');
    expect(await runRuntimeStep(h.deps, { ...tally, attempt: second, runtimeId: 'chronicle' })).toBe('produced');
    expect(calls.tally).toBe(before + 1);
    const events = await h.events(job.sessionId);
    expect(of(events, 'plugin-data.written@1')).toHaveLength(3);
    expect(of(events, 'runtime.output.produced@1').filter((o) => o.runtimeId === 'tally')).toHaveLength(1);
    expect((await rebuild(job.sessionId)).every((c) => c.identical)).toBe(true);
  });

  it.each([
    ['throw', 'PLUGIN_FUNCTION_THREW', 'threw: the ink ran dry'],
    ['write-then-throw', 'PLUGIN_FUNCTION_THREW', 'threw: after writing'],
    ['hang', 'PLUGIN_FUNCTION_TIMEOUT', `did not answer within ${TIMEOUT_MS} ms`],
    ['bad-result', 'PLUGIN_FUNCTION_RESULT_INVALID', 'returned a value that is not JSON'],
    ['bad-key', 'PLUGIN_FUNCTION_THREW', 'ctx.pluginData set: key'],
  ] as const)(
    'a function that does "%s" fails that execution visibly, naming plugin and runtime; none of its writes is stored; the next input works',
    async (mode, code, detail) => {
      const session = await h.session();
      behaviour.tally = mode;
      const failing = await turn(session, 'break it');
      expect(await status(failing)).toBe('failed');
      behaviour.tally = 'ok';
      const next = await turn(session, 'carry on');
      expect(await status(next)).toBe('committed');

      const events = await h.events(session.sessionId);
      const [failure] = of(events, 'execution.failed@1');
      expect(failure).toMatchObject({ executionId: failing.executionId, error: { code } });
      const message = (failure.error as { message: string }).message;
      expect(message).toContain('plugin ledger: function runtime "tally"');
      expect(message).toContain(detail);
      expect(of(events, 'plugin-data.written@1', failing.executionId)).toEqual([]);
      expect(of(events, 'runtime.output.produced@1', failing.executionId)).toEqual([]);
      expect(of(events, 'llm.calling@1', failing.executionId)).toEqual([]);
      // the next turn's function starts from an empty namespace: the failed writes are nowhere
      const output = of(events, 'runtime.output.produced@1', next.executionId).find((o) => o.runtimeId === 'tally')!;
      expect(JSON.parse(output.text as string)).toMatchObject({ keys: ['turn-1', 'latest'] });
      expect((await rebuild(session.sessionId)).every((c) => c.identical)).toBe(true);
    },
  );

  it('a write after the function returned is refused and never stored', async () => {
    const session = await h.session();
    behaviour.tally = 'late-write';
    const job = await turn(session, 'late');
    expect(await status(job)).toBe('committed');
    await expect(behaviour.lateWrite).resolves.toMatchObject({ code: 'PLUGIN_DATA_REFUSED', message: expect.stringContaining('after the function run ended') });
    expect(await h.deps.pluginData.scope({ ...session, pluginId: 'ledger' }).get('facts', 'late')).toBeUndefined();
  });

  it('ctx.pluginData of a prompt.segment@1 handler is read-only: a write fails the runtime naming plugin, point and id', async () => {
    const session = await h.session();
    behaviour.segmentWrites = true;
    const job = await turn(session, 'write from a segment');
    expect(await status(job)).toBe('failed');
    const [failure] = of(await h.events(session.sessionId), 'execution.failed@1');
    expect(failure.error).toMatchObject({ code: 'PLUGIN_HANDLER_THREW' });
    expect((failure.error as { message: string }).message).toContain(
      'plugin ledger: prompt.segment@1 "ledger-latest" threw: plugin ledger: ctx.pluginData set: read-only',
    );
  });

  it('a write landing between the selfData read and the recorded call: that call is not recorded, the retried job reads anew; the rebuild is identical', async () => {
    const job = await h.input(await h.session(), 'race');
    const attempt = await claimed(job);
    const step = { ...job, attempt, pluginId: 'ledger', runtimeId: 'tally' };
    expect(await runRuntimeStep(h.deps, step)).toBe('produced');
    behaviour.duringSegment = async () => {
      await h.deps.store.append({
        tenantId: job.tenantId,
        streamId: job.sessionId,
        expectedVersion: await h.deps.store.streamVersion(job.sessionId),
        events: [
          {
            type: 'plugin-data.written@1',
            data: { executionId: job.executionId, turnId: job.turnId, attempt, pluginId: 'ledger', namespace: 'facts', key: 'raced', value: 'in between' },
          },
        ],
      });
    };
    await expect(runRuntimeStep(h.deps, { ...step, runtimeId: 'chronicle' })).rejects.toMatchObject({ code: 'PLUGIN_DATA_RACE', category: 'conflict' });
    let events = await h.events(job.sessionId);
    expect(of(events, 'llm.calling@1')).toEqual([]);
    expect(await runRuntimeStep(h.deps, { ...step, runtimeId: 'chronicle' })).toBe('produced');
    events = await h.events(job.sessionId);
    expect(turnContexts(events)[0]).toContain('- raced | "in between"');
    expect((await rebuild(job.sessionId)).map((c) => c.identical)).toEqual([true]);
  });

  it('every read is scoped to tenant, session and plugin', async () => {
    const a = await h.session();
    const b = await h.session();
    await turn(a, 'tenant a');
    const source = storePluginData(h.deps.pluginData);
    expect(await source.reader({ ...a, pluginId: 'ledger' }).get('facts', 'latest')).toEqual({ turn: 1 });
    expect(await source.reader({ tenantId: b.tenantId, sessionId: a.sessionId, pluginId: 'ledger' }).get('facts', 'latest')).toBeNull();
    expect(await source.reader({ ...b, pluginId: 'ledger' }).list('facts')).toEqual([]);
    expect(await source.reader({ ...a, pluginId: 'other' }).get('facts', 'latest')).toBeNull();
    const wrongTenant = await h.deps.pluginData.scope({ tenantId: b.tenantId, sessionId: a.sessionId, pluginId: 'ledger' }).selfData('facts');
    expect(wrongTenant).toEqual({ namespace: 'facts', rows: [], totalRows: 0 });
    // session b's own turn sees only its own rows
    await turn(b, 'tenant b');
    const [contextB] = turnContexts(await h.events(b.sessionId));
    expect(contextB).toContain(
      '<self-data namespace="facts">\n- turn-1 | {"date":"the third day of Frost","note":"Turn 1: 墨 🙂"}\n- latest | {"turn":1}\n</self-data>',
    );
  });

  it('a namespace of 10,000 rows: the turn asks the store for the bounded projection only (rows returned counted)', async () => {
    const session = await h.session();
    // over 150 times the rows the bounded read returns (a whole read would return them all): 100,000
    // rows cost about 7 s of CPU to insert and carry, 10,000 a tenth of it, for the same checks
    const ROWS = 10_000;
    await bigLedger(session, ROWS);
    const counter = new QueryCounter();
    h.deps.pluginData = new PluginDataStore(h.database.db.withPlugin(counter));
    const job = await turn(session, 'read the big ledger');
    expect(await status(job)).toBe('committed');
    // every plugin data read of the turn: the session's snapshot for the function's list and get (the
    // segment's get and the selfData of `facts` after its write take that snapshot with the write
    // applied, in memory: one read more before), `big` not in it (more rows than a snapshot takes of a
    // namespace) and read as its bounded projection; 50 rows of `big`, a few of `facts`
    expect(counter.queries).toBe(2);
    expect(counter.rows).toBeLessThanOrEqual(55);
    const [context] = turnContexts(await h.events(session.sessionId));
    const big = context.slice(context.indexOf('<self-data namespace="big">'));
    const rows = big.slice(0, big.indexOf('</self-data>')).split('\n').slice(1, -1);
    expect(rows).toHaveLength(51);
    expect(rows.slice(0, 2)).toEqual(['- k1 | {"n":1}', '- k2 | {"n":2}']);
    expect(rows.at(-2)).toBe(`- k${ROWS} | {"n":${ROWS}}`);
    expect(rows.at(-1)).toBe(`(50 of ${ROWS} rows shown)`);
  }, 60_000);

  it('a zh-Hans session: the selfData truncation note is in the instruction language (Chinese), the rows are not translated', async () => {
    const session = await h.session({ locale: 'zh-CN' });
    await bigLedger(session, 60);
    const job = await turn(session, '翻看账本');
    expect(await status(job)).toBe('committed');
    const [context] = turnContexts(await h.events(session.sessionId));
    const big = context.slice(context.indexOf('<self-data namespace="big">'));
    const rows = big.slice(0, big.indexOf('</self-data>')).split('\n').slice(1, -1);
    expect(rows).toHaveLength(51);
    expect(rows[0]).toBe('- k1 | {"n":1}');
    expect(rows.at(-1)).toBe('（显示 50 / 60 行）');
  });
});
