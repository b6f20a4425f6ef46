import { createServer } from 'node:net';
import { InProcessQueue, loadConfig, RuntimeCatalog, TurnRunner, WorldCatalog } from '../../libs/engine';
import { EventStore, openDatabase, type OpenDatabase, PluginDataStore, ReadModels } from '../../libs/events';
import { loadPlugins } from '../../libs/plugins-sdk';
import { endpointFor, loadLlmConfig, ProviderRegistry } from '../../libs/providers';
import { turnContext } from '../support/turn-context';

/** A loopback port nothing listens on: every PostgreSQL connection to it is refused (a real refusal, no mock). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('turn and runtime jobs while the database cannot be reached', () => {
  let database: OpenDatabase;
  let turns: TurnRunner;
  let queue: InProcessQueue;
  const warnings: string[] = [];

  beforeAll(async () => {
    const config = loadConfig({ PORT: '0' });
    database = await openDatabase({ kind: 'postgres', url: `postgres://covel@127.0.0.1:${await closedPort()}/covel` });
    const providers = new ProviderRegistry(loadLlmConfig(config.llmConfigFile), (protocol) => endpointFor(protocol, {}, 'http://127.0.0.1:9'));
    const logger = { log: () => undefined, warn: (m: string) => warnings.push(m), error: (m: string) => warnings.push(m) };
    queue = new InProcessQueue();
    turns = new TurnRunner({
      store: new EventStore(database.db),
      readModels: new ReadModels(database.db),
      pluginData: new PluginDataStore(database.db),
      catalog: new RuntimeCatalog(loadPlugins(config.pluginsDir)),
      providers,
      worlds: new WorldCatalog(config.worldsDir),
      logger,
      queue,
      options: { workerId: 'outage-test' },
    });
  });
  afterAll(async () => {
    await queue.close();
    await database.close();
  });

  const job = { executionId: '00000000-0000-4000-8000-000000000001', sessionId: '00000000-0000-4000-8000-000000000002', tenantId: 't' };
  const retrying = `execution ${job.executionId}: the database cannot be reached; retrying in 2000 ms`;

  it('a turn job is tried again later without spending an attempt, even on its last one (never failed for an outage)', async () => {
    warnings.length = 0;
    expect(await turns.turn(job, turnContext())).toEqual({ kind: 'later', delayMs: 2000 });
    expect(await turns.turn(job, turnContext({ attemptsMade: 4, maxAttempts: 5 }))).toEqual({ kind: 'later', delayMs: 2000 });
    expect(warnings).toEqual([retrying, retrying]);
  });

  it('so is a runtime job, on its last attempt too', async () => {
    warnings.length = 0;
    const runtime = { ...job, attempt: 1, pluginId: 'narrator', runtimeId: 'narrator' };
    expect(await turns.runtime(runtime, { attemptsMade: 0, maxAttempts: 5 })).toEqual({ kind: 'later', delayMs: 2000 });
    expect(await turns.runtime(runtime, { attemptsMade: 4, maxAttempts: 5 })).toEqual({ kind: 'later', delayMs: 2000 });
    expect(warnings).toEqual([retrying, retrying]);
  });
});
