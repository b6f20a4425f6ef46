import type { StoredEvent } from '../events';
import type { SessionTurnView } from './turn-inspection';

/** Who took a turn out of the story, and when (`turn.reverted@1`, as the log recorded it). */
export interface TurnRevertView {
  /** The caller the API authenticated (`tenant:<id>`). */
  by: string;
  /** When the revert was recorded (ISO 8601). */
  at: string;
  /** The turn the player named: this one, or an earlier one whose revert took every later turn with it. */
  turnId: string;
}

/** A turn of the list, marked when a revert took it out of the story (null: it is in the story). */
export type RevertMarked<T extends SessionTurnView> = T & { reverted: TurnRevertView | null };

/**
 * Marks the turns an undo (`turn.reverted@1`) took out of the story: the log keeps them, so the list
 * still shows them, each with who reverted it and when. A turn is matched by any of its
 * alternatives (the event names every execution of the turns it reverts); one mark per turn, the
 * first revert that named it (a turn out of the story cannot be reverted again), so the view grows
 * with the turns, never with the reverts.
 */
export function withTurnReverts<T extends SessionTurnView>(turns: readonly T[], events: readonly StoredEvent[]): RevertMarked<T>[] {
  const byExecution = new Map<string, TurnRevertView>();
  const byTurn = new Map<string, TurnRevertView>();
  for (const e of events) {
    if (e.type !== 'turn.reverted@1') continue;
    const mark: TurnRevertView = { by: e.data.by, at: e.recordedAt, turnId: e.data.turnId };
    for (const id of e.data.executionIds) if (!byExecution.has(id)) byExecution.set(id, mark);
    for (const id of e.data.turnIds) if (!byTurn.has(id)) byTurn.set(id, mark);
  }
  return turns.map((turn) => {
    const found = turn.alternatives.map((a) => byExecution.get(a.executionId) ?? byTurn.get(a.turnId)).find((m) => m !== undefined);
    return { ...turn, reverted: found ?? null };
  });
}
