import { sql } from 'kysely';
import { type Engine, promptCacheKey } from '../../libs/engine';
import { StoryFolds } from '../../libs/engine/history';
import { type JsonValue, MAX_LIST_LIMIT, readStoryLog, type StoredEvent, storyEvents } from '../../libs/events';

/**
 * Comparing two sessions' story state and requests apart from the ids bound to each session
 * (issue 30's acceptance tests): an explicit map from one session's ids to the other's, built by
 * walking both story paths side by side; the folds of a session (its projections' rows and the same
 * read models folded in memory from its story log); a readable diff of two request bodies.
 */

type Ofs<T extends StoredEvent['type']> = Extract<StoredEvent, { type: T }>;
const ofType = <T extends StoredEvent['type']>(events: readonly StoredEvent[], type: T): Ofs<T>[] => events.filter((e): e is Ofs<T> => e.type === type);

/** Ids of session A mapped to the matching ids of session B; `normalise` rewrites A's text in B's ids. */
export class IdMap {
  private readonly pairs = new Map<string, string>();

  /** Pairs `a[i]` with `b[i]`; the lists must be as long (the same story shape). */
  addAll(what: string, a: readonly string[], b: readonly string[]): this {
    if (a.length !== b.length) throw new Error(`${what}: ${a.length} ids in session A, ${b.length} in session B (the stories differ in shape)`);
    a.forEach((id, i) => this.add(what, id, b[i]));
    return this;
  }

  add(what: string, a: string, b: string): this {
    const known = this.pairs.get(a);
    if (known !== undefined && known !== b) throw new Error(`${what}: id ${a} is paired with ${known} and ${b}`);
    this.pairs.set(a, b);
    return this;
  }

  /** `text` with every id of A replaced by B's (ids are UUIDs or hashes: no id is part of another). */
  normalise(text: string): string {
    let out = text;
    for (const [a, b] of this.pairs) if (a !== b) out = out.split(a).join(b);
    return out;
  }

  /** A JSON value with A's ids replaced (keys and strings alike). */
  normaliseJson<T>(value: T): T {
    return JSON.parse(this.normalise(JSON.stringify(value))) as T;
  }
}

/** The ids of a story path in order: the opening's turn and message, then each counted commit's execution, turn and messages. */
export function storyPathIds(storyLog: readonly StoredEvent[]): string[] {
  const ids: string[] = [];
  for (const e of storyEvents(storyLog)) {
    if (e.type === 'session.opened@1') ids.push(e.data.turnId, e.data.messageId);
    if (e.type === 'turn.committed@1') ids.push(e.data.executionId, e.data.turnId, ...e.data.messages.map((m) => m.messageId));
  }
  return ids;
}

/**
 * Pairs the ids of one execution of A with those of one of B, by their place in it (not by log
 * order: bookkeepers run in parallel): the input's ids, each model call's id by runtime and step,
 * each tool call's id by runtime, step and order, each runtime output's message id.
 */
export function pairExecutionIds(
  map: IdMap,
  a: { events: readonly StoredEvent[]; executionId: string },
  b: { events: readonly StoredEvent[]; executionId: string },
) {
  const of = (side: typeof a) => side.events.filter((e) => (e.data as { executionId?: string }).executionId === side.executionId);
  const [ea, eb] = [of(a), of(b)];
  const input = (events: StoredEvent[]) => {
    const i = ofType(events, 'player-input.submitted@1')[0];
    return [i.data.executionId, i.data.turnId, i.data.messageId];
  };
  map.addAll('the input', input(ea), input(eb));
  const keyed = (events: StoredEvent[]) => {
    const out = new Map<string, string>();
    for (const e of ofType(events, 'llm.calling@1')) out.set(`call ${e.data.pluginId}/${e.data.runtimeId}#${e.data.step ?? 1}`, e.data.callId);
    const toolCalls = new Map<string, number>();
    for (const e of ofType(events, 'tool.called@1')) {
      const at = `tool ${e.data.pluginId}/${e.data.runtimeId}#${e.data.step}`;
      const n = toolCalls.get(at) ?? 0;
      toolCalls.set(at, n + 1);
      out.set(`${at}.${n}`, e.data.toolCallId);
    }
    for (const e of ofType(events, 'runtime.output.produced@1')) out.set(`output ${e.data.pluginId}/${e.data.runtimeId}`, e.data.messageId);
    return out;
  };
  const [ka, kb] = [keyed(ea), keyed(eb)];
  for (const [key, id] of ka) if (kb.has(key)) map.add(key, id, kb.get(key)!);
}

