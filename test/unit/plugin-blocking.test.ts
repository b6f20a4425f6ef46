import { join } from 'node:path';
import { behaviour } from '../fixtures/busy-plugins/busy/server';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';

const BUSY_PLUGINS = join(__dirname, '..', 'fixtures', 'busy-plugins');

/**
 * Issue 31 item 7: plugin code runs on the process's event loop (in `npm start`, the API's too), so a
 * synchronous busy loop stalls the HTTP API until it ends; that limit is documented (docs/plugins.md,
 * docs/operations.md). What the engine does about it: a warning naming the plugin when a handler's
 * synchronous part runs past COVEL_PLUGIN_BLOCKING_WARN_MS, and a synchronous part that ran past the
 * handler time limit fails the runtime as timed out (the timer could not fire while it ran).
 */
describe('a plugin whose synchronous code blocks the event loop (embedded default)', () => {
  let covel: EmbeddedEngine;
  const warnings: { message: string; fields: Record<string, unknown> | undefined }[] = [];
  const logger = {
    log: () => undefined,
    error: () => undefined,
    warn: (message: string, fields?: Record<string, unknown>) => void warnings.push({ message, fields }),
  };

  beforeAll(async () => {
    covel = await startEmbedded({ COVEL_PLUGINS_DIR: BUSY_PLUGINS, COVEL_PLUGIN_BLOCKING_WARN_MS: '300', COVEL_PLUGIN_HANDLER_TIMEOUT_MS: '1500' }, undefined, {
      logger,
    });
  }, 60_000);
  afterAll(() => covel?.stop());
  beforeEach(() => {
    warnings.length = 0;
  });

  const blockingWarnings = () => warnings.filter((w) => /blocked the event loop/.test(w.message));

  it('a handler that blocks past the warning threshold: the turn commits, and a warning names the plugin and how long', async () => {
    behaviour.ms = 600;
    const client = await covel.newTenant();
    const { id } = await client.createSession({});
    const { executionId } = await client.submit(id, 'Spin');
    expect(await client.waitFor(executionId, 30_000)).toBe('committed');
    const [warning, ...more] = blockingWarnings();
    expect(more).toEqual([]);
    expect(warning.message).toMatch(/^plugin busy blocked the event loop for \d+ ms in runFunction "spinner"/);
    expect(warning.fields).toMatchObject({ pluginId: 'busy', point: 'runFunction', handlerId: 'spinner', blockedMs: expect.any(Number) });
    expect(warning.fields?.blockedMs as number).toBeGreaterThanOrEqual(600);
  }, 60_000);

  it('a handler whose synchronous code runs past the handler time limit fails the turn as timed out (its result is not taken)', async () => {
    behaviour.ms = 2_000;
    const client = await covel.newTenant();
    const { id } = await client.createSession({});
    const { executionId } = await client.submit(id, 'Spin longer');
    await expect(client.waitFor(executionId, 30_000)).rejects.toThrow(/did not answer within 1500 ms/);
    expect(blockingWarnings().map((w) => w.fields?.pluginId)).toContain('busy');
  }, 60_000);

  it('a handler under the threshold: no warning', async () => {
    behaviour.ms = 0;
    const client = await covel.newTenant();
    const { id } = await client.createSession({});
    const { executionId } = await client.submit(id, 'Rest');
    expect(await client.waitFor(executionId, 30_000)).toBe('committed');
    expect(blockingWarnings()).toEqual([]);
  }, 60_000);
});
