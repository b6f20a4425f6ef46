import { join } from 'node:path';
import type { Reply, ScriptedCall } from '../../../emulator';
import { fixedText } from '../../../context';
import { rebuildInline, type StoredEvent } from '../../../events';
import { dumpProjections } from '../../../../test/support/projection-dump';
import { engineInlineProjections } from '../../startup/projections';
import { rebuildRequests } from '../../audit/request-rebuild';
import { auditTurn } from '../../audit/turn-audit';
import { TurnAlternativesService } from '../turn-alternatives';
import { historyReadLimit } from '../../execution/deps';
import { TurnRunner } from '../../turn/turn-runner';
import { eventually, type TurnHarness, turnHarness } from '../../turn/test/harness';

/** facts and rumors (pre-turn, structured), the narrator (narrative, story), the reader (post-turn: `story` is the narrator's output, cardinality one). */
const PLUGINS = join(__dirname, '..', '..', '..', '..', 'test', 'fixtures', 'inputs-plugins');

/** The narrator's n-th call tells take n, so a regeneration's story text differs from its source's; every other call gets the emulator's own reply. */
let takes = 0;
function script(call: ScriptedCall): Reply | undefined {
  if (!(call.transcript[0]?.content ?? '').includes('Tell the story.')) return undefined;
  takes += 1;
  return { kind: 'text', text: `The oak door swings open (take ${takes}).` };
}

type Calling = { runtimeId: string; body: string; executionId: string };
const callings = (events: StoredEvent[], executionId: string): Calling[] =>
  events.flatMap((e) => (e.type === 'llm.calling@1' && e.data.executionId === executionId ? [e.data] : []));
const outputs = (events: StoredEvent[], executionId: string) =>
  events.flatMap((e) => (e.type === 'runtime.output.produced@1' && e.data.executionId === executionId ? [e.data] : []));
const occurrences = (text: string, part: string) => text.split(part).length - 1;
/** A story text as it stands in a JSON request body. */
const inBody = (text: string) => JSON.stringify(text).slice(1, -1);

jest.setTimeout(60_000);

/**
 * Spec §1 "This turn's story text", rules 1.28 and 1.37, on the engine's retry model: a retry
 * (`POST …/turns/:turnId/retry`) is a regeneration that reads the history without the turn it
 * re-runs and runs every runtime again; nothing of the source turn is carried in as a seed.
 */
