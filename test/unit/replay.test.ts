import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { openDatabase } from '../../libs/events';
import { startEmbedded } from '../support/embedded';
import { dumpProjections } from '../support/projection-dump';

const run = promisify(execFile);

describe('npm run replay', () => {
  it('rebuilds turn_messages and trace_events identical to the live ones', async () => {
    const covel = await startEmbedded({}, undefined, { onDisk: true });
    const client = await covel.newTenant();
    for (let s = 0; s < 3; s++) {
      const { id } = await client.createSession();
      for (let t = 0; t < 3; t++) await client.waitFor((await client.submit(id, `session ${s} move ${t}`)).executionId, 20_000);
    }
    await covel.engine.projector.drain();
    const live = await dumpProjections(covel.engine.database.db);
    expect(live.turn_messages).toHaveLength(18);
    expect(live.trace_events).toHaveLength(18); // llm.calling + llm.responded per turn
    await covel.stop({ keepData: true });

    const { stdout } = await run('npm', ['run', 'replay'], {
      cwd: join(__dirname, '..', '..'),
      env: { ...process.env, COVEL_DATA_DIR: covel.dataDir, DATABASE_URL: '', REDIS_URL: '' },
    });
    // 57 events: per session created + 3 × (input, started, calling, responded, output, committed); the
    // inline projections handle all but the 3 session.created and the 9 llm.responded (the runtime output
    // appended beside each marks progress)
    expect(stdout).toMatch(
      /inline views \(executions, turn_messages, summaries, plugin_data, worlds, world_generations, tenant_limits\): rebuilt 4 streams from 45 events/,
    );
    expect(stdout).toMatch(/trace_events shard \d+: \d+ events, done/);
    expect(stdout).toMatch(/replayed 204 events into the async projections/); // the log (68 events: the dev tenant's creation and key too) read once per async projection (trace_events, prefix_reports, usage)

    const reopened = await openDatabase({ kind: 'pglite', dataDir: join(covel.dataDir, 'pglite') });
    try {
      expect(await dumpProjections(reopened.db)).toEqual(live);
    } finally {
      await reopened.close();
    }
  }, 90_000);
});
