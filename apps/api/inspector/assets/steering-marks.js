// What a player's steering left on a session, as the inspector marks it: turns an undo took out of
// the story (greyed, with who reverted them and when: `reverted` of GET /v1/sessions/:id/turns), and
// branches, linked both ways (`branchedFrom` and `branches` of GET /v1/sessions/:id).
import { h } from 'preact';
import htm from 'htm';
import { useApi } from './http.js';

const html = htm.bind(h);

/** "2026-12-05 14:03 UTC" from an ISO time. */
const minute = (iso) => `${iso.slice(0, 16).replace('T', ' ')} UTC`;

/** The turn of a list that a turn id names (any of its alternatives), or null. */
export const turnNamed = (turns, turnId) => turns?.find((t) => t.turnId === turnId || (t.alternatives ?? []).some((a) => a.turnId === turnId)) ?? null;

/** In a turn's row: reverted, by whom and when (the full time in the title). */
export function RevertedMark({ reverted }) {
  if (!reverted) return null;
  return html`<span class="reverted-mark" data-testid="reverted" data-by=${reverted.by} title=${`reverted at ${reverted.at} by ${reverted.by}`}
    >${`reverted by ${reverted.by} · ${minute(reverted.at)}`}</span
  >`;
}

/** On a turn's page: it is out of the story, and which undo took it out. */
export function RevertedBanner({ turn, turns, sessionId }) {
  const reverted = turn?.reverted;
  if (!reverted) return null;
  const named =
    reverted.turnId === turn.turnId || (turn.alternatives ?? []).some((a) => a.turnId === reverted.turnId) ? null : turnNamed(turns, reverted.turnId);
  return html`<p class="reverted-banner" role="note" data-testid="reverted-banner">
    <strong>Reverted:</strong>${` out of the story since ${minute(reverted.at)}, by ${reverted.by}`}${
      named ? html`${' (with '}<a href=${`#/sessions/${sessionId}/turns/${named.turnId}`}>turn ${named.number}</a>${', the turn the undo named)'}` : ''
    }${'. The log keeps it: its requests are shown as they were sent.'}
  </p>`;
}

/** "turn 3" of a list (a link to it), or "its opening" for the turn before any (turn 0). */
function TurnAt({ sessionId, turns, turnId }) {
  const turn = turnNamed(turns, turnId);
  if (!turn) return turns ? 'its opening' : html`<code>${turnId}</code>`;
  return html`<a class="branch-point" href=${`#/sessions/${sessionId}/turns/${turn.turnId}`}>turn ${turn.number}</a>`;
}

/** Where a branch comes from: its parent session and the parent's turn it goes on from. */
function BranchedFrom({ branchedFrom, signOut }) {
  const parentTurns = useApi(`/v1/sessions/${branchedFrom.sessionId}/turns`, signOut);
  return html`<p class="branched-from" data-testid="branched-from" data-parent=${branchedFrom.sessionId}>
    ${'Branch of session '}<a class="parent-session-link" href=${`#/sessions/${branchedFrom.sessionId}`}>${branchedFrom.sessionId}</a>${' at '}<${TurnAt}
      sessionId=${branchedFrom.sessionId}
      turns=${parentTurns.data}
      turnId=${branchedFrom.atTurnId}
    />${': its story up to there is the parent’s.'}
  </p>`;
}

/** The sessions branched from this one, each with the turn it goes on from. */
function Branches({ sessionId, branches, turns }) {
  return html`<div class="branches" data-testid="branches">
    ${`${branches.length} ${branches.length === 1 ? 'branch' : 'branches'}: `}
    ${branches.map(
      (b, i) =>
        html`${i ? ' · ' : ''}<span class="branch" data-branch=${b.sessionId}
            ><a class="branch-link" href=${`#/sessions/${b.sessionId}`}>${b.sessionId}</a>${' at '}<${TurnAt}
              sessionId=${sessionId}
              turns=${turns}
              turnId=${b.atTurnId}
            /><span class="muted">${` (${minute(b.createdAt)})`}</span></span
          >`,
    )}
  </div>`;
}

/** On a session's page: the session it branched from, and the branches made from it. */
export function BranchLinks({ session, turns, signOut }) {
  const s = session.data;
  if (!s) return null;
  const branches = s.branches ?? [];
  return html`${s.branchedFrom ? html`<${BranchedFrom} branchedFrom=${s.branchedFrom} signOut=${signOut} />` : null}
  ${branches.length ? html`<${Branches} sessionId=${s.sessionId} branches=${branches} turns=${turns} />` : null}`;
}
