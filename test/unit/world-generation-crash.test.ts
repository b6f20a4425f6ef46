import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine, type Engine, engineInlineProjections, generatedWorldKey, loadConfig, WorldGenerationRunner } from '../../libs/engine';
import { type AppendRequest, type AppendResult, EventStore, type EventType } from '../../libs/events';

const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

/** The log as a worker sees it, until the worker dies: the append of `dieAt` never happens, nor anything after it. */
class DyingStore extends EventStore {
  dead = false;
  constructor(
    engine: Engine,
    private readonly dieAt: EventType,
  ) {
    super(engine.database.db, { inline: engineInlineProjections });
  }

  override async append(request: AppendRequest): Promise<AppendResult> {
    if (this.dead || request.events.some((e) => e.type === this.dieAt)) {
      this.dead = true;
      throw new Error('worker killed');
    }
    return super.append(request);
  }
}

/** A store whose append of `failAt` fails once (a dropped connection), and works again after. */
class FlakyStore extends EventStore {
  failed = false;
  constructor(
    engine: Engine,
    private readonly failAt: EventType,
  ) {
    super(engine.database.db, { inline: engineInlineProjections });
  }

  override async append(request: AppendRequest): Promise<AppendResult> {
    if (!this.failed && request.events.some((e) => e.type === this.failAt)) {
      this.failed = true;
      throw new Error('connection reset');
    }
    return super.append(request);
  }
}

/**
 * Issue 29 acceptance: "a kill -9 during generation ends with one world or a failed job, never two".
 * The engine runs no worker here: the job is run by hand, first by a worker that dies at one append
 * (everything before it is in the log, nothing after), then by another, as the queue would retry it.
 */
