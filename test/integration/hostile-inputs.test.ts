import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { EventStore, InlineProjectionFailedError, inlineProjections, openDatabase, type OpenDatabase } from '../../libs/events';
import { graphemeStart } from '../../libs/text';
import { dumpProjections } from '../support/projection-dump';
import { startStack, type Stack } from '../support/stack';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');
const wellFormed = (s: string) => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

const FAMILY = '👨‍👩‍👧‍👦';
const MIXED = `The ferry 😀 crosses 龍の背に乗って ${FAMILY} مَرْحَبًا بِكَ שָׁלוֹם עוֹלָם 🇯🇵🇫🇷 café\u0301 👍🏽 `;

/** Exactly 16,000 UTF-16 units (the limit), emoji and ZWJ sequences all through it, never cut inside one. */
function longest(): string {
  const base = MIXED.repeat(Math.ceil(16_000 / MIXED.length) + 1);
  const cut = base.slice(0, graphemeStart(base, 15_990)).trimEnd();
  return cut + 'z'.repeat(16_000 - cut.length);
}

/** Inputs with emoji, ZWJ sequences, flags, CJK, RTL and combining marks at the places the old cuts were. */
const HOSTILE: string[] = [
  'x' + '😀'.repeat(40), // the input that stopped every turn
  'hello again',
  '😀 at the start',
  'in the middle 😀 of it',
  'at the end 😀',
  'a'.repeat(59) + '😀' + 'b'.repeat(60), // straddling 60 units
  'a'.repeat(58) + FAMILY + 'b'.repeat(70),
  'a'.repeat(119) + '😀'.repeat(5), // straddling the emulator's 120
  'x' + '😀'.repeat(80),
  'y' + FAMILY.repeat(20),
  'z' + '🇯🇵🇫🇷🇺🇸'.repeat(25),
  '龍の背に乗って火山の村へ向かう。'.repeat(12),
  'مَرْحَبًا بِكَ فِي الْقَرْيَةِ، أَيُّهَا الْمُسَافِرُ. '.repeat(6).trim(),
  'שָׁלוֹם עוֹלָם, בָּרוּךְ הַבָּא לַכְּפָר. '.repeat(8).trim(),
  'e\u0301'.repeat(90),
  'mixed ' + MIXED.repeat(4).trim(),
  longest(),
  'x' + '😀'.repeat(40) + ' once more',
];

