import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { type Database, migrateToLatest, openDatabase, type OpenDatabase } from '../../events';
import { type CallKey, type KnownFirst, prefixStateQuery, type StateRow } from '../prefix-state-query';

/**
 * `prefixStateQuery` against a reference written from its contract over every row of the table:
 * two tenants sharing session ids, several runtimes, turns with and without a first request, a
 * regenerated turn (it takes the replaced turn's number), rows the process holds (`known`).
 */
type Report = Pick<Database['prefix_reports'], 'call_id' | 'tenant_id' | 'session_id' | 'turn_id' | 'turn' | 'runtime' | 'first_in_turn' | 'body'> & {
  position: number;
};

let open: OpenDatabase;
const reports: Report[] = [];
beforeAll(async () => {
  open = await openDatabase({ kind: 'pglite' });
  await migrateToLatest(open.db);
  let position = 0;
  for (const tenant of ['t1', 't2'])
    for (const session of ['s1', 's2'])
      for (let turn = 1; turn <= 6; turn++)
        for (const runtime of ['p/a', 'p/b', 'p/c']) {
          // p/c has no call in even turns; the second call of a runtime in a turn is not first in turn
          if (runtime === 'p/c' && turn % 2 === 0) continue;
          for (let step = 0; step < (runtime === 'p/b' ? 2 : 1); step++) {
            position += 1;
            const turnId = turn === 6 ? 'u4b' : `u${turn}`; // the sixth turn regenerated the fourth: its number
            reports.push({
              call_id: `${tenant}-${session}-${position}`,
              tenant_id: tenant,
              session_id: session,
              turn_id: turnId,
              turn: turn === 6 ? 4 : turn,
              runtime,
              position,
              first_in_turn: step === 0,
              body: `{"n":${position},"text":"你好 🐉 ${tenant}"}`,
            });
          }
        }
  for (const r of reports)
    await sql`
      insert into prefix_reports (call_id, tenant_id, session_id, turn_id, turn, runtime, position, first_in_turn, protocol, body, request_tokens)
      values (${r.call_id}, ${r.tenant_id}, ${r.session_id}, ${r.turn_id}, ${r.turn}, ${r.runtime}, ${r.position}, ${r.first_in_turn}, 'openai', ${r.body}, 1)`.execute(
      open.db,
    );
}, 120_000);
afterAll(() => open.close());

const md5 = (text: string) => createHash('md5').update(text, 'utf8').digest('hex');
const latest = (rows: Report[]) => rows.reduce<Report | undefined>((a, r) => (a === undefined || r.position > a.position ? r : a), undefined);
const distinct = <T>(items: T[]) => [...new Map(items.map((i) => [JSON.stringify(i), i])).values()];

/** What the statement's contract says, from every row of the table. */
function reference(calls: CallKey[], known: KnownFirst[]): StateRow {
  const keys = [...calls, ...calls.flatMap((c) => (c.retryFromTurnId === undefined ? [] : [{ ...c, turnId: c.retryFromTurnId }]))];
  const of = (tenant: string, session: string) => reports.filter((r) => r.tenant_id === tenant && r.session_id === session);
  const sessions = distinct(keys.map((k) => [k.tenantId, k.sessionId] as const)).flatMap(([tenant, session]) => {
    const rows = of(tenant, session);
    return rows.length === 0 ? [] : [{ tenant_id: tenant, session_id: session, turns: Math.max(...rows.map((r) => r.turn)) }];
  });
  const seen = distinct(
    distinct(keys.map((k) => [k.tenantId, k.sessionId, k.turnId] as const)).flatMap(([tenant, session, turnId]) =>
      of(tenant, session)
        .filter((r) => r.turn_id === turnId)
        .map((r) => ({ tenant_id: tenant, session_id: session, turn_id: turnId, runtime: r.runtime, turn: r.turn })),
    ),
  );
  const firstRows = (tenant: string, session: string, runtime: string) => of(tenant, session).filter((r) => r.first_in_turn && r.runtime === runtime);
  const previous = distinct(keys.map((k) => [k.tenantId, k.sessionId, k.runtime] as const)).flatMap(([tenant, session, runtime]) => {
    const r = latest(firstRows(tenant, session, runtime));
    if (!r) return [];
    const held = known.some(
      (k) =>
        k.tenantId === tenant &&
        k.sessionId === session &&
        k.runtime === runtime &&
        k.callId === r.call_id &&
        k.position === r.position &&
        k.bodyMd5 === md5(r.body),
    );
    return [
      {
        tenant_id: tenant,
        session_id: session,
        runtime,
        turn: r.turn,
        call_id: r.call_id,
        position: String(r.position),
        protocol: 'openai',
        layout: null,
        body: held ? null : r.body,
      },
    ];
  });
  const retries = distinct(calls.flatMap((c) => (c.retryFromTurnId === undefined ? [] : [[c.tenantId, c.sessionId, c.runtime, c.retryFromTurnId] as const])));
  const before = retries.flatMap(([tenant, session, runtime, replaced]) => {
    const replacedTurns = of(tenant, session).filter((r) => r.turn_id === replaced);
    if (replacedTurns.length === 0) return [];
    const bound = Math.min(...replacedTurns.map((r) => r.turn));
    const r = latest(firstRows(tenant, session, runtime).filter((x) => x.turn < bound));
    return r
      ? [
          {
            tenant_id: tenant,
            session_id: session,
            runtime,
            replaced,
            turn: r.turn,
            position: String(r.position),
            protocol: 'openai',
            body: r.body,
            layout: null,
          },
        ]
      : [];
  });
  const existing = distinct(keys.map((k) => k.callId)).filter((id) => reports.some((r) => r.call_id === id));
  return { sessions, seen, previous, before, existing };
}

