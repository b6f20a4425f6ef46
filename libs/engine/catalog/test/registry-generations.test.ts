import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StoredEvent } from '../../../events';
import { CatalogGenerations } from '../catalog-generations';
import { loadCatalog, reloadPlugins } from '../plugin-reload';
import { rebuildRequests } from '../../audit/request-rebuild';
import { claimExecution } from '../../turn/claim';
import { historyReadLimit, type TurnDeps } from '../../execution/deps';
import { runRuntimeStep } from '../../turn/runtime-step';
import { loadSessionJournal } from '../../session/session-reads';
import { TurnRunner } from '../../turn/turn-runner';
import { type TurnHarness, turnHarness } from '../../turn/test/harness';

type Data = Record<string, unknown>;
const of = (events: StoredEvent[], type: string) => events.filter((e) => e.type === type).map((e) => e.data as Data);
const systemOf = (call: Data) => (JSON.parse(call.body as string) as { messages: { content: string }[] }).messages[0].content;

/** Two plugins: `lookout` in pre-turn, `teller` in the narrative stage; the bodies name their version. */
function writePlugins(dir: string, version: string) {
  const plugin = (id: string, stage: string, outputKind: string) =>
    `---\nid: ${id}\nname: ${id}\nversion: 0.0.1\ncontributes:\n  prompt:\n    - id: rule\n      content: ${id} rule ${version}\n      position: system\nruntime:\n  schedule:\n    stage: ${stage}\n  outputKind: ${outputKind}\n---\n${id} body ${version}\n`;
  for (const [id, stage, kind] of [
    ['lookout', 'pre-turn', 'none'],
    ['teller', 'narrative', 'story'],
  ]) {
    mkdirSync(join(dir, id), { recursive: true });
    writeFileSync(join(dir, id, 'PLUGIN.md'), plugin(id, stage, kind));
  }
}

describe('registry generations (spec §6): running executions keep the plugins they started with', () => {
  let dir: string;
  let h: TurnHarness;
  let deps: TurnDeps;
  let generations: CatalogGenerations;
  const config = () => ({ pluginsDir: dir, plugins: { handlerTimeoutMs: 5_000 } });
  const logger = { log: () => undefined, warn: () => undefined, error: () => undefined };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'covel-generations-'));
    writePlugins(dir, 'v1');
    h = await turnHarness({ pluginsDir: dir });
    generations = new CatalogGenerations(h.deps.catalog);
    deps = { ...h.deps, generations };
  });
  afterAll(async () => {
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const claim = async (job: { sessionId: string; executionId: string; tenantId: string }) => {
    const journal = await loadSessionJournal(deps, job);
    return (await claimExecution(deps, job, journal, journal.get(job.executionId)!))!;
  };
  const step = (job: { sessionId: string; executionId: string; tenantId: string }, attempt: number, id: string) =>
    runRuntimeStep(deps, { ...job, attempt, pluginId: id, runtimeId: id });

  it('a reload mid-execution: its later stage still uses the old body and static segment; the next execution uses the new; the rebuild is identical', async () => {
    const session = await h.session();
    const first = await h.input(session, 'first');
    const a1 = await claim(first);
    const g1 = deps.catalog.generation;
    expect(await step(first, a1, 'lookout')).toBe('produced');

    writePlugins(dir, 'v2');
    const reload = await reloadPlugins({ config: config(), generations, turnDeps: deps, logger });
    expect(reload.changed).toBe(true);
    expect(reload.generation).not.toBe(g1);
    expect(deps.catalog.generation).toBe(reload.generation);
    expect(reload.held).toEqual([g1, reload.generation]);
    // the same files again: nothing changes
    expect((await reloadPlugins({ config: config(), generations, turnDeps: deps, logger })).changed).toBe(false);

    // the running execution's narrative stage, in a retried attempt: the generation its first start captured
    const retried = await claim(first);
    expect(retried).toBe(a1 + 1);
    expect(await step(first, retried, 'teller')).toBe('produced');
    // the next execution captures the new generation
    const second = await h.input(session, 'second');
    const a2 = await claim(second);
    expect(await step(second, a2, 'lookout')).toBe('produced');
    expect(await step(second, a2, 'teller')).toBe('produced');

    const events = await h.events(session.sessionId);
    expect(of(events, 'execution.started@1').map((e) => e.generation)).toEqual([g1, g1, reload.generation]);
    const calls = of(events, 'llm.calling@1').map((c) => [c.runtimeId, systemOf(c)] as const);
    expect(calls.map(([id, system]) => [id, system.includes(`${id} body v1`), system.includes(`${id} body v2`), system.includes('rule v1')])).toEqual([
      ['lookout', true, false, true],
      ['teller', true, false, true],
      ['lookout', false, true, false],
      ['teller', false, true, false],
    ]);
    expect(of(events, 'turn.committed@1')).toHaveLength(2);

    const rebuilt = await rebuildRequests(events, deps.catalog, deps.providers, deps.worlds, { historyReadLimit: historyReadLimit(deps), generations });
    expect(rebuilt.map((c) => c.identical)).toEqual([true, true, true, true]);
    // without the earlier generation, the rebuild says which generation it lacks
    await expect(rebuildRequests(events, deps.catalog, deps.providers, deps.worlds, { historyReadLimit: historyReadLimit(deps) })).rejects.toMatchObject({
      code: 'PLUGIN_GENERATION_UNAVAILABLE',
    });
  });

  it('an execution whose generation this process does not hold fails clearly; the worker goes on', async () => {
    const session = await h.session();
    const job = await h.input(session, 'stale');
    const attempt = await claim(job);
    const captured = deps.catalog.generation;
    writePlugins(dir, 'v3');
    // a process that holds only the newest generation (e.g. started after the reload)
    const fresh = await loadCatalog(config());
    const other: TurnDeps = { ...deps, catalog: fresh, generations: new CatalogGenerations(fresh) };
    const runner = new TurnRunner(other);
    await expect(runner.runtime({ ...job, attempt, pluginId: 'lookout', runtimeId: 'lookout' }, { attemptsMade: 0, maxAttempts: 3 })).resolves.toEqual({
      kind: 'done',
    });
    const events = await h.events(session.sessionId);
    const [failed] = of(events, 'execution.failed@1');
    expect(failed).toMatchObject({ executionId: job.executionId, error: { code: 'PLUGIN_GENERATION_UNAVAILABLE' } });
    expect((failed.error as { message: string }).message).toContain(captured);
    expect(of(events, 'llm.calling@1')).toHaveLength(0);

    // the next execution runs with the generation that process holds
    const next = await h.input(session, 'fresh');
    const journal = await loadSessionJournal(other, next);
    const a = (await claimExecution(other, next, journal, journal.get(next.executionId)!))!;
    expect(await runRuntimeStep(other, { ...next, attempt: a, pluginId: 'lookout', runtimeId: 'lookout' })).toBe('produced');
    const call = of(await h.events(session.sessionId), 'llm.calling@1')[0];
    expect(systemOf(call)).toContain('lookout body v3');
  });
});
