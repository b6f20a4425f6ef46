import { randomUUID } from 'node:crypto';
import { type InlineProjection, InlineProjectionFailedError } from '../../libs/events';
import { isWellFormedText } from '../../libs/text';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';

type Health = {
  status: string;
  projections: { name: string; state: string; lag: number; failures: { globalPosition: number; eventType: string; attempts: number }[] }[];
};
type ReportRow = { turn: number; runtime: string; firstDifference: { before: string; after: string; offset: number } | null };

/** The embedded default (PGlite, in-process queue, emulator): a read model failing for one session never stops the others. */
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

  it('an event the summaries projection cannot apply fails its append alone (nothing written): that session and the others go on, /health stays ok', async () => {
    const client = await covel.newTenant('second');
    const broken = await client.createSession();
    const fine = await client.createSession();
    await client.waitFor((await client.submit(broken.id, 'walk to the river')).executionId, 30_000);
    // an event the summaries projection cannot apply: it merges a summary that does not exist
    const tenantId = (await covel.engine.store.readStream(broken.id, 0, 1))[0].tenantId;
    const version = await covel.engine.store.streamVersion(broken.id);
    const failure = await covel.engine.store
      .append({
        tenantId,
        streamId: broken.id,
        expectedVersion: version,
        events: [
          {
            type: 'history.compacted@1',
            data: {
              compactionId: randomUUID(),
              summaries: [{ summaryId: randomUUID(), messageIds: [], replacesSummaryIds: ['no-such-summary'], content: 'x' }],
            },
          },
        ],
      })
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(InlineProjectionFailedError);
    expect(failure).toMatchObject({
      code: 'INLINE_PROJECTION_FAILED',
      category: 'internal',
      projection: 'summaries',
      eventType: 'history.compacted@1',
      streamId: broken.id,
    });
    expect(await covel.engine.store.streamVersion(broken.id)).toBe(version);

    // the session's next turn and other sessions, the same tenant and others, run
    await client.waitFor((await client.submit(broken.id, 'cross the river')).executionId, 30_000);
    await client.waitFor((await client.submit(fine.id, 'light the lantern')).executionId, 30_000);
    const other = await covel.newTenant('third');
    const { id } = await other.createSession();
    await other.waitFor((await other.submit(id, 'look around')).executionId, 30_000);
    expect((await client.messages(broken.id)).length).toBe(4);
    expect((await client.messages(fine.id)).length).toBe(2);

    const res = await fetch(`${covel.baseUrl}/health`);
    expect(res.status).toBe(200);
    const h = (await res.json()) as Health;
    expect(h.status).toBe('ok');
    expect(await covel.engine.database.db.selectFrom('projection_failures').selectAll().execute()).toEqual([]);
  }, 120_000);

  it('a turn whose commit an inline projection cannot apply fails that turn alone (recorded as failed); the session and others go on', async () => {
    // a bug in an inline read model, for one kind of turn only: it throws on commits that hold "BOOM"
    const boom: InlineProjection = {
      name: 'boom',
      handles: ['turn.committed@1'],
      tables: [],
      async applyBatch(_trx, events) {
        if (events.some((e) => e.type === 'turn.committed@1' && e.data.messages.some((m) => m.text.includes('BOOM')))) throw new Error('boom cannot apply it');
      },
    };
    const store = covel.engine.store as unknown as { inline: readonly InlineProjection[] };
    const inline = store.inline;
    store.inline = [...inline, boom];
    try {
      const client = await covel.newTenant('fourth');
      const [a, b] = [await client.createSession(), await client.createSession()];
      const failing = await client.submit(a.id, 'BOOM');
      await client.waitFor((await client.submit(b.id, 'the other session')).executionId, 30_000);
      for (let i = 0; i < 600 && (await client.execution(failing.executionId)).status !== 'failed'; i++) await new Promise((r) => setTimeout(r, 100));
      expect(await client.execution(failing.executionId)).toMatchObject({ status: 'failed', error: { code: 'INLINE_PROJECTION_FAILED' } });
      // no turn of it was committed; the session's next input runs
      const types = (await covel.engine.store.readStream(a.id)).map((e) => e.type);
      expect(types).not.toContain('turn.committed@1');
      expect(types).toContain('execution.failed@1');
      await client.waitFor((await client.submit(a.id, 'again, quietly')).executionId, 30_000);
      expect((await client.messages(a.id)).map((m) => m.text)[0]).toBe('again, quietly');
      expect((await client.messages(b.id)).length).toBe(2);
    } finally {
      store.inline = inline;
    }
  }, 120_000);
});
