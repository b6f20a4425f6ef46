import { Queue } from 'bullmq';
import { WORLD_QUEUE_NAME } from '../../libs/engine';
import { type CrashStack, crashStack, sleep } from '../support/crash-stack';

/**
 * Issue 29 acceptance: "a kill -9 during generation ends with one world or a failed job, never two".
 * Two workers on BullMQ and PostgreSQL; the one running a world generation job is killed with
 * SIGKILL while the draft's model call is out. BullMQ's stalled check gives the job to the other
 * worker, which sends the recorded call again (its recorded bytes) and makes the world, once.
 */
describe('worker killed in the middle of a world generation job', () => {
  let crash: CrashStack;
  let worlds: Queue;
  beforeAll(async () => {
    // slow model calls so the kill lands while the call is out; a short job lock and stalled check:
    // the killed worker's job is taken over within ~3 s instead of ~10 s (a live worker renews its lock)
    crash = await crashStack({
      workers: 2,
      workerEnv: { COVEL_EMULATOR_DELAY_MS: '2500', COVEL_JOB_LOCK_MS: '2000', COVEL_STALLED_INTERVAL_MS: '500' },
    });
    worlds = new Queue(WORLD_QUEUE_NAME, { connection: crash.redis, prefix: crash.stack.env.COVEL_QUEUE_PREFIX });
  }, 120_000);
  afterAll(async () => {
    await worlds?.close();
    await crash?.stop();
  }, 60_000);

  it('the job goes on on the other worker and makes exactly one world', async () => {
    const { client } = crash.stack;
    const { jobId } = await client.request<{ jobId: string }>('POST', '/v1/worlds/generate', { description: 'A monastery on a glacier 🏔️', locale: 'en' });

    // the draft's call is recorded (so it is out, or about to be): kill the worker that runs the job
    let victim: string | undefined;
    for (const deadline = Date.now() + 30_000; !victim && Date.now() < deadline; await sleep(20)) {
      const recorded = await crash.db.query(`select 1 from events where stream_id = $1 and type = 'world-generation.call-requested@1'`, [jobId]);
      if (!recorded.rowCount) continue;
      victim = (await worlds.getActive()).find((j) => (j.data as { jobId: string }).jobId === jobId)?.processedBy;
    }
    expect(victim).toMatch(/^w[12]$/);
    await crash.kill(victim!);
    const killedAt = Date.now();

    let progress = { status: '', worldId: null as string | null };
    for (let i = 0; i < 5 && progress.status !== 'done' && progress.status !== 'failed'; i++) {
      progress = await client.request('GET', `/v1/worlds/generate/${jobId}?waitMs=20000`);
    }
    console.log(`worker kill -9 during a world generation: ${progress.status} ${Date.now() - killedAt} ms after the kill`);
    expect(progress.status).toBe('done');
    const types = (await crash.db.query(`select type from events where stream_id = $1 order by stream_version`, [jobId])).rows.map(
      (r: { type: string }) => r.type,
    );
    expect(types.filter((t) => t === 'world-generation.call-requested@1')).toHaveLength(1);
    expect(types.filter((t) => t === 'world-generation.call-responded@1')).toHaveLength(1);
    expect(types.filter((t) => t === 'world-generation.completed@1')).toHaveLength(1);
    const made = await crash.db.query(`select stream_id from events where type = 'world.created@1' and data->'provenance'->>'jobId' = $1`, [jobId]);
    expect(made.rows.map((r: { stream_id: string }) => r.stream_id)).toEqual([progress.worldId]);
    const audit = await client.request<{ identical: boolean }>('GET', `/v1/worlds/generate/${jobId}/audit`);
    expect(audit.identical).toBe(true);
  }, 180_000);
});
