import { createServer } from 'node:net';
import { loadConfig, TurnExecutor, RuntimeCatalog, WorldCatalog } from '../../libs/engine';
import { EventStore, openDatabase, type OpenDatabase, ReadModels } from '../../libs/events';
import { loadPlugins } from '../../libs/plugins-sdk';
import { endpointFor, loadLlmConfig, ProviderRegistry } from '../../libs/providers';

/** A loopback port nothing listens on: every PostgreSQL connection to it is refused (a real refusal, no mock). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('a turn job while the database cannot be reached', () => {
  let database: OpenDatabase;
  let executor: TurnExecutor;
  const warnings: string[] = [];

  beforeAll(async () => {
    const config = loadConfig({ PORT: '0' });
    database = await openDatabase({ kind: 'postgres', url: `postgres://covel@127.0.0.1:${await closedPort()}/covel` });
    const providers = new ProviderRegistry(loadLlmConfig(config.llmConfigFile), (protocol) => endpointFor(protocol, {}, 'http://127.0.0.1:9'));
    const logger = { log: () => undefined, warn: (m: string) => warnings.push(m), error: (m: string) => warnings.push(m) };
    executor = new TurnExecutor(
      new EventStore(database.db),
      new ReadModels(database.db),
      new RuntimeCatalog(loadPlugins(config.pluginsDir)),
      providers,
      new WorldCatalog(config.worldsDir),
      logger,
      { workerId: 'outage-test' },
    );
  });
  afterAll(() => database.close());

  it('is tried again later without spending an attempt, even on its last one (never failed for an outage)', async () => {
    const job = { executionId: '00000000-0000-4000-8000-000000000001', sessionId: '00000000-0000-4000-8000-000000000002', tenantId: 't' };
    expect(await executor.handle(job, { attemptsMade: 0, maxAttempts: 5 })).toEqual({ kind: 'later', delayMs: 2000 });
    expect(await executor.handle(job, { attemptsMade: 4, maxAttempts: 5 })).toEqual({ kind: 'later', delayMs: 2000 });
    expect(warnings).toEqual([
      `execution ${job.executionId}: the database cannot be reached; retrying in 2000 ms`,
      `execution ${job.executionId}: the database cannot be reached; retrying in 2000 ms`,
    ]);
  });
});
