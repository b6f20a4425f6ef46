import { Client } from 'pg';
import type { SessionLog } from './metrics';
import type { TurnRecord } from './players';

/** What the database holds at the end of a run, read for the exactly-once check. */
export interface LogReading {
  sessions: SessionLog[];
  /** Per committed execution: `turn.committed` recorded_at − `player-input.submitted` recorded_at (server clock). */
  serverLatenciesMs: number[];
  /** `llm.calling` events of the run's sessions (one per model call). */
  modelCalls: number;
  /** Per step of a committed turn (first attempt's events, server clock): the ms from one event to the next. */
  stepsMs: Record<TurnStepName, number[]>;
  /** PostgreSQL backends connected to the bench database now (for their CPU). */
  backendPids: number[];
}

/** The steps of a turn between the events it records, in order (see TURN_STEPS). */
export type TurnStepName = 'in' | 'queued' | 'claimed' | 'model' | 'recorded' | 'out';

/**
 * Each server step: from the first event of one type to the first of the next, in the turn's
 * stream. Around them: `in` (the client's POST start → the input recorded) and `out` (the commit
 * recorded → the client's long-poll end); client and server share the machine's clock.
 */
const TURN_STEPS: readonly { name: TurnStepName; from: string; to: string }[] = [
  { name: 'queued', from: 'player-input.submitted@1', to: 'execution.started@1' },
  { name: 'claimed', from: 'execution.started@1', to: 'llm.calling@1' },
  { name: 'model', from: 'llm.calling@1', to: 'llm.responded@1' },
  { name: 'recorded', from: 'llm.responded@1', to: 'turn.committed@1' },
];

interface EventRow {
  stream_id: string;
  type: string;
  execution_id: string;
  turn_id: string;
  message_count: number | null;
  recorded_ms: string;
}

/**
 * Reads the run's events and `turn_messages` (as the admin role, straight from the tables), waiting
 * up to `catchUpMs` for `turn_messages` to hold every committed message if it is behind.
 */
export async function readLog(options: {
  databaseUrl: string;
  databaseName: string;
  tenantId: string;
  turns: readonly TurnRecord[];
  catchUpMs?: number;
}): Promise<LogReading> {
  const db = new Client({ connectionString: options.databaseUrl });
  await db.connect();
  try {
    const backendPids = (
      await db.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [options.databaseName])
    ).rows.map((r) => r.pid);
    const events = (
      await db.query<EventRow>(
        `select stream_id, type, data->>'executionId' as execution_id, data->>'turnId' as turn_id,
                case when type = 'turn.committed@1' then jsonb_array_length(data->'messages') end as message_count,
                (extract(epoch from recorded_at) * 1000)::text as recorded_ms
         from events
         where tenant_id = $1 and type in ('player-input.submitted@1', 'turn.committed@1', 'execution.failed@1', 'llm.calling@1',
                          'execution.started@1', 'llm.responded@1', 'session.opened@1')
         order by stream_id, stream_version`,
        [options.tenantId],
      )
    ).rows;
    const expectedRows = firstCommits(events).reduce((n, e) => n + (e.message_count ?? 0), 0);
    const deadline = Date.now() + (options.catchUpMs ?? 15_000);
    let messages = await turnMessages(db, options.tenantId);
    while (messages.length < expectedRows && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      messages = await turnMessages(db, options.tenantId);
    }
    return { ...assemble(options.turns, events, messages), backendPids };
  } finally {
    await db.end();
  }
}

async function turnMessages(db: Client, tenantId: string) {
  return (
    await db.query<{ session_id: string; turn_id: string; message_id: string }>(
      'select session_id, turn_id, message_id from turn_messages where tenant_id = $1 order by session_id, ord',
      [tenantId],
    )
  ).rows;
}

function firstCommits(events: readonly EventRow[]): EventRow[] {
  const seen = new Set<string>();
  return events.filter((e) => e.type === 'turn.committed@1' && !seen.has(e.execution_id) && seen.add(e.execution_id));
}

function assemble(
  turns: readonly TurnRecord[],
  events: readonly EventRow[],
  messages: readonly { session_id: string; turn_id: string; message_id: string }[],
): Omit<LogReading, 'backendPids'> {
  const bySession = new Map<string, SessionLog>();
  const session = (id: string) => {
    let s = bySession.get(id);
    if (!s) bySession.set(id, (s = { sessionId: id, submitted: [], commits: [], failures: [], messages: [] }));
    return s;
  };
  for (const t of [...turns].sort((a, b) => a.player - b.player || a.input - b.input)) {
    const s = session(t.sessionId);
    if (t.executionId && t.turnId) s.submitted.push({ executionId: t.executionId, turnId: t.turnId });
  }
  const submittedAt = new Map<string, number>();
  const serverLatenciesMs: number[] = [];
  let modelCalls = 0;
  for (const e of events) {
    if (!bySession.has(e.stream_id)) continue; // e.g. the warm-up sessions
    if (e.type === 'llm.calling@1') modelCalls++;
    if (e.type === 'player-input.submitted@1') submittedAt.set(e.execution_id, Number(e.recorded_ms));
    if (e.type === 'turn.committed@1')
      session(e.stream_id).commits.push({ executionId: e.execution_id, turnId: e.turn_id, messageCount: e.message_count ?? 0 });
    if (e.type === 'execution.failed@1') session(e.stream_id).failures.push(e.execution_id);
  }
  for (const e of firstCommits(events.filter((x) => bySession.has(x.stream_id)))) {
    const at = submittedAt.get(e.execution_id);
    if (at !== undefined) serverLatenciesMs.push(Number(e.recorded_ms) - at);
  }
  // a world's opening (turn 0, `session.opened@1`) is the session's first row, of no execution: not a turn the client played
  const openings = new Set(events.filter((e) => e.type === 'session.opened@1').map((e) => e.turn_id));
  for (const m of messages) if (!openings.has(m.turn_id)) bySession.get(m.session_id)?.messages.push({ turnId: m.turn_id, messageId: m.message_id });
  return {
    sessions: [...bySession.values()],
    serverLatenciesMs,
    modelCalls,
    stepsMs: turnSteps(
      turns,
      events.filter((x) => bySession.has(x.stream_id)),
    ),
  };
}

/** The step gaps of every committed execution that has all the step events. */
function turnSteps(turns: readonly TurnRecord[], events: readonly EventRow[]): Record<TurnStepName, number[]> {
  const firstAt = new Map<string, Map<string, number>>();
  for (const e of events) {
    let times = firstAt.get(e.execution_id);
    if (!times) firstAt.set(e.execution_id, (times = new Map()));
    if (!times.has(e.type)) times.set(e.type, Number(e.recorded_ms));
  }
  const steps: Record<TurnStepName, number[]> = { in: [], queued: [], claimed: [], model: [], recorded: [], out: [] };
  for (const turn of turns) {
    const times = turn.executionId === null ? undefined : firstAt.get(turn.executionId);
    const committed = times?.get('turn.committed@1');
    const submitted = times?.get('player-input.submitted@1');
    if (!times || committed === undefined || submitted === undefined) continue;
    steps.in.push(submitted - turn.startedAt);
    steps.out.push(turn.endedAt - committed);
    for (const step of TURN_STEPS) {
      const from = times.get(step.from);
      const to = times.get(step.to);
      if (from !== undefined && to !== undefined) steps[step.name].push(to - from);
    }
  }
  return steps;
}