describe('a retried turn (real turns): every runtime runs again, no seed, the same conversation as the first run', () => {
  let h: TurnHarness;
  let alternatives: TurnAlternativesService;
  beforeAll(async () => {
    h = await turnHarness({ pluginsDir: PLUGINS, script, handlers: (deps) => new TurnRunner(deps) });
    alternatives = new TurnAlternativesService({ store: h.deps.store, queue: h.queue, readModels: h.deps.readModels, logger: h.deps.logger });
  });
  afterAll(() => h.close());

  const ended = async (job: { tenantId: string; executionId: string }) => {
    await eventually(async () => ['committed', 'failed'].includes((await h.deps.readModels.execution(job.tenantId, job.executionId))?.status ?? ''), 'ended');
    expect((await h.deps.readModels.execution(job.tenantId, job.executionId))?.status).toBe('committed');
  };
  const play = async (session: { tenantId: string; sessionId: string }, text: string) => {
    const job = await h.input(session, text);
    await h.queue.enqueue(job);
    await ended(job);
    return job;
  };

  it('re-runs every runtime from the history without the source turn; the story text is its own, in the conversation the first run read; audit and replay exact', async () => {
    const session = await h.session();
    const first = await play(session, 'Light the lantern');
    const source = await play(session, 'Open the door');
    const { answer } = await alternatives.retry({ ...session, turnId: source.turnId });
    const retried = { ...session, ...answer };
    await ended(retried);
    const events = await h.events(session.sessionId);

    // nothing is carried in: each runtime of the source turn produced its output again, in this execution, from its own model call
    const ran = (executionId: string) => outputs(events, executionId).map((o) => `${o.pluginId}/${o.runtimeId}`);
    expect(ran(retried.executionId).sort()).toEqual(ran(source.executionId).sort());
    expect(ran(retried.executionId).sort()).toEqual(['facts/facts', 'narrator/narrator', 'reader/reader', 'rumors/rumors']);
    expect(
      callings(events, retried.executionId)
        .map((c) => c.runtimeId)
        .sort(),
    ).toEqual(['facts', 'narrator', 'reader', 'rumors']);
    const sourceIds = new Set(outputs(events, source.executionId).map((o) => o.messageId));
    expect(outputs(events, retried.executionId).some((o) => sourceIds.has(o.messageId))).toBe(false);

    const storyOf = (executionId: string) => outputs(events, executionId).find((o) => o.runtimeId === 'narrator')!.text;
    const [sourceStory, retriedStory] = [storyOf(source.executionId), storyOf(retried.executionId)];
    expect(sourceStory).not.toBe(retriedStory);
    const requestOf = (executionId: string, runtimeId: string) => callings(events, executionId).find((c) => c.runtimeId === runtimeId)!.body;
    // rule 1.28: only story text this execution produced is taken; the source's text is in no request of the retry (not in its history either)
    for (const c of callings(events, retried.executionId)) expect(c.body).not.toContain(inBody(sourceStory));
    const reader = requestOf(retried.executionId, 'reader');
    // once as the assistant message after the player input, once in its cardinality-many `storyLength` input (the pointer replaces only cardinality one)
    expect(occurrences(reader, inBody(retriedStory))).toBe(2);
    expect(occurrences(requestOf(source.executionId, 'reader'), inBody(sourceStory))).toBe(2);
    // the reader's `story` input points to the message (it was projected), as in the first run (rule 1.37 covers only a text not projected)
    const pointer = inBody(fixedText('en').storyPointer);
    expect(occurrences(reader, pointer)).toBe(1);
    expect(occurrences(requestOf(source.executionId, 'reader'), pointer)).toBe(1);
    // "both cases read the same conversation": every request of the retry is the source's request, byte for byte, but for the new story text
    for (const runtimeId of ['facts', 'rumors', 'narrator', 'reader']) {
      expect(requestOf(retried.executionId, runtimeId)).toBe(requestOf(source.executionId, runtimeId).replaceAll(inBody(sourceStory), inBody(retriedStory)));
    }

    // audit: every request of every turn and alternative re-derived byte for byte; replay: the projections rebuilt from the log alone
    for (const turnId of [first.turnId, source.turnId, retried.turnId]) {
      expect((await auditTurn({ ...h.deps, historyReadLimit: historyReadLimit(h.deps) }, session.sessionId, turnId)).identical).toBe(true);
    }
    const rebuilt = await rebuildRequests(events, h.deps.catalog, h.deps.providers, h.deps.worlds, { historyReadLimit: historyReadLimit(h.deps) });
    expect(rebuilt.length).toBe(events.filter((e) => e.type === 'llm.calling@1').length);
    expect(rebuilt.every((c) => c.identical)).toBe(true);
    const rows = await dumpProjections(h.database.db);
    expect((await rebuildInline({ db: h.database.db, projections: engineInlineProjections })).failures).toEqual([]);
    expect(await dumpProjections(h.database.db)).toEqual(rows);
  });

  it('the turn after a retry reads the retried story text once, in its history; the source turn is in no request', async () => {
    const session = await h.session();
    const source = await play(session, 'Wake the guard');
    const { answer } = await alternatives.retry({ ...session, turnId: source.turnId });
    await ended({ ...session, ...answer });
    const next = await play(session, 'Ask the guard his name');
    const events = await h.events(session.sessionId);
    const storyOf = (executionId: string) => outputs(events, executionId).find((o) => o.runtimeId === 'narrator')!.text;
    for (const c of callings(events, next.executionId)) {
      expect(c.body).not.toContain(inBody(storyOf(source.executionId)));
      expect(occurrences(c.body, inBody(storyOf(answer.executionId)))).toBe(1);
    }
    expect((await auditTurn({ ...h.deps, historyReadLimit: historyReadLimit(h.deps) }, session.sessionId, next.turnId)).identical).toBe(true);
  });
});
