import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { CommittedMessage, NewEvent } from '../../../event-types';
import { EventStore, validateEvent } from '../../../event-store';
import type { Database } from '../../../schema';
import { insertedRow } from '../../../stream-lock';
import { inlineProjections } from '../../sets';
import { inlineStatement } from '../inline-sql';
import { rebuildInline } from '../rebuild-inline';

/**
 * Given/when/then cases of the appends whose inline projection writes are CTEs of the append's own
 * statement (`inlineStatement`): given some appends (any path), when these appends (each one that
 * statement: checked), then the rows are those `rebuildInline` (`applyBatch`, event by event)
 * makes of the same events. Run on PGlite (unit) and the real PostgreSQL (integration).
 */
export interface StatementRowsCase {
  name: string;
  given: (ids: Ids) => NewEvent[][];
  when: (ids: Ids) => NewEvent[][];
}

/** The ids of one case's run: its session, its executions and turns by number. */
export interface Ids {
  sessionId: string;
  execution(n: number): string;
  turn(n: number): string;
}

const say = (messageId: string, text: string, role: CommittedMessage['role'] = 'user'): CommittedMessage => ({
  messageId,
  role,
  sourceType: role === 'user' ? 'player' : 'runtime',
  pluginId: role === 'user' ? null : 'narrator',
  runtimeId: role === 'user' ? null : 'story',
  outputKind: role === 'user' ? null : 'story',
  text,
});

/** A plugin-data row of execution `n` (plugin `affinity`, namespace `scores` unless named). */
interface PluginRow {
  pluginId?: string;
  namespace?: string;
  key: string;
}

/** What a plugin-data event of execution `n` says of its row (`ev.written`, `ev.deleted`). */
const pluginRowOf = (ids: Ids, n: number, row: PluginRow) => ({
  executionId: ids.execution(n),
  turnId: ids.turn(n),
  attempt: 1,
  pluginId: row.pluginId ?? 'affinity',
  namespace: row.namespace ?? 'scores',
  key: row.key,
});

/** The events of the cases, for one session's `Ids` (also used by the inline rebuild race test). */
export const ev = {
  created: (ids: Ids): NewEvent => ({ type: 'session.created@1', data: { sessionId: ids.sessionId, worldId: null, locale: 'en' } }),
  opened: (ids: Ids): NewEvent => ({
    type: 'session.opened@1',
    data: { turnId: ids.turn(0), messageId: `${ids.turn(0)}-m`, openingIndex: 0, text: 'Il était une fois… 🐉' },
  }),
  input: (ids: Ids, n: number): NewEvent => ({
    type: 'player-input.submitted@1',
    data: { executionId: ids.execution(n), turnId: ids.turn(n), messageId: `${ids.execution(n)}-m`, text: `go north ${n} 😀` },
  }),
  activated: (ids: Ids, n: number): NewEvent => ({
    type: 'runtime.activated@1',
    data: {
      executionId: ids.execution(n),
      turnId: ids.turn(n),
      messageId: `${ids.execution(n)}-m`,
      kind: 'manual',
      pluginId: 'p',
      runtimeId: 'r',
      payload: {},
    },
  }),
  started: (ids: Ids, n: number, attempt = 1): NewEvent => ({
    type: 'execution.started@1',
    data: { executionId: ids.execution(n), turnId: ids.turn(n), attempt, workerId: `w${attempt}` },
  }),
  resolved: (ids: Ids, n: number): NewEvent => ({
    type: 'extension.resolved@1',
    data: {
      executionId: ids.execution(n),
      turnId: ids.turn(n),
      attempt: 1,
      point: 'prompt.segment@1',
      pluginId: 'narrator',
      extensionId: 'story',
      inputHash: '0'.repeat(64),
      result: '{}',
    },
  }),
  calling: (ids: Ids, n: number, step = 1): NewEvent => ({
    type: 'llm.calling@1',
    data: {
      executionId: ids.execution(n),
      turnId: ids.turn(n),
      attempt: 1,
      callId: `${ids.execution(n)}-c${step}`,
      pluginId: 'narrator',
      runtimeId: 'story',
      provider: 'openai',
      model: 'm',
      step,
      body: '{}',
    },
  }),
  responded: (ids: Ids, n: number, step = 1): NewEvent => ({
    type: 'llm.responded@1',
    data: {
      executionId: ids.execution(n),
      turnId: ids.turn(n),
      callId: `${ids.execution(n)}-c${step}`,
      pluginId: 'narrator',
      runtimeId: 'story',
      finishReason: 'stop',
      usage: { inputTokens: 10, outputTokens: 5, cachedInputTokens: 0 },
      step,
    },
  }),
  output: (ids: Ids, n: number): NewEvent => ({
    type: 'runtime.output.produced@1',
    data: {
      executionId: ids.execution(n),
      turnId: ids.turn(n),
      attempt: 1,
      stage: null,
      pluginId: 'narrator',
      runtimeId: 'story',
      outputKind: 'story',
      messageId: `${ids.execution(n)}-r`,
      text: `答 ${n}`,
    },
  }),
  committed: (ids: Ids, n: number, messages?: CommittedMessage[]): NewEvent => ({
    type: 'turn.committed@1',
    data: {
      executionId: ids.execution(n),
      turnId: ids.turn(n),
      attempt: 1,
      messages: messages ?? [say(`${ids.execution(n)}-m`, `go north ${n} 😀`), say(`${ids.execution(n)}-r`, `答 ${n}`, 'assistant')],
    },
  }),
  suspended: (ids: Ids, n: number): NewEvent => ({
    type: 'execution.suspended@1',
    data: {
      executionId: ids.execution(n),
      turnId: ids.turn(n),
      attempt: 1,
      pluginId: 'p',
      runtimeId: 'r',
      step: 1,
      toolCallId: 'call-1',
      name: 'ask',
      currentTurnUserMessages: [{ role: 'user', content: 'go north' }],
      inputs: [],
      waitingFor: { kind: 'approval', prompt: 'Ouvrir la chambre forte ? 🔐' },
    },
  }),
  written: (ids: Ids, n: number, row: PluginRow & { value: unknown }): NewEvent => ({
    type: 'plugin-data.written@1',
    data: { ...pluginRowOf(ids, n, row), value: row.value as never },
  }),
  deleted: (ids: Ids, n: number, row: PluginRow): NewEvent => ({ type: 'plugin-data.deleted@1', data: pluginRowOf(ids, n, row) }),
  resumed: (ids: Ids, n: number): NewEvent => ({
    type: 'execution.resumed@1',
    data: {
      executionId: ids.execution(n),
      turnId: ids.turn(n),
      resumeId: `${ids.execution(n)}-r`,
      pluginId: 'p',
      runtimeId: 'r',
      step: 1,
      toolCallId: 'call-1',
      payload: { approved: true },
    },
  }),
};

