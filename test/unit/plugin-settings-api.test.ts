import { join } from 'node:path';
import { auditTurn, DEFAULT_HISTORY_READ_LIMIT } from '../../libs/engine';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';

const FIXTURES = join(__dirname, '..', 'fixtures');

describe("the player's plugin configuration (POST /v1/sessions pluginSettings → {{ userSettings.* }}, ctx.settings)", () => {
  let covel: EmbeddedEngine;
  beforeAll(async () => {
    covel = await startEmbedded({ COVEL_PLUGINS_DIR: join(FIXTURES, 'template-plugins'), COVEL_WORLDS_DIR: join(FIXTURES, 'template-worlds') });
  }, 60_000);
  afterAll(() => covel.stop());

  it('an unknown plugin, an undeclared key or a wrong type is a 400 naming the field', async () => {
    const client = await covel.newTenant();
    await expect(client.createSession({ pluginSettings: { nobody: { tone: 'x' } } })).rejects.toThrow(/400 pluginSettings\.nobody: no loaded plugin "nobody"/);
    await expect(client.createSession({ pluginSettings: { teller: { colour: 'x' } } })).rejects.toThrow(
      /400 pluginSettings\.teller\.colour: plugin teller declares no setting/,
    );
    await expect(client.createSession({ pluginSettings: { teller: { verbose: 'yes' } } })).rejects.toThrow(
      /400 pluginSettings\.teller\.verbose: must be a boolean/,
    );
    await expect(client.createSession({ pluginSettings: { teller: { pace: 'fast' } } })).rejects.toThrow(
      /400 pluginSettings\.teller\.pace: must be one of "slow", "brisk"/,
    );
    await expect(client.request('POST', '/v1/sessions', { pluginSettings: { teller: { tone: { nested: 1 } } } })).rejects.toThrow(
      /400 pluginSettings\.teller\.tone/,
    );
    await expect(client.request('POST', '/v1/sessions', { pluginSettings: { teller: { constructor: 'x' } } })).rejects.toThrow(
      /400 pluginSettings\.teller\.constructor: plugin teller declares no setting/,
    );
  });

  it('a configured session: the event records it, the real turn renders it and hands it to ctx.settings, the audit rebuilds it byte for byte', async () => {
    const client = await covel.newTenant();
    const { id } = await client.createSession({ worldId: 'harbor', pluginSettings: { teller: { tone: 'wry', verbose: true } } });
    const [created] = await covel.engine.store.readStream(id, 0, 1);
    expect(created.data).toMatchObject({ pluginSettings: { teller: { tone: 'wry', verbose: true } } });
    const { executionId, turnId } = await client.submit(id, 'Ring the bell');
    expect(await client.waitFor(executionId, 20_000)).toBe('committed');
    const calls = (await covel.engine.store.readStream(id)).filter((e) => e.type === 'llm.calling@1').map((e) => e.data as { runtimeId: string; body: string });
    const teller = JSON.parse(calls.find((c) => c.runtimeId === 'teller')!.body) as { messages: { content: string }[] };
    expect(teller.messages[0].content).toContain('Settings: tone=wry verbose=true pace=slow\n');
    expect(JSON.stringify(teller.messages)).toContain('ctx.settings={\\"tone\\":\\"wry\\",\\"verbose\\":true,\\"pace\\":\\"slow\\"}');
    const audit = await auditTurn({ ...covel.engine, historyReadLimit: DEFAULT_HISTORY_READ_LIMIT }, id, turnId);
    expect(audit.identical).toBe(true);
  }, 60_000);
});