const sorted = (state: StateRow) =>
  Object.fromEntries(Object.entries(state).map(([part, rows]) => [part, (rows as unknown[]).map((r) => JSON.stringify(r)).sort()]));

describe('prefixStateQuery: the state of a batch, as its contract reads every row', () => {
  const call = (tenantId: string, sessionId: string, turnId: string, runtime: string, callId: string, retryFromTurnId?: string): CallKey => ({
    tenantId,
    sessionId,
    turnId,
    runtime,
    callId,
    ...(retryFromTurnId === undefined ? {} : { retryFromTurnId }),
  });
  const t1s1 = () => reports.filter((r) => r.tenant_id === 't1' && r.session_id === 's1');
  const batches: [string, () => { calls: CallKey[]; known: KnownFirst[] }][] = [
    [
      'a new turn of every runtime of one session, nothing held',
      () => ({ calls: ['p/a', 'p/b', 'p/c'].map((rt, i) => call('t1', 's1', 'u7', rt, `new${i}`)), known: [] }),
    ],
    [
      'two tenants with the same session id, a turn already recorded (calls with rows), a runtime without rows',
      () => ({
        calls: [
          call('t1', 's2', 'u3', 'p/a', reports.find((r) => r.tenant_id === 't1' && r.session_id === 's2' && r.turn_id === 'u3')!.call_id),
          call('t2', 's2', 'u7', 'p/b', 'x'),
          call('t2', 's2', 'u7', 'p/z', 'y'),
        ],
        known: [],
      }),
    ],
    [
      "regenerated turns (the replaced one regenerated before too) and requests the process holds, one of them with another body's MD5",
      () => {
        const lastA = latest(t1s1().filter((r) => r.runtime === 'p/a' && r.first_in_turn))!;
        const lastB = latest(t1s1().filter((r) => r.runtime === 'p/b' && r.first_in_turn))!;
        return {
          calls: [
            call('t1', 's1', 'u4c', 'p/a', 'r1', 'u4b'),
            call('t1', 's1', 'u4c', 'p/b', 'r2', 'u4b'),
            call('t1', 's1', 'u3b', 'p/c', 'r3', 'u3'),
            call('t2', 's1', 'u9', 'p/a', 'r4', 'none'),
          ],
          known: [
            { tenantId: 't1', sessionId: 's1', runtime: 'p/a', callId: lastA.call_id, position: lastA.position, bodyMd5: md5(lastA.body) },
            { tenantId: 't1', sessionId: 's1', runtime: 'p/b', callId: lastB.call_id, position: lastB.position, bodyMd5: md5('another log') },
          ],
        };
      },
    ],
    ['an unknown session', () => ({ calls: [call('t3', 's1', 'u1', 'p/a', 'z')], known: [] })],
  ];

  it.each(batches)('%s', async (_name, batch) => {
    const { calls, known } = batch();
    const { rows } = await prefixStateQuery(calls, known).execute(open.db);
    const expected = reference(calls, known);
    expect(sorted(rows[0])).toEqual(sorted(expected));
  });

  it('the batches cover every part with rows', () => {
    const parts = batches.map(([, b]) => reference(b().calls, b().known));
    for (const part of ['sessions', 'seen', 'previous', 'before', 'existing'] as const) expect(parts.some((p) => p[part].length > 0)).toBe(true);
    expect(parts.some((p) => p.previous.some((r) => r.body === null))).toBe(true);
  });
});
