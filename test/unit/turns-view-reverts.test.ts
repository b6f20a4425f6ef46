import { PlayClient } from '../../apps/play/play-client';
import { startEmbedded, type EmbeddedEngine } from '../support/embedded';
import { playTurns } from '../support/turns';

interface TurnRow {
  number: number;
  turnId: string;
  status: string;
  reverted: { by: string; at: string; turnId: string } | null;
  alternatives: { turnId: string; executionId: string }[];
}

/**
 * `GET /v1/sessions/:id/turns` on the embedded engine reads a revert from the session's log: the
 * turns it took out of the story stay listed, each marked with who reverted it and when (what the
 * inspector greys). The revert is appended to the log as the revert route records it (`turn.reverted@1`).
 */
describe('the turns view marks reverted turns (embedded default)', () => {
  let covel: EmbeddedEngine;
  beforeAll(async () => {
    covel = await startEmbedded();
  });
  afterAll(() => covel?.stop());

  it('the reverted turns carry { by, at, turnId }, the others null; another tenant gets 404', async () => {
    const { apiKey, tenant } = await covel.engine.tenants.create('turns-view-reverts');
    const owner = new PlayClient(covel.baseUrl, apiKey);
    const other = await covel.newTenant('another');
    const { id: sessionId } = await owner.createSession({ worldId: 'emberback', plugins: ['narrator'] });
    const turnIds = await playTurns(owner, sessionId, ['Walk to the river', 'Ask Mira about the ferry', 'Cross the bridge'], 60_000);
    const before = await owner.request<TurnRow[]>('GET', `/v1/sessions/${sessionId}/turns`);
    expect(before.map((t) => t.reverted)).toEqual([null, null, null]);

    const executionIds = before.slice(1).flatMap((t) => t.alternatives.map((a) => a.executionId));
    await covel.engine.store.append({
      tenantId: tenant.id,
      streamId: sessionId,
      expectedVersion: await covel.engine.store.streamVersion(sessionId),
      events: [{ type: 'turn.reverted@1', data: { turnId: turnIds[1], turnIds: turnIds.slice(1), executionIds, by: `tenant:${tenant.id}` } }],
    });
    const revert = (await covel.engine.store.readStream(sessionId)).at(-1)!;

    const after = await owner.request<TurnRow[]>('GET', `/v1/sessions/${sessionId}/turns`);
    expect(after.map((t) => [t.number, t.turnId, t.status, t.reverted])).toEqual([
      [1, turnIds[0], 'committed', null],
      [2, turnIds[1], 'committed', { by: `tenant:${tenant.id}`, at: revert.recordedAt, turnId: turnIds[1] }],
      [3, turnIds[2], 'committed', { by: `tenant:${tenant.id}`, at: revert.recordedAt, turnId: turnIds[1] }],
    ]);
    await expect(other.request('GET', `/v1/sessions/${sessionId}/turns`)).rejects.toMatchObject({ status: 404 });
  }, 120_000);
});