describe('world generation: a worker that dies at any step, and a job run twice, make one world', () => {
  let engine: Engine;
  let dir = '';
  let tenantId = '';
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'covel-test-'));
    const { DATABASE_URL, REDIS_URL, OPENAI_API_KEY, COVEL_EMULATOR_URL, ...inherited } = process.env;
    engine = await createEngine(loadConfig({ ...inherited, COVEL_DATA_DIR: dir, PORT: '0' }), 'all', quiet);
    tenantId = (await engine.tenants.create('crash')).tenant.id;
  }, 60_000);
  afterAll(async () => {
    await engine?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const worldsOfJob = async (jobId: string) =>
    (await engine.database.db.selectFrom('events').selectAll().where('type', '=', 'world.created@1').execute()).filter(
      (row) => (row.data as { provenance: { jobId?: string } }).provenance.jobId === jobId,
    );
  const worldCallsSince = (from: number) => engine.emulator!.requests.slice(from).filter((r) => r.raw.includes('world-brief'));

  it.each([
    // died before the call was recorded: it was never sent
    ['world-generation.call-requested@1', 1],
    // died with the model's reply in hand: the recorded call is sent again, byte for byte
    ['world-generation.call-responded@1', 2],
    // died after the world's append, before the job's end: the next run finds that world
    ['world-generation.completed@1', 1],
  ] as const)(
    'dies at %s: the next run ends the job with one world (%i model call(s))',
    async (dieAt, modelCalls) => {
      const { answer } = await engine.worldGeneration.request({ tenantId, description: `A harbour town, crash at ${dieAt}`, locale: 'en' });
      const job = { tenantId, jobId: answer.jobId };
      const from = engine.emulator!.requests.length;
      const dying = new WorldGenerationRunner({
        store: new DyingStore(engine, dieAt),
        worlds: engine.worlds,
        providers: engine.providers,
        creation: engine.worldCreation,
        logger: quiet,
      });
      await expect(dying.run(job, { attemptsMade: 0, maxAttempts: 5 })).rejects.toThrow('worker killed');
      const cut = await engine.worldGeneration.view(tenantId, job.jobId);
      expect(cut.status).not.toBe('done');
      expect(await worldsOfJob(job.jobId)).toHaveLength(dieAt === 'world-generation.completed@1' ? 1 : 0);

      expect(await engine.worldGenerationRunner!.run(job, { attemptsMade: 1, maxAttempts: 5 })).toEqual({ kind: 'done' });
      // a late duplicate of the job (a stalled BullMQ job taken over) changes nothing
      expect(await engine.worldGenerationRunner!.run(job, { attemptsMade: 0, maxAttempts: 5 })).toEqual({ kind: 'done' });
      const done = await engine.worldGeneration.view(tenantId, job.jobId);
      expect(done).toMatchObject({ status: 'done', round: 0 });
      const worlds = await worldsOfJob(job.jobId);
      expect(worlds.map((w) => w.stream_id)).toEqual([done.worldId]);
      const sent = worldCallsSince(from);
      expect(sent).toHaveLength(modelCalls);
      const events = await engine.store.readStream(job.jobId);
      const recorded = events.flatMap((e) => (e.type === 'world-generation.call-requested@1' ? [e.data.body] : []));
      expect(recorded).toHaveLength(1);
      for (const request of sent) expect(request.raw).toBe(recorded[0]);
      expect(events.filter((e) => e.type === 'world-generation.completed@1')).toHaveLength(1);
      expect((await engine.worldGeneration.audit(tenantId, job.jobId)).identical).toBe(true);
    },
    60_000,
  );

  it('two workers running the same job at once make one world', async () => {
    const { answer } = await engine.worldGeneration.request({ tenantId, description: 'Twin lighthouses', locale: 'en' });
    const job = { tenantId, jobId: answer.jobId };
    const other = new WorldGenerationRunner({
      store: engine.store,
      worlds: engine.worlds,
      providers: engine.providers,
      creation: engine.worldCreation,
      logger: quiet,
    });
    const outcomes = await Promise.all([
      engine.worldGenerationRunner!.run(job, { attemptsMade: 0, maxAttempts: 5 }),
      other.run(job, { attemptsMade: 0, maxAttempts: 5 }),
    ]);
    expect(outcomes).toEqual([{ kind: 'done' }, { kind: 'done' }]);
    expect(await worldsOfJob(job.jobId)).toHaveLength(1);
    const events = await engine.store.readStream(job.jobId);
    expect(events.filter((e) => e.type === 'world-generation.completed@1')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'world-generation.call-requested@1')).toHaveLength(1);
  }, 60_000);

  /** A world made under the job's key by an earlier deploy, whose document (hence request hash) this deploy would not derive. */
  const olderDeploysWorld = (jobId: string) =>
    engine.worlds.create({
      tenantId,
      document: {
        name: 'Lantern 灯塔 مرفأ 🏮',
        lore: 'The harbour as an older deploy wrote it. 👩‍👩‍👧 live by the quay.',
        characters: [{ id: 'keeper', name: 'Keeper 守', type: 'player', description: 'Keeps the lantern.' }],
      },
      provenance: { kind: 'generated', jobId, model: 'older-model', template: 'world-generation' },
      idempotencyKey: generatedWorldKey(jobId),
    });

  const expectDoneWith = async (jobId: string, worldId: string) => {
    expect(await engine.worldGeneration.view(tenantId, jobId)).toMatchObject({ status: 'done', worldId, error: null });
    expect((await worldsOfJob(jobId)).map((w) => w.stream_id)).toEqual([worldId]);
    const types = (await engine.store.readStream(jobId)).map((e) => e.type);
    expect(types.filter((t) => t === 'world-generation.completed@1')).toHaveLength(1);
    expect(types).not.toContain('world-generation.failed@1');
  };

  it('the job’s `completed` append fails on the last attempt after its world was made: the job ends done with that world', async () => {
    const { answer } = await engine.worldGeneration.request({ tenantId, description: 'A mill on a tidal river', locale: 'en' });
    const job = { tenantId, jobId: answer.jobId };
    const flaky = new WorldGenerationRunner({
      store: new FlakyStore(engine, 'world-generation.completed@1'),
      worlds: engine.worlds,
      providers: engine.providers,
      creation: engine.worldCreation,
      logger: quiet,
    });
    expect(await flaky.run(job, { attemptsMade: 4, maxAttempts: 5 })).toEqual({ kind: 'done' });
    const worlds = await worldsOfJob(job.jobId);
    expect(worlds).toHaveLength(1);
    await expectDoneWith(job.jobId, worlds[0].stream_id);
  }, 60_000);

  it('a world already recorded under the job’s key with another document hash (an older deploy’s): the job ends done with it', async () => {
    const { answer } = await engine.worldGeneration.request({ tenantId, description: 'A harbour after a deploy', locale: 'en' });
    const job = { tenantId, jobId: answer.jobId };
    const world = (await olderDeploysWorld(job.jobId)).answer;
    const from = engine.emulator!.requests.length;
    expect(await engine.worldGenerationRunner!.run(job, { attemptsMade: 0, maxAttempts: 5 })).toEqual({ kind: 'done' });
    await expectDoneWith(job.jobId, world.id);
    // the job had its world: no model call made another
    expect(worldCallsSince(from)).toHaveLength(0);
  }, 60_000);

  it('another deploy’s worker makes the job’s world while this one creates it (key mismatch): the job ends done with that world', async () => {
    const { answer } = await engine.worldGeneration.request({ tenantId, description: 'A harbour raced by two deploys', locale: 'en' });
    const job = { tenantId, jobId: answer.jobId };
    let theirs = '';
    const racing = new WorldGenerationRunner({
      store: engine.store,
      worlds: {
        create: async (request) => {
          theirs = (await olderDeploysWorld(job.jobId)).answer.id;
          return engine.worlds.create(request);
        },
      },
      providers: engine.providers,
      creation: engine.worldCreation,
      logger: quiet,
    });
    expect(await racing.run(job, { attemptsMade: 0, maxAttempts: 5 })).toEqual({ kind: 'done' });
    expect(theirs).not.toBe('');
    await expectDoneWith(job.jobId, theirs);
  }, 60_000);

  it('a provider that keeps failing fails the job on its last attempt, with the provider’s code; no world', async () => {
    const { answer } = await engine.worldGeneration.request({ tenantId, description: 'A city under the ice', locale: 'en' });
    const job = { tenantId, jobId: answer.jobId };
    // the adapter retries a 503 itself before the job sees it fail: enough faults for one attempt
    engine.emulator!.injectFault({ status: 503, times: 20, message: 'overloaded' });
    await expect(engine.worldGenerationRunner!.run(job, { attemptsMade: 0, maxAttempts: 2 })).rejects.toThrow();
    expect((await engine.worldGeneration.view(tenantId, job.jobId)).status).toBe('drafting');
    expect(await engine.worldGenerationRunner!.run(job, { attemptsMade: 1, maxAttempts: 2 })).toEqual({ kind: 'done' });
    const failed = await engine.worldGeneration.view(tenantId, job.jobId);
    expect(failed).toMatchObject({ status: 'failed', progress: 'failed', worldId: null, error: { code: 'PROVIDER_503' } });
    expect(await worldsOfJob(job.jobId)).toHaveLength(0);
  }, 60_000);
});
