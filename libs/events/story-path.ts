import type { StoredEvent } from './event-types';
import type { PendingEvent } from './projections/projection';

/**
 * The story path of a session (issue 30): which of its events the read models fold. The log keeps
 * every event; a player who picks an alternative, undoes turns, edits a message, branches or stops
 * a turn changes which of them count, never the log. Every read model that follows the story
 * (the history, summaries, plugin data) folds `storyEvents(log)`, in the SQL projections and in
 * the in-memory folds of replay and audit alike, so both give the same state.
 *
 * What counts, decided over the whole log given (a fold of a prefix sees the path as it stood then):
 * - An execution's events count unless a `turn.reverted@1` names it, a cancel without kept
 *   messages ended it (`execution.cancelled@1`), or it failed (`execution.failed@1` recorded
 *   `discarded`, every failure since issue 30: a failed turn's plugin data leaves with it).
 * - Of a turn's alternatives (the turn first played and its regenerations) one is selected: the
 *   latest one run, until `turn.superseded@1` selects another, or the last selected again when a
 *   running regeneration fails or is cancelled. Only the selected alternative's commit counts.
 *   Its other events (plugin data) count only for the selected one in a group whose regeneration
 *   was recorded `isolated` (logs before issue 30 folded every alternative's plugin data, and their
 *   audits must still derive what was sent).
 * - A compaction counts when every message it covers counts and every summary it merges counted,
 *   and, made by a turn's compaction barrier (`compaction.barrier-passed@1` names it), when that
 *   execution's events count: a reverted or cancelled turn, or an unselected isolated regeneration,
 *   takes its compaction with it.
 * - An edit counts when its message counts.
 * - `turn.superseded@1` and `turn.reverted@1` are the path itself: never passed on.
 */
export function storyEvents(events: readonly StoredEvent[]): StoredEvent[] {
  const path = new StoryPath();
  for (const event of events) path.observe(event);
  return path.filter(events);
}

/** The events that can change which earlier events count (a fold of them starts again from the log). */
export const PATH_EVENT_TYPES = [
  'turn.reverted@1',
  'turn.superseded@1',
  'session.branched@1',
  'execution.failed@1',
  'execution.cancelled@1',
] as const satisfies readonly StoredEvent['type'][];

/** True when folding `event` incrementally could be wrong: the path changed (see `PATH_EVENT_TYPES`, and an isolated regeneration's input). */
export function changesPath(event: PendingEvent): boolean {
  if ((PATH_EVENT_TYPES as readonly string[]).includes(event.type)) return true;
  return event.type === 'player-input.submitted@1' && event.data.isolated === true;
}

interface AlternativeGroup {
  selected: string;
  /** Selected before a running regeneration took the place, most recent last (restored if it fails). */
  before: string[];
  isolated: boolean;
}

class StoryPath {
  private readonly groups = new Map<string, AlternativeGroup>();
  private readonly groupOf = new Map<string, AlternativeGroup>();
  private readonly ended = new Set<string>();
  /** Executions whose cancel kept the partial turn (counted as committed). */
  private readonly kept = new Set<string>();
  /** The execution whose compaction barrier made each compaction (`compaction.barrier-passed@1`). */
  private readonly compactedIn = new Map<string, string>();

  observe(event: StoredEvent): void {
    switch (event.type) {
      case 'player-input.submitted@1': {
        const { executionId, turnId, retryFromTurnId, alternativeOf } = event.data;
        if (retryFromTurnId === undefined) {
          const group: AlternativeGroup = { selected: executionId, before: [], isolated: false };
          this.groups.set(turnId, group);
          this.groupOf.set(executionId, group);
          return;
        }
        const group = this.groups.get(alternativeOf ?? retryFromTurnId);
        if (!group) return;
        // the regeneration takes its source's place while it runs
        group.before.push(group.selected);
        group.selected = executionId;
        if (event.data.isolated === true) group.isolated = true;
        this.groupOf.set(executionId, group);
        return;
      }
      case 'turn.superseded@1': {
        const group = this.groups.get(event.data.alternativeOf);
        if (group) {
          group.selected = event.data.byExecutionId;
          group.before = [];
        }
        return;
      }
      case 'execution.cancelled@1':
        if (event.data.messages && event.data.messages.length > 0) {
          this.kept.add(event.data.executionId);
          return;
        }
        this.ended.add(event.data.executionId);
        this.restore(event.data.executionId);
        return;
      case 'execution.failed@1':
        if (event.data.discarded === true) this.ended.add(event.data.executionId);
        this.restore(event.data.executionId);
        return;
      case 'turn.reverted@1':
        for (const id of event.data.executionIds) this.ended.add(id);
        return;
      case 'compaction.barrier-passed@1':
        if (event.data.compactionId !== undefined) this.compactedIn.set(event.data.compactionId, event.data.executionId);
        return;
      default:
    }
  }