/** A whole turn n, appended as a narrator turn's three appends are. */
export const turn = (ids: Ids, n: number): NewEvent[][] => [
  [ev.input(ids, n)],
  [ev.started(ids, n), ev.resolved(ids, n), ev.calling(ids, n)],
  [ev.responded(ids, n), ev.output(ids, n), ev.committed(ids, n)],
];

export const statementRowsCases: readonly StatementRowsCase[] = [
  { name: 'a session’s opening (turn 0: its row, not counted)', given: (ids) => [[ev.created(ids)]], when: (ids) => [[ev.opened(ids)]] },
  { name: 'a player’s input (the execution queued at its version)', given: (ids) => [[ev.created(ids), ev.opened(ids)]], when: (ids) => [[ev.input(ids, 1)]] },
  {
    name: 'the claim with a handler result and the first model call (one update: the call’s mark left out)',
    given: (ids) => [[ev.created(ids)], [ev.input(ids, 1)]],
    when: (ids) => [[ev.started(ids, 1), ev.resolved(ids, 1), ev.calling(ids, 1)]],
  },
  {
    name: 'a model call alone, an output alone (progress marks)',
    given: (ids) => [[ev.created(ids)], [ev.input(ids, 1)], [ev.started(ids, 1)]],
    when: (ids) => [[ev.calling(ids, 1)], [ev.output(ids, 1)], [ev.calling(ids, 1, 2)]],
  },
  {
    name: 'the reply with the output and the commit (the messages after the session’s last row, one more turn)',
    given: (ids) => [[ev.created(ids), ev.opened(ids)], ...turn(ids, 1), [ev.input(ids, 2)], [ev.started(ids, 2), ev.calling(ids, 2)]],
    when: (ids) => [[ev.responded(ids, 2), ev.output(ids, 2), ev.committed(ids, 2)]],
  },
  {
    name: 'three whole turns, each append one statement',
    given: (ids) => [[ev.created(ids), ev.opened(ids)]],
    when: (ids) => [...turn(ids, 1), ...turn(ids, 2), ...turn(ids, 3)],
  },
  {
    name: 'a suspension and its resume',
    given: (ids) => [[ev.created(ids)], [ev.input(ids, 1)], [ev.started(ids, 1), ev.calling(ids, 1)]],
    when: (ids) => [[ev.responded(ids, 1), ev.suspended(ids, 1)], [ev.resumed(ids, 1)], [ev.calling(ids, 1, 2)]],
  },
  {
    name: 'an activation (no input row), its claim, a commit of no message',
    given: (ids) => [[ev.created(ids)]],
    when: (ids) => [[ev.activated(ids, 1)], [ev.started(ids, 1)], [ev.committed(ids, 1, [])]],
  },
  {
    name: 'what changes nothing: a claim of an ended execution, a commit whose messages are stored (no turn counted), marks while not running',
    given: (ids) => [[ev.created(ids)], ...turn(ids, 1)],
    when: (ids) => [[ev.started(ids, 1, 2)], [ev.committed(ids, 1)], [ev.output(ids, 1)], [ev.input(ids, 2)], [ev.calling(ids, 2)]],
  },
  {
    name: 'a plugin’s rows: a new key (its namespace counted), a rewrite (counted once), another key, a delete, a delete of a key not there',
    given: (ids) => [[ev.created(ids)], [ev.input(ids, 1)], [ev.started(ids, 1)]],
    when: (ids) => [
      [ev.written(ids, 1, { key: 'mira', value: { score: 3 } })],
      [ev.written(ids, 1, { key: 'mira', value: { score: 4, feeling: 'wary ☂' } })],
      [ev.written(ids, 1, { key: 'Ōkami 狼', value: -2 })],
      [ev.deleted(ids, 1, { key: 'mira' })],
      [ev.deleted(ids, 1, { key: 'nobody' })],
      [ev.written(ids, 1, { key: 'mira', value: 'again 😀' })],
    ],
  },
  {
    name: 'the claim with a function’s plugin-data write and its output; the commit with a rewrite; two plugins’ rows in one append',
    given: (ids) => [[ev.created(ids), ev.opened(ids)], ...turn(ids, 1), [ev.input(ids, 2)]],
    when: (ids) => [
      [ev.started(ids, 2), ev.written(ids, 2, { pluginId: 'world-time', namespace: 'clock', key: 'now', value: { day: 1 } }), ev.output(ids, 2)],
      [ev.written(ids, 2, { key: 'mira', value: 1 }), ev.written(ids, 2, { pluginId: 'memory', namespace: 'blocks', key: 'mira', value: null })],
      [ev.responded(ids, 2), ev.written(ids, 2, { pluginId: 'world-time', namespace: 'clock', key: 'now', value: { day: 2 } }), ev.committed(ids, 2)],
    ],
  },
];

