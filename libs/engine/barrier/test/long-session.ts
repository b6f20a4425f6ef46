import { join } from 'node:path';
import { rebuildInline, type StoredEvent } from '../../../events';
import { endpointFor, parseLlmConfig, ProviderRegistry } from '../../../providers';
import { dumpProjections } from '../../../../test/support/projection-dump';
import { SMALL_WINDOW_LLM } from '../../../../test/support/small-window-llm';
import { StoryFolds } from '../../history/story-folds';
import { loadRuntimeHistory } from '../../history/history-loader';
import { engineInlineProjections } from '../../startup/projections';
import { historyReadLimit } from '../../execution/deps';
import { TurnRunner } from '../../turn/turn-runner';
import { eventually, type TurnHarness, turnHarness } from '../../turn/test/harness';

/**
 * The repository's default plugins: the narrator and the default history-compaction plugin (the
 * plugins enabled by default: the other built-ins have `enabledByDefault: false`).
 */
const DEFAULT_PLUGINS = join(__dirname, '..', '..', '..', '..', 'plugins');

type Data = Record<string, unknown>;

/** The data of the events of one type, in log order. */
export const eventData = (events: StoredEvent[], type: string) => events.filter((e) => e.type === type).map((e) => e.data as Data);

/** Turns run through the real turn runner with the default plugins; story and fast slot 8k (emulator), or the slots of `llm` (llm.toml text). */
export async function smallWindowHarness(llm: string = SMALL_WINDOW_LLM): Promise<TurnHarness> {
  const h = await turnHarness({ pluginsDir: DEFAULT_PLUGINS, pluginFilter: (p) => p.manifest.enabledByDefault, handlers: (deps) => new TurnRunner(deps) });
  h.deps.providers = new ProviderRegistry(parseLlmConfig(llm), (protocol) => endpointFor(protocol, {}, h.emulator.url));
  return h;
}

/** Submits a player input, runs its turn to the end and expects it committed. */
export async function playTurn(h: TurnHarness, session: { tenantId: string; sessionId: string }, text: string) {
  const job = await h.input(session, text);
  await h.queue.enqueue(job);
  const status = async () => (await h.deps.readModels.execution(job.tenantId, job.executionId))?.status ?? '';
  await eventually(async () => ['committed', 'failed'].includes(await status()), 'ended');
  expect(await status()).toBe('committed');
  return job;
}

/** The history fold gives the uncompacted view the read models give, and a rebuild of the inline projections gives the same rows. */
export async function expectReplayIdentical(h: TurnHarness, session: { tenantId: string; sessionId: string }): Promise<void> {
  const read = await loadRuntimeHistory(h.deps.readModels, session.tenantId, session.sessionId, historyReadLimit(h.deps));
  const fold = new StoryFolds();
  for (const e of await h.events(session.sessionId)) fold.apply(e);
  expect(fold.history.uncompacted(session.sessionId, 1000)).toEqual(read.messages);
  const rows = await dumpProjections(h.database.db);
  expect((await rebuildInline({ db: h.database.db, projections: engineInlineProjections })).failures).toEqual([]);
  expect(await dumpProjections(h.database.db)).toEqual(rows);
}

/**
 * Right after a compaction: the summaries (merged ones included) cover exactly the compacted prefix
 * of the session's messages, in order, and the uncompacted view is the rest.
 */
export async function expectSummariesCoverCompactedPrefix(
  h: TurnHarness,
  session: { tenantId: string; sessionId: string },
  read: Awaited<ReturnType<typeof loadRuntimeHistory>>,
): Promise<void> {
  const all = (await h.deps.readModels.messages(session.tenantId, session.sessionId)).map((m) => m.messageId);
  expect(read.summaries.flatMap((s) => s.messageIds ?? [])).toEqual(all.slice(0, read.stats.compacted));
  expect(read.messages.map((m) => m.messageId)).toEqual(all.slice(read.stats.compacted));
}