  /** A running regeneration that ended without a commit gives the place back to the alternative selected before it. */
  private restore(executionId: string): void {
    const group = this.groupOf.get(executionId);
    if (group?.selected === executionId && group.before.length > 0) group.selected = group.before.pop()!;
  }

  filter(events: readonly StoredEvent[]): StoredEvent[] {
    const liveMessages = new Set<string>();
    const liveSummaries = new Set<string>();
    const out: StoredEvent[] = [];
    for (const event of events) {
      if (!this.counts(event, liveMessages, liveSummaries)) continue;
      out.push(event);
      if (event.type === 'session.opened@1') liveMessages.add(event.data.messageId);
      if (event.type === 'turn.committed@1') for (const m of event.data.messages) liveMessages.add(m.messageId);
      if (event.type === 'execution.cancelled@1') for (const m of event.data.messages ?? []) liveMessages.add(m.messageId);
      if (event.type === 'history.compacted@1') for (const s of event.data.summaries) liveSummaries.add(s.summaryId);
    }
    return out;
  }

  private counts(event: StoredEvent, liveMessages: ReadonlySet<string>, liveSummaries: ReadonlySet<string>): boolean {
    switch (event.type) {
      case 'turn.superseded@1':
      case 'turn.reverted@1':
        return false;
      case 'history.compacted@1': {
        // made by a turn's barrier: it goes with that turn (reverted, cancelled, an unselected isolated regeneration)
        const by = this.compactedIn.get(event.data.compactionId);
        if (by !== undefined && !this.executionCounts(by)) return false;
        return event.data.summaries.every((s) => s.messageIds.every((m) => liveMessages.has(m)) && s.replacesSummaryIds.every((id) => liveSummaries.has(id)));
      }
      case 'message.edited@1':
        return liveMessages.has(event.data.messageId);
      case 'turn.committed@1':
        return this.isSelected(event.data.executionId);
      case 'execution.cancelled@1':
        return this.kept.has(event.data.executionId) && this.isSelected(event.data.executionId);
      default: {
        const executionId = executionOf(event);
        return executionId === undefined || this.executionCounts(executionId);
      }
    }
  }

  /** An execution's own events count: not reverted or cancelled, and the selected one of an isolated group. */
  private executionCounts(executionId: string): boolean {
    if (this.ended.has(executionId)) return false;
    const group = this.groupOf.get(executionId);
    return !group || !group.isolated || group.selected === executionId;
  }

  private isSelected(executionId: string): boolean {
    if (this.ended.has(executionId)) return false;
    const group = this.groupOf.get(executionId);
    return !group || group.selected === executionId;
  }
}

function executionOf(event: StoredEvent): string | undefined {
  const data = event.data as { executionId?: unknown };
  return typeof data.executionId === 'string' ? data.executionId : undefined;
}

/**
 * What a branch reads of its parent: the parent's log up to `parentVersion` (`parentLog`, itself
 * with its own parent's read in front when the parent is a branch), and then every turn after
 * `atTurnId` reverted (a revert no one recorded: it exists only in this read). The turn's own
 * alternatives stay, so the branch keeps the one selected in the parent at the branch.
 */
export function branchRead(parentLog: readonly StoredEvent[], branched: { atTurnId: string; at: StoredEvent }): StoredEvent[] {
  const { atTurnId } = branched;
  let groupStart: number | undefined;
  let root: string | undefined;
  for (const e of parentLog) {
    if (e.type === 'session.opened@1' && e.data.turnId === atTurnId) {
      groupStart = e.globalPosition;
      root = atTurnId;
      break;
    }
    if (e.type === 'player-input.submitted@1' && e.data.turnId === atTurnId) {
      root = e.data.alternativeOf ?? e.data.retryFromTurnId ?? e.data.turnId;
      break;
    }
  }
  const after: string[] = [];
  for (const e of parentLog) {
    if (root !== undefined && e.type === 'player-input.submitted@1' && e.data.turnId === root) groupStart ??= e.globalPosition;
    const started = startedExecution(e);
    if (!started || groupStart === undefined || e.globalPosition <= groupStart) continue;
    if (e.type === 'player-input.submitted@1' && root !== undefined && (e.data.alternativeOf ?? e.data.retryFromTurnId) === root) continue;
    after.push(started);
  }
  if (after.length === 0) return [...parentLog];
  const at = branched.at;
  const revert: StoredEvent = {
    ...at,
    type: 'turn.reverted@1',
    data: { turnId: atTurnId, turnIds: [atTurnId], executionIds: after, by: 'branch' },
  };
  return [...parentLog, revert];
}

function startedExecution(e: StoredEvent): string | undefined {
  if (e.type === 'player-input.submitted@1' || e.type === 'runtime.activated@1') return e.data.executionId;
  return undefined;
}