/** Pairs each runtime's prompt_cache_key of session A (its root's) with B's. */
export function pairCacheKeys(map: IdMap, rootA: string, rootB: string, runtimes: readonly { pluginId: string; runtimeId: string }[]) {
  for (const r of runtimes)
    map.add(`prompt_cache_key ${r.pluginId}/${r.runtimeId}`, promptCacheKey(rootA, r.pluginId, r.runtimeId), promptCacheKey(rootB, r.pluginId, r.runtimeId));
}

/** The requests of one execution as recorded (`llm.calling@1`), by `plugin/runtime#step`. */
export function recordedRequests(events: readonly StoredEvent[], executionId: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of ofType(events, 'llm.calling@1'))
    if (e.data.executionId === executionId) out.set(`${e.data.pluginId}/${e.data.runtimeId}#${e.data.step ?? 1}`, e.data.body);
  return out;
}

/**
 * What the requests of one execution saw of the plugins' state: each recorded extension result
 * (`extension.resolved@1`: prompt segments, the world context with its dimensions, memory block
 * definitions), by point and extension; the per-runtime hooks (PostContextAssembly) are left out.
 */
export function resolvedExtensions(events: readonly StoredEvent[], executionId: string): Record<string, unknown> {
  const out: Record<string, unknown[]> = {};
  for (const e of ofType(events, 'extension.resolved@1')) {
    if (e.data.executionId !== executionId || e.data.point === 'PostContextAssembly') continue;
    (out[`${e.data.point} ${e.data.pluginId}/${e.data.extensionId}`] ??= []).push(JSON.parse(e.data.result));
  }
  return Object.fromEntries(
    Object.keys(out)
      .sort()
      .map((k) => [k, out[k]]),
  );
}

/** A message of the history, without its place in the table. */
export interface HistoryRow {
  turnId: string;
  messageId: string;
  role: string;
  sourceType: string;
  pluginId: string | null;
  runtimeId: string | null;
  outputKind: string | null;
  text: string;
}

/** One session's plugin data: plugin → namespace → [key, value] in creation order. */
export type PluginDataByPlugin = Record<string, Record<string, [string, JsonValue][]>>;

/** The read models of one session's story, folded in memory from its story log (`StoryFolds`, as replay and audit fold them). */
export interface FoldedStory {
  pluginData: PluginDataByPlugin;
  history: HistoryRow[];
  summaries: { id: string; content: string; messageIds: readonly string[] }[];
}

/** The same read models as the projections hold them, and the in-memory folds of the same log. */
export interface SessionFolds extends FoldedStory {
  namespaceCounts: Record<string, number>;
  folded: FoldedStory;
}

const historyRow = (m: HistoryRow): HistoryRow => ({
  turnId: m.turnId,
  messageId: m.messageId,
  role: m.role,
  sourceType: m.sourceType,
  pluginId: m.pluginId,
  runtimeId: m.runtimeId,
  outputKind: m.outputKind,
  text: m.text,
});

