import { join } from 'node:path';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';
import { auditedIdentical, playTurns } from '../support/turns';

const TOOL_PLUGINS = join(__dirname, '..', 'fixtures', 'tool-plugins');

describe('<available-events> in a real turn (agent.advertiseEvents)', () => {
  let covel: EmbeddedEngine;
  beforeAll(async () => {
    covel = await startEmbedded({ COVEL_PLUGINS_DIR: TOOL_PLUGINS });
  }, 60_000);
  afterAll(() => covel?.stop());

  it("the advertising runtime's system prompt lists the catalogue, the others' do not; the audit rebuilds every request byte for byte", async () => {
    const client = await covel.newTenant();
    const { id } = await client.createSession({});
    const turnIds = await playTurns(client, id, ['Open the ledger', 'Close it']);
    const events = await covel.engine.store.readStream(id);
    const calls = events.filter((e) => e.type === 'llm.calling@1').map((e) => e.data as { runtimeId: string; body: string });
    const systemOf = (runtimeId: string) => calls.find((c) => c.runtimeId === runtimeId)!.body; // the wire body (JSON text)
    expect(systemOf('keeper')).toContain('<available-events>\\nCall emit-event once per event.');
    expect(systemOf('keeper')).toContain('- ledger.lost: The ledger was lost. [payload schema unavailable]');
    for (const other of ['narrator', 'teller', 'filer', 'quiet']) expect(systemOf(other)).not.toContain('<available-events>');
    expect(await auditedIdentical(covel.engine, id, turnIds)).toEqual([true, true]);
  }, 60_000);
});
