import { randomUUID } from 'node:crypto';
import { isWellFormedText } from '../../libs/text';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';

type Health = {
  status: string;
  projections: { name: string; state: string; lag: number; failures: { globalPosition: number; eventType: string; attempts: number }[] }[];
};
type ReportRow = { turn: number; runtime: string; firstDifference: { before: string; after: string; offset: number } | null };

/** The embedded default (PGlite, in-process queue, emulator): one bad session never stops the others. */
describe('projection failures stay with their session (embedded)', () => {
  let covel: EmbeddedEngine;
  beforeAll(async () => {
    covel = await startEmbedded();
  });
  afterAll(() => covel.stop());

  const health = async () => (await (await fetch(`${covel.baseUrl}/health`)).json()) as Health;

  it('"x" + 40 × 😀, then inputs in other sessions: every turn commits and the prefix reports are well-formed', async () => {
    const client = await covel.newTenant();
    const emoji = await client.createSession();
    // a first turn, then a second: the second's request is compared with the first's (±60 snippets)
    for (const text of ['x' + '😀'.repeat(40), 'x' + '😀'.repeat(40) + ' again', 'hello']) {
      await client.waitFor((await client.submit(emoji.id, text)).executionId, 30_000);
    }
    for (let s = 0; s < 3; s++) {
      const { id } = await client.createSession();
      await client.waitFor((await client.submit(id, `other session ${s}`)).executionId, 30_000);
    }
    const report = await client.request<ReportRow[]>('GET', `/v1/sessions/${emoji.id}/prefix-report`);
    expect(report.map((r) => r.turn)).toEqual([1, 2, 3]);
    for (const r of report.slice(1)) {
      expect(r.firstDifference).not.toBeNull();
      expect(isWellFormedText(r.firstDifference!.before) && isWellFormedText(r.firstDifference!.after)).toBe(true);
    }
    const h = await health();
    expect(h.status).toBe('ok');
    expect(h.projections.every((p) => p.state === 'running' && p.failures.length === 0)).toBe(true);
  }, 90_000);

  it('a session whose summaries cannot be applied: its turns wait (nothing failed), other sessions run, /health shows where it stopped and no ids', async () => {
    const client = await covel.newTenant('second');
    const broken = await client.createSession();
    const fine = await client.createSession();
    await client.waitFor((await client.submit(broken.id, 'walk to the river')).executionId, 30_000);
    // an event the summaries projection cannot apply: it merges a summary that does not exist
    const tenantId = (await covel.engine.store.readStream(broken.id, 0, 1))[0].tenantId;
    const appended = await covel.engine.store.append({
      tenantId,
      streamId: broken.id,
      expectedVersion: await covel.engine.store.streamVersion(broken.id),
      events: [
        {
          type: 'history.compacted@1',
          data: { compactionId: randomUUID(), summaries: [{ summaryId: randomUUID(), messageIds: [], replacesSummaryIds: ['no-such-summary'], content: 'x' }] },
        },
      ],
    });

    const stuck = await client.submit(broken.id, 'cross the river');
    // other sessions, the same tenant and others, go on
    await client.waitFor((await client.submit(fine.id, 'light the lantern')).executionId, 30_000);
    const other = await covel.newTenant('third');
    const { id } = await other.createSession();
    await other.waitFor((await other.submit(id, 'look around')).executionId, 30_000);

    // the stopped session's turn waits (no attempt spent, nothing failed) until the projection applies that event
    await new Promise((r) => setTimeout(r, 3_000));
    const execution = await client.request<{ status: string; attempts: number; error: unknown }>('GET', `/v1/executions/${stuck.executionId}`);
    expect(execution).toMatchObject({ status: 'queued', attempts: 0, error: null });
    expect((await covel.engine.store.readStream(broken.id)).map((e) => e.type)).not.toContain('execution.failed@1');

    const res = await fetch(`${covel.baseUrl}/health`);
    expect(res.status).toBe(503);
    const text = await res.text();
    const h = JSON.parse(text) as Health;
    expect(h.status).toBe('degraded');
    expect((await fetch(`${covel.baseUrl}/health/live`)).status).toBe(200);
    const summaries = h.projections.find((p) => p.name === 'summaries')!;
    expect(summaries.state).toBe('failing');
    expect(summaries.failures).toEqual([
      expect.objectContaining({ globalPosition: appended.lastPosition, eventType: 'history.compacted@1', attempts: expect.any(Number) }),
    ]);
    // /health needs no key: no session, tenant or error text of anyone's is in it
    for (const secret of [broken.id, tenantId, 'no-such-summary']) expect(text).not.toContain(secret);
    expect(h.projections.filter((p) => p.name !== 'summaries').every((p) => p.state === 'running')).toBe(true);
    // the rest of the projections have the stuck session's events (the failure is recorded in executions)
    expect((await client.messages(fine.id)).length).toBe(2);
  }, 120_000);
});
