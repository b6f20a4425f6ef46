// The story on the Play page: each turn's player input and story text, each editable in place, and
// the turn being written below them, its text arriving as the model writes it.
import { h } from 'preact';
import { useState } from 'preact/hooks';
import htm from 'htm';

const html = htm.bind(h);

/** A message's new text: Save; for the latest input also Save and write the turn again; Cancel. */
function EditForm({ message, canRegenerate, onSave, onCancel, disabled }) {
  const [text, setText] = useState(message.text);
  const submit = (regenerate) => (e) => {
    e.preventDefault();
    if (text.trim()) onSave(message, text, regenerate);
  };
  return html`<form class="edit-form" data-testid="edit-form" onSubmit=${submit(false)}>
    <textarea id="edit-text" aria-label="New text" rows="3" value=${text} onInput=${(e) => setText(e.currentTarget.value)}></textarea>
    <div class="edit-buttons">
      <button type="submit" id="edit-save" disabled=${disabled}>Save</button>
      ${
        canRegenerate
          ? html`<button type="button" id="edit-save-regenerate" disabled=${disabled} onClick=${submit(true)}>Save and write the turn again</button>`
          : null
      }
      <button type="button" id="edit-cancel" onClick=${onCancel}>Cancel</button>
    </div>
  </form>`;
}

/** One message: its text and an Edit button, or the edit form while it is edited. */
function MessageView({ message, kind, turn, editing, latestInput, actions, locked }) {
  if (editing === message.messageId)
    return html`<${EditForm}
      message=${message}
      canRegenerate=${latestInput}
      disabled=${locked}
      onSave=${actions.saveEdit}
      onCancel=${() => actions.setEditing(null)}
    />`;
  const what = kind === 'input' ? `your input of turn ${turn.number}` : turn.number ? `the story text of turn ${turn.number}` : 'the opening';
  return html`<div
    class=${kind === 'input' ? 'player-input' : 'story-text'}
    data-testid=${kind === 'input' ? 'player-input' : 'story-text'}
    data-message-id=${message.messageId}
  >
    <p>${message.text}</p>
    <button type="button" class="edit" aria-label=${`Edit ${what}`} disabled=${locked} onClick=${() => actions.setEditing(message.messageId)}>Edit</button>
  </div>`;
}

/** The turn being written: what the player did, the status, and the story text so far. */
function LiveTurn({ live }) {
  const status = live.stopping
    ? 'stopping…'
    : live.status === 'queued'
      ? 'waiting for a worker…'
      : live.text
        ? 'the story is being written…'
        : 'the model is thinking…';
  return html`<li class="story-turn live" data-testid="live-turn" data-execution=${live.executionId} aria-busy="true">
    <div class="player-input"><p>${live.input}</p></div>
    <p class="live-status muted" role="status" data-testid="live-status">${status}</p>
    <div class="story-text live-text" data-testid="live-text">${live.text}</div>
  </li>`;
}

/** The story so far, then the turn being written. */
export function StoryView({ turns, live, editing, actions, locked }) {
  const latest = [...turns].reverse().find((t) => t.inputs.length > 0);
  return html`<ol class="story" data-testid="story" aria-label="The story">
    ${turns.map(
      (turn) =>
        html`<li class="story-turn" data-testid="story-turn" data-turn-id=${turn.turnId} data-number=${turn.number}>
          ${turn.inputs.map(
            (m, i) =>
              html`<${MessageView}
                message=${m}
                kind="input"
                turn=${turn}
                editing=${editing}
                latestInput=${turn === latest && i === 0}
                actions=${actions}
                locked=${locked}
              />`,
          )}
          ${turn.story.map(
            (m) => html`<${MessageView} message=${m} kind="story" turn=${turn} editing=${editing} latestInput=${false} actions=${actions} locked=${locked} />`,
          )}
        </li>`,
    )}
    ${live ? html`<${LiveTurn} live=${live} />` : null}
  </ol>`;
}
