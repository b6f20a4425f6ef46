import { randomUUID } from 'node:crypto';
import type { CommittedMessage, EventStore, StoredEvent } from '../../events';
import { type ExecutionJournal, type RuntimeOutput, runtimeKey } from '../journal/journal';
import { committedMessages } from '../execution/commit';
import { type CatalogGenerations, executionCatalog } from '../catalog/catalog-generations';
import type { RuntimeCatalog } from '../catalog/runtime-catalog';
import type { DeltaBus, StoryDelta } from '../live';
import { readSessionCreated } from './session-reads';

export interface KeptTurnDeps {
  deltas: Pick<DeltaBus, 'recent'>;
  generations: CatalogGenerations;
  store: EventStore;
}

/**
 * The turn a stop with `keepPartial` keeps: the messages its commit would record if the story
 * runtimes still writing had ended where their streamed text is now (what the session's event
 * stream has shown: the deltas the bus keeps for each call, in order) — the player's input, the
 * outputs already recorded, and each partial story text as its runtime's story message, placed as
 * `committedMessages` places them. Undefined when no story text was written yet: nothing is kept.
 * `events`: the session's log from the execution's input on (its journal's events).
 */
export async function keptTurn(
  deps: KeptTurnDeps,
  at: { sessionId: string; execution: ExecutionJournal; events: readonly StoredEvent[] },
): Promise<CommittedMessage[] | undefined> {
  const { execution } = at;
  const catalog = await catalogOf(deps, at.sessionId, execution);
  const outputs = new Map(execution.outputs);
  for (const call of streamingCalls(at.events, execution)) {
    const text = partialText(await deps.deltas.recent(call.callId));
    if (text === '') continue;
    const output: RuntimeOutput = {
      stage: catalog.find(call.pluginId, call.runtimeId)?.stage ?? null,
      pluginId: call.pluginId,
      runtimeId: call.runtimeId,
      outputKind: 'story',
      messageId: randomUUID(),
      text,
      attempt: call.attempt,
      midTurnBefore: execution.midTurnMessages.length,
    };
    outputs.set(runtimeKey(call.pluginId, call.runtimeId), output);
  }
  const messages = committedMessages(catalog, { ...execution, outputs });
  return messages.some((m) => m.outputKind === 'story' && m.text.trim() !== '') ? messages : undefined;
}

/**
 * The model calls of the execution's current attempt still under way: per runtime without a
 * recorded output, its latest `llm.calling@1` with no `llm.responded@1` yet. Only story runtimes
 * stream, so only their calls have deltas.
 */
function streamingCalls(
  events: readonly StoredEvent[],
  execution: ExecutionJournal,
): { callId: string; pluginId: string; runtimeId: string; attempt: number }[] {
  const open = new Map<string, { callId: string; pluginId: string; runtimeId: string; attempt: number }>();
  for (const event of events) {
    if (event.type === 'llm.calling@1' && event.data.executionId === execution.executionId && event.data.attempt === execution.latestAttempt) {
      const { callId, pluginId, runtimeId, attempt } = event.data;
      open.set(runtimeKey(pluginId, runtimeId), { callId, pluginId, runtimeId, attempt });
    }
    if (event.type === 'llm.responded@1' && event.data.executionId === execution.executionId) {
      const key = runtimeKey(event.data.pluginId, event.data.runtimeId);
      if (open.get(key)?.callId === event.data.callId) open.delete(key);
    }
  }
  return [...open.entries()].filter(([key]) => !execution.outputs.has(key)).map(([, call]) => call);
}

/**
 * A call's text as streamed so far: its deltas from the first on, without a gap (a delta the bus
 * lost ends it), never cut inside a code point (a surrogate without its pair is dropped), without
 * the whitespace a cut leaves at the end.
 */
export function partialText(deltas: readonly StoryDelta[]): string {
  const bySeq = new Map(deltas.map((d) => [d.seq, d.text]));
  let text = '';
  for (let seq = 1; bySeq.has(seq); seq++) text += bySeq.get(seq)!;
  return text.replace(LONE_SURROGATE, '').trimEnd();
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** The catalog the execution runs with (as far as the session's plugins go); the current one when this process does not hold its generation. */
async function catalogOf(deps: KeptTurnDeps, sessionId: string, execution: ExecutionJournal): Promise<RuntimeCatalog> {
  const plugins = (await readSessionCreated(deps, sessionId))?.plugins ?? null;
  let catalog: RuntimeCatalog;
  try {
    catalog = executionCatalog({ catalog: deps.generations.current, generations: deps.generations }, execution);
  } catch {
    catalog = deps.generations.current;
  }
  return catalog.forSession(plugins);
}