/** Real PostgreSQL + Redis: hostile text never stops a turn, a projection, or a replay. */
describe('hostile inputs on PostgreSQL and BullMQ', () => {
  let stack: Stack;
  let open: OpenDatabase;
  beforeAll(async () => {
    stack = await startStack({ workers: 2 });
    open = await openDatabase({ kind: 'postgres', url: stack.databaseUrl });
  }, 120_000);
  afterAll(async () => {
    await open?.close();
    await stack?.stop();
  }, 60_000);

  it('every input commits, other sessions go on, replay rebuilds identical rows, prefix reports are whole', async () => {
    const { client } = stack;
    expect(longest()).toHaveLength(16_000);
    expect(HOSTILE.every(wellFormed)).toBe(true);

    // one session takes them in order (each turn's request is compared with the previous turn's),
    // another takes them in reverse
    const hostile = [await client.createSession(), await client.createSession()];
    const orders = [HOSTILE, [...HOSTILE].reverse()];
    await Promise.all(
      hostile.map(async (s, i) => {
        for (const text of orders[i]) await client.waitFor((await client.submit(s.id, text)).executionId, 60_000);
      }),
    );
    // then normal turns in other sessions
    const others = await Promise.all(Array.from({ length: 4 }, () => client.createSession()));
    await Promise.all(
      others.map(async (s, i) => {
        for (let t = 0; t < 2; t++) await client.waitFor((await client.submit(s.id, `session ${i} move ${t}`)).executionId, 60_000);
      }),
    );

    // the text comes back exactly as it was sent
    for (const [i, s] of hostile.entries()) {
      const messages = await client.messages(s.id);
      expect(messages.filter((m) => m.role === 'user').map((m) => m.text)).toEqual(orders[i]);
      expect(messages.every((m) => wellFormed(m.text))).toBe(true);
    }
    for (const s of others) expect(await client.messages(s.id)).toHaveLength(4);

    // prefix reports: a row for every recorded call, snippets well-formed
    for (const s of [...hostile, ...others]) {
      const calls = await client.request<{ callId: string }[]>('GET', `/v1/sessions/${s.id}/llm-calls`);
      type Row = { callId: string; sharedPercent: number | null; firstDifference: { before: string; after: string; offset: number } | null };
      const report = await client.request<Row[]>('GET', `/v1/sessions/${s.id}/prefix-report`);
      expect(report.map((r) => r.callId)).toEqual(calls.map((c) => c.callId));
      for (const r of report.slice(1)) {
        expect(r.sharedPercent).not.toBeNull();
        expect(r.firstDifference).not.toBeNull();
        expect(wellFormed(r.firstDifference!.before) && wellFormed(r.firstDifference!.after)).toBe(true);
      }
    }

    // the async ones are run by the workers' projectors: wait (bounded) for them to reach the head
    type Health = { status: string; projections: { state: string; lag: number }[] };
    let health = (await (await fetch(`${stack.baseUrl}/health`)).json()) as Health;
    for (let i = 0; i < 100 && !health.projections.every((p) => p.lag === 0); i++) {
      await new Promise((r) => setTimeout(r, 100));
      health = (await (await fetch(`${stack.baseUrl}/health`)).json()) as Health;
    }
    expect(health.status).toBe('ok');
    expect(health.projections.every((p) => p.state === 'running' && p.lag === 0)).toBe(true);

    // npm run replay rebuilds the same rows
    const live = await dumpProjections(open.db);
    expect(live.prefix_reports.length).toBe(2 * HOSTILE.length + 8);
    const { stdout } = await run('npm', ['run', 'replay'], { cwd: root, env: { ...process.env, DATABASE_URL: stack.databaseUrl, REDIS_URL: '' } });
    expect(stdout).toMatch(/inline views \(executions, turn_messages, summaries, plugin_data, worlds, world_generations, tenant_limits\): rebuilt \d+ streams/);
    expect(stdout).toMatch(/replayed \d+ events into the async projections/);
    expect(await dumpProjections(open.db)).toEqual(live);
    expect(await open.db.selectFrom('projection_failures').selectAll().execute()).toEqual([]);
  }, 300_000);

  it('an event an inline projection cannot apply fails its append alone: nothing written, that session and the others commit, /health ok', async () => {
    const { client } = stack;
    const broken = await client.createSession();
    await client.waitFor((await client.submit(broken.id, 'walk to the river')).executionId, 60_000);
    // summaries cannot apply it: it merges a summary that does not exist (the engine's store applies them inline)
    const store = new EventStore(open.db, { inline: inlineProjections });
    const tenantId = (await store.readStream(broken.id, 0, 1))[0].tenantId;
    const version = await store.streamVersion(broken.id);
    const failure = await store
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
    expect(failure).toMatchObject({ projection: 'summaries', eventType: 'history.compacted@1', streamId: broken.id });
    expect((failure as Error).message).toMatch(/no-such-summary not found/);
    expect(await store.streamVersion(broken.id)).toBe(version);

    await client.waitFor((await client.submit(broken.id, 'cross the river')).executionId, 60_000);
    const others = await Promise.all(Array.from({ length: 3 }, () => client.createSession()));
    await Promise.all(others.map(async (s) => client.waitFor((await client.submit(s.id, 'light the lantern')).executionId, 60_000)));
    expect(await client.messages(broken.id)).toHaveLength(4);
    for (const s of others) expect(await client.messages(s.id)).toHaveLength(2);

    const res = await fetch(`${stack.baseUrl}/health`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { status: string }).status).toBe('ok');
    expect(await open.db.selectFrom('projection_failures').selectAll().execute()).toEqual([]);
  }, 180_000);
});
