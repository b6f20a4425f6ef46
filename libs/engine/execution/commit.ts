import type { CommittedMessage, NewEvent } from '../../events';
import { type ExecutionActivation, type ExecutionJournal, type GeneratedAssetRecord, type RuntimeOutput, runtimeKey } from '../journal/journal';
import type { RuntimeCatalog } from '../catalog/runtime-catalog';
import type { ExecutionRun } from './fenced-append';

/**
 * Commits the turn: `turn.committed` with the player's input and the story outputs, through the
 * fenced append, so it is written once: an attempt that is no longer current, or an execution that
 * has already committed or failed, cannot write (`FencedOutError`).
 */
export async function commitTurn(catalog: RuntimeCatalog, run: ExecutionRun): Promise<void> {
  await run.append((execution) => commitEvents(catalog, execution, run.attempt));
}

/**
 * The `turn.committed` event of `execution` as it stands (every output in it); a regenerated turn's
 * `turn.superseded@1` (cause `retry`) before it: the turn it re-ran leaves the history, its own
 * messages take that place.
 */
export function commitEvents(catalog: RuntimeCatalog, execution: ExecutionJournal, attempt: number): NewEvent[] {
  const committed: NewEvent = {
    type: 'turn.committed@1',
    data: { executionId: execution.executionId, turnId: execution.turnId, attempt, messages: committedMessages(catalog, execution) },
  };
  if (execution.retryFromTurnId === undefined) return [committed];
  const superseded: NewEvent = {
    type: 'turn.superseded@1',
    data: {
      alternativeOf: execution.alternativeOf ?? execution.retryFromTurnId,
      turnId: execution.retryFromTurnId,
      byTurnId: execution.turnId,
      byExecutionId: execution.executionId,
      cause: 'retry',
    },
  };
  return [superseded, committed];
}

/**
 * The runtimes of the first stage (catalog order) that still lacks an output; none: the turn can
 * commit. An activation's execution runs its one runtime only.
 */
export function missingRuntimes(
  catalog: RuntimeCatalog,
  outputs: ReadonlyMap<string, RuntimeOutput>,
  activation?: ExecutionActivation,
): { pluginId: string; runtimeId: string }[] {
  if (activation)
    return outputs.has(runtimeKey(activation.pluginId, activation.runtimeId)) ? [] : [{ pluginId: activation.pluginId, runtimeId: activation.runtimeId }];
  for (const group of catalog.groups()) {
    const missing = group.runtimes.filter((r) => !outputs.has(runtimeKey(r.pluginId, r.runtimeId)));
    if (missing.length > 0) return missing.map((r) => ({ pluginId: r.pluginId, runtimeId: r.runtimeId }));
  }
  return [];
}

/**
 * The input as the user row, then, runtime by runtime in catalog order, the mid-turn messages that
 * arrived before its output was recorded (not placed yet: in arrival order, each once; those after
 * every output come last), the assets it generated (in submission order) and its output with text
 * for the history. An asset is the message the player
 * sees (no text: no model's history shows it) and, for an image, its description row (spec §1
 * "Images that have been shown": sourceType `system`, role `user`; not a turn for `maxTurns`).
 */
export function committedMessages(catalog: RuntimeCatalog, execution: ExecutionJournal): CommittedMessage[] {
  const rows = (o: RuntimeOutput): CommittedMessage[] => [
    ...execution.assets.filter((a) => a.pluginId === o.pluginId && a.runtimeId === o.runtimeId).flatMap(assetRows),
    ...(o.outputKind !== 'none' ? [historyRow(o)] : []),
  ];
  if (execution.activation) return [...execution.outputs.values()].flatMap(rows);
  const midTurn = execution.midTurnMessages;
  let placed = 0;
  // a mid-turn message goes right before the first output (in commit order) recorded after it arrived
  const before = (o: RuntimeOutput): CommittedMessage[] => {
    const due = midTurn.slice(placed, Math.max(placed, o.midTurnBefore)).map((m) => playerRow(m));
    placed += due.length;
    return due;
  };
  const outputRows = orderedOutputs(catalog, execution).flatMap((o) => [...before(o), ...rows(o)]);
  return [playerRow(execution.input), ...outputRows, ...midTurn.slice(placed).map((m) => playerRow(m))];
}

/** A row of the player's text: the turn's input, or a message added in the middle of it. */
const playerRow = (m: { messageId: string; text: string }): CommittedMessage => ({
  messageId: m.messageId,
  role: 'user',
  sourceType: 'player',
  pluginId: null,
  runtimeId: null,
  outputKind: null,
  text: m.text,
});

const historyRow = (o: RuntimeOutput): CommittedMessage => ({
  messageId: o.messageId,
  role: 'assistant',
  sourceType: 'runtime',
  pluginId: o.pluginId,
  runtimeId: o.runtimeId,
  outputKind: o.outputKind,
  text: o.text,
});

const assetRows = (a: GeneratedAssetRecord): CommittedMessage[] => [
  {
    messageId: a.messageId,
    role: 'assistant',
    sourceType: 'runtime',
    pluginId: a.pluginId,
    runtimeId: a.runtimeId,
    outputKind: null,
    text: '',
    media: a.media,
  },
  ...(a.descriptionMessageId !== undefined && a.description !== undefined
    ? [
        {
          messageId: a.descriptionMessageId,
          role: 'user' as const,
          sourceType: 'system' as const,
          pluginId: null,
          runtimeId: null,
          outputKind: null,
          text: a.description,
        },
      ]
    : []),
];

/** Outputs in catalog order (stage order, then plugin and runtime order), `none` outputs too (their assets). */
function orderedOutputs(catalog: RuntimeCatalog, execution: ExecutionJournal): RuntimeOutput[] {
  return catalog
    .groups()
    .flatMap((g) => g.runtimes)
    .map((r) => execution.outputs.get(runtimeKey(r.pluginId, r.runtimeId)))
    .filter((o): o is RuntimeOutput => o !== undefined);
}