const sortedRecord = <T>(entries: [string, T][]): Record<string, T> => Object.fromEntries([...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

/** The story folded in memory from a session's story log (its parent's read first for a branch), up to `throughVersion` of its own stream. */
export async function foldStory(engine: Engine, at: { tenantId: string; sessionId: string; throughVersion?: number }): Promise<FoldedStory> {
  const log = await readStoryLog(engine.database.db, at);
  const folds = new StoryFolds();
  for (const e of log) folds.apply(e);
  const namespaces = new Map<string, Set<string>>();
  for (const e of ofType(log, 'plugin-data.written@1')) {
    if (!namespaces.has(e.data.pluginId)) namespaces.set(e.data.pluginId, new Set());
    namespaces.get(e.data.pluginId)!.add(e.data.namespace);
  }
  const pluginData: [string, Record<string, [string, JsonValue][]>][] = [];
  for (const [pluginId, names] of namespaces) {
    const rows: [string, [string, JsonValue][]][] = [];
    for (const ns of names) {
      const listed = folds.pluginData.list(pluginId, ns, { limit: MAX_LIST_LIMIT });
      if (listed.length > 0) rows.push([ns, listed.map((r) => [r.key, r.value])]);
    }
    if (rows.length > 0) pluginData.push([pluginId, sortedRecord(rows)]);
  }
  const coverage = new Map(folds.history.summariesWithCoverage().map((s) => [s.id, s.messageIds]));
  return {
    pluginData: sortedRecord(pluginData),
    history: folds.history.uncompacted(at.sessionId, 100_000).map(historyRow),
    summaries: folds.history.savedSummaries().map((s) => ({ id: s.id, content: s.content, messageIds: coverage.get(s.id) ?? [] })),
  };
}

/** A session's read models as its projections hold them now, with the in-memory fold of its story log beside them. */
export async function sessionFolds(engine: Engine, tenantId: string, sessionId: string): Promise<SessionFolds> {
  const db = engine.database.db;
  const rows = await db
    .selectFrom('plugin_data')
    .select(['plugin_id', 'namespace', 'key', 'value'])
    .where('session_id', '=', sessionId)
    .orderBy('plugin_id')
    .orderBy('namespace')
    .orderBy('created_position')
    .execute();
  const pluginData: PluginDataByPlugin = {};
  for (const r of rows) ((pluginData[r.plugin_id] ??= {})[r.namespace] ??= []).push([r.key, r.value as JsonValue]);
  const counts = await db
    .selectFrom('plugin_data_namespaces')
    .select(['plugin_id', 'namespace', 'row_count'])
    .where('session_id', '=', sessionId)
    .where('row_count', '>', 0)
    .execute();
  const history = (await engine.readModels.messages(tenantId, sessionId, { limit: 10_000 })).filter((m) => !m.compacted).map(historyRow);
  const summaries = (await engine.readModels.summaries(tenantId, sessionId, { withMessageIds: true })).map((s) => ({
    id: s.id,
    content: s.content,
    messageIds: s.messageIds ?? [],
  }));
  return {
    pluginData,
    namespaceCounts: sortedRecord(counts.map((c) => [`${c.plugin_id}/${c.namespace}`, Number(c.row_count)])),
    history,
    summaries,
    folded: await foldStory(engine, { tenantId, sessionId }),
  };
}

/** Every row of every table of the given projections, each table's rows in a fixed order. */
export async function dumpTables(engine: Engine, tables: readonly string[]): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of [...new Set(tables)].sort()) {
    const { rows } = await sql.raw(`select * from ${table}`).execute(engine.database.db);
    out[table] = rows.map((r) => JSON.stringify(r)).sort();
  }
  return out;
}

/** A request body as lines: pretty JSON, each string's line breaks as lines too. */
function lines(body: string): string[] {
  let pretty = body;
  try {
    pretty = JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    // not JSON: compared as it is
  }
  return pretty.split('\n').flatMap((l) => l.split('\\n'));
}

/** A line diff (`-` A only, `+` B only) with two lines of context around each change, at most `limit` lines. */
export function lineDiff(a: string, b: string, limit = 120): string {
  const [x, y] = [lines(a), lines(b)];
  // longest common subsequence, from the end
  const lcs: number[][] = Array.from({ length: x.length + 1 }, () => new Array<number>(y.length + 1).fill(0));
  for (let i = x.length - 1; i >= 0; i--)
    for (let j = y.length - 1; j >= 0; j--) lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const ops: [' ' | '-' | '+', string][] = [];
  let [i, j] = [0, 0];
  while (i < x.length || j < y.length) {
    if (i < x.length && j < y.length && x[i] === y[j]) {
      ops.push([' ', x[i]]);
      i++;
      j++;
    } else if (i < x.length && (j === y.length || lcs[i + 1][j] >= lcs[i][j + 1])) ops.push(['-', x[i++]]);
    else ops.push(['+', y[j++]]);
  }
  const shown = ops.map((op, k) => op[0] !== ' ' || ops.slice(Math.max(0, k - 2), k + 3).some((o) => o[0] !== ' '));
  const out: string[] = [];
  ops.forEach((op, k) => {
    if (shown[k]) out.push(`${op[0]} ${op[1]}`);
    else if (k > 0 && shown[k - 1]) out.push('  …');
  });
  return (out.length > limit ? [...out.slice(0, limit), `  … (${out.length - limit} more lines)`] : out).join('\n');
}

/** Fails with a line diff unless the two request bodies are byte-identical. */
export function expectIdenticalRequest(label: string, actual: string, expected: string): void {
  if (actual === expected) return;
  let at = 0;
  while (at < actual.length && actual[at] === expected[at]) at++;
  throw new Error(`${label}: the requests differ from character ${at} on (- first session, normalised; + second session):\n${lineDiff(actual, expected)}`);
}