/** The rows of one session in the tables the statement's writes touch, in a fixed order. */
export async function sessionRows(db: Kysely<Database>, sessionId: string) {
  const q = async (table: string, order: string) =>
    (await sql`select * from ${sql.table(table)} where session_id = ${sessionId} order by ${sql.raw(order)}`.execute(db)).rows;
  return {
    executions: await q('executions', 'execution_id'),
    turn_messages: await q('turn_messages', 'ord'),
    history_watermarks: await q('history_watermarks', 'session_id'),
    plugin_data: await q('plugin_data', 'plugin_id, namespace, key'),
    plugin_data_namespaces: await q('plugin_data_namespaces', 'plugin_id, namespace'),
  };
}

/**
 * Runs `c` on `db` through `via` (`append` at the stream's version, or `appendCatchingUp`'s first
 * try): returns the rows the appends wrote, and the rows a rebuild of the session writes.
 */
export async function runStatementRowsCase(
  db: Kysely<Database>,
  c: StatementRowsCase,
  via: 'append' | 'catchingUp',
): Promise<{ appended: Awaited<ReturnType<typeof sessionRows>>; rebuilt: Awaited<ReturnType<typeof sessionRows>>; oneStatement: boolean[] }> {
  const store = new EventStore(db, { inline: inlineProjections });
  const tenantId = `t-${randomUUID()}`;
  const sessionId = `s-${randomUUID()}`;
  const ids: Ids = { sessionId, execution: (n) => `${sessionId}-e${n}`, turn: (n) => `${sessionId}-u${n}` };
  const since = await store.headPosition();
  let version = 0;
  for (const events of c.given(ids)) version = (await store.append({ tenantId, streamId: sessionId, expectedVersion: version, events })).version;
  const oneStatement: boolean[] = [];
  for (const events of c.when(ids)) {
    oneStatement.push(inlineStatement(inlineProjections, { tenantId, streamId: sessionId }, events.map(validateEvent), insertedRow) !== undefined);
    if (via === 'append') version = (await store.append({ tenantId, streamId: sessionId, expectedVersion: version, events })).version;
    else {
      const { appended, missed } = await store.appendCatchingUp({ tenantId, streamId: sessionId, afterVersion: version, events, rebuild: () => events });
      if (missed.length > 0 || !appended) throw new Error('the first try did not write');
      version = appended.version;
    }
  }
  const appended = await sessionRows(db, sessionId);
  const rebuild = await rebuildInline({ db, projections: inlineProjections, since });
  if (rebuild.failures.length > 0) throw new Error(`rebuild failed: ${String(rebuild.failures[0].error)}`);
  return { appended, rebuilt: await sessionRows(db, sessionId), oneStatement };
}
