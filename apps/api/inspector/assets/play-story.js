// The story as the Play page shows it, shaped from GET /v1/sessions/:id/messages (pure).

/**
 * The story's turns in order: the opening (turn 0: story text, no input), then each turn with its
 * player inputs (the input, and any message sent while it ran) and its story texts. Messages of
 * other kinds (bookkeeping outputs, media) are not part of what the page reads.
 */
export function storyTurns(messages) {
  const turns = [];
  for (const m of messages) {
    let turn = turns[turns.length - 1];
    if (!turn || turn.turnId !== m.turnId) {
      turn = { turnId: m.turnId, number: 0, inputs: [], story: [] };
      turns.push(turn);
    }
    if (m.sourceType === 'player') turn.inputs.push(m);
    else if (m.role === 'assistant' && m.outputKind === 'story' && m.text) turn.story.push(m);
  }
  let number = 0;
  for (const turn of turns) turn.number = turn.inputs.length > 0 ? ++number : 0;
  return turns;
}

/** The latest turn the player played (what regenerate, undo and edit name), or null. */
export const latestPlayerTurn = (turns) => [...turns].reverse().find((t) => t.inputs.length > 0) ?? null;

/** Where a branch made now goes on from: the latest turn, or the opening before any. */
export const branchPoint = (turns) => latestPlayerTurn(turns) ?? turns[0] ?? null;
