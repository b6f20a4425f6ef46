// Playing one session in the browser: the story (./story-view.js), what the player types, and the
// controls that steer it — regenerate, the alternatives (./play-alternatives.js), undo, edit, branch
// and stop — each one request of the public API (./play-api.js); the turn being written streams in
// (./live-turn.js). After each change the story is read again from the API: the page keeps no story of its own.
import { h } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import htm from 'htm';
import { playApi } from './play-api.js';
import { PlayAlternatives } from './play-alternatives.js';
import { branchPoint, latestPlayerTurn, storyTurns } from './play-story.js';
import { StoryView } from './story-view.js';
import { useLiveTurn } from './live-turn.js';

const html = htm.bind(h);

/** What an error says to the player: the engine's message (and code), else the error's. */
const said = (error) => (error?.serverMessage ? `${error.serverMessage}${error.code ? ` (${error.code})` : ''}` : (error?.message ?? String(error)));

/** Where a branch comes from, and the branches made from this session (each a link to play it). */
function BranchLine({ session }) {
  if (!session) return null;
  const branches = session.branches ?? [];
  return html`${
    session.branchedFrom
      ? html`<p class="branched-from" data-testid="play-branched-from" data-parent=${session.branchedFrom.sessionId}>
          ${'A branch of '}<a href=${`#/play/${session.branchedFrom.sessionId}`}>${session.branchedFrom.sessionId}</a
          >${' (its story up to the branch is the parent’s).'}
        </p>`
      : null
  }${
    branches.length
      ? html`<p class="branches" data-testid="play-branches">
          ${'Branches: '}${branches.map((b, i) => html`${i ? ' · ' : ''}<a href=${`#/play/${b.sessionId}`} data-branch=${b.sessionId}>${b.sessionId}</a>`)}
        </p>`
      : null
  }`;
}

export function PlaySession({ sessionId, signOut }) {
  const [messages, setMessages] = useState(null);
  const [session, setSession] = useState(null);
  const [alternatives, setAlternatives] = useState(null);
  const [notice, setNotice] = useState(null);
  const [busy, setBusy] = useState(null);
  const [editing, setEditing] = useState(null);
  const [text, setText] = useState('');
  const [keepPartial, setKeepPartial] = useState(false);

  const shown = useRef(sessionId);
  shown.current = sessionId;

  const fail = (error) => {
    if (error?.status === 401) return signOut();
    setNotice({ kind: 'error', text: said(error) });
  };

  /** The story, the session (its branches) and the latest turn's alternatives, read again. */
  const refresh = async () => {
    const [story, about] = await Promise.all([playApi.messages(sessionId), playApi.session(sessionId).catch(() => null)]);
    const latest = latestPlayerTurn(storyTurns(story));
    const list = latest ? await playApi.alternatives(sessionId, latest.turnId).catch(() => null) : null;
    if (shown.current !== sessionId) return; // the page has moved on to another session (a branch)
    setMessages(story);
    setSession(about);
    setAlternatives(list ? { turnId: latest.turnId, list: list.alternatives } : null);
  };

  const turn = useLiveTurn(sessionId, ({ outcome, error }) => {
    if (outcome === 'failed')
      setNotice({ kind: 'error', text: `The turn failed: ${error?.message ?? 'unknown error'}${error?.code ? ` (${error.code})` : ''}.` });
    else if (outcome === 'cancelled')
      setNotice({ kind: 'info', text: keepPartial ? 'Stopped: the text written so far is kept.' : 'Stopped: nothing of that turn was kept.' });
    else if (outcome !== 'committed') setNotice({ kind: 'info', text: `The turn ended: ${outcome}.` });
    refresh().catch(fail);
  });

  useEffect(() => {
    setMessages(null);
    setSession(null);
    setAlternatives(null);
    setNotice(null);
    setEditing(null);
    refresh().catch(fail);
  }, [sessionId]);

  const turns = messages ? storyTurns(messages) : [];
  const latest = latestPlayerTurn(turns);
  const live = turn.live;
  const locked = Boolean(busy || live);

  /** One action at a time; its failure said in words. */
  const act = (name, run) => async (e) => {
    e?.preventDefault?.();
    if (busy) return;
    setBusy(name);
    setNotice(null);
    try {
      await run();
    } catch (error) {
      fail(error);
    } finally {
      setBusy(null);
    }
  };

  const actions = {
    setEditing,
    saveEdit: (message, newText, regenerate) =>
      act('edit', async () => {
        const answer = await playApi.editMessage(sessionId, message.messageId, newText, regenerate);
        setEditing(null);
        if (regenerate && answer?.execution) turn.start(answer.execution, newText);
        else setNotice({ kind: 'info', text: 'Edited. The story after it stays as written.' });
        await refresh();
      })(),
  };

  const send = act('send', async () => {
    const input = text.trim();
    if (!input) return;
    const answer = await playApi.submit(sessionId, input);
    setText('');
    turn.start(answer, input);
  });
  const regenerate = act('regenerate', async () => {
    turn.start(await playApi.regenerate(sessionId, latest.turnId), latest.inputs[0].text);
  });
  const select = (alt, n) =>
    act('select', async () => {
      await playApi.select(sessionId, alternatives.turnId, alt.id);
      await refresh();
      setNotice({ kind: 'info', text: `Alternative ${n} is in the story now.` });
    })();
  const undo = act('undo', async () => {
    const answer = await playApi.revert(sessionId, latest.turnId);
    await refresh();
    const count = answer?.turnIds?.length ?? 1;
    setNotice({ kind: 'info', text: count === 1 ? 'Undone: the last turn left the story.' : `Undone: ${count} turns left the story.` });
  });
  const branch = act('branch', async () => {
    const answer = await playApi.branch(sessionId, branchPoint(turns).turnId);
    location.hash = `#/play/${answer.sessionId}`;
  });
  const stop = act('stop', () => turn.stop(keepPartial));

  if (!messages)
    return notice
      ? html`<p class="error" role="alert" data-testid="play-notice">Could not open the session: ${notice.text}</p>`
      : html`<p class="muted">Loading the session…</p>`;
  return html`<section class="play" data-testid="play-session" data-session=${sessionId}>
    <h2>Play <span class="muted turn-id" data-testid="play-session-id">${sessionId}</span></h2>
    <p class="play-links"><a href="#/play">← your sessions</a> · <a href=${`#/sessions/${sessionId}`}>Inspect this session</a></p>
    <${BranchLine} session=${session} />
    ${turn.stream.fatal ? html`<p class="error" role="alert">Live updates unavailable: ${turn.stream.reason}</p>` : null}
    <${StoryView} turns=${turns} live=${live} editing=${editing} actions=${actions} locked=${locked} />
    <${PlayAlternatives} alternatives=${alternatives} onSelect=${select} locked=${locked} />
    <form class="play-input" id="play-form" onSubmit=${send}>
      <textarea
        id="play-text"
        rows="2"
        aria-label="What you do"
        placeholder="What do you do? (Enter sends, Shift+Enter a new line)"
        value=${text}
        onInput=${(e) => setText(e.currentTarget.value)}
        onKeyDown=${(e) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) send(e);
        }}
      ></textarea>
      <button type="submit" id="send" disabled=${locked || !text.trim()}>Send</button>
    </form>
    <div class="play-controls" role="toolbar" aria-label="Steer the story">
      <button type="button" id="regenerate" onClick=${regenerate} disabled=${locked || !latest} title="Write the last turn again: a new alternative">
        Regenerate
      </button>
      <button type="button" id="undo" onClick=${undo} disabled=${locked || !latest} title="Take the last turn out of the story (the log keeps it)">
        Undo last turn
      </button>
      <button type="button" id="branch" onClick=${branch} disabled=${locked || turns.length === 0} title="A new session with the story so far; play on there">
        Branch here
      </button>
      <button type="button" id="stop" onClick=${stop} disabled=${!live || live.stopping || busy === 'stop'} title="Stop the turn being written">Stop</button>
      <label class="keep-partial"
        ><input type="checkbox" id="keep-partial" checked=${keepPartial} onChange=${(e) => setKeepPartial(e.currentTarget.checked)} /> keep the text written so
        far when stopping</label
      >
    </div>
    ${
      notice
        ? html`<p class=${`play-notice ${notice.kind}`} role=${notice.kind === 'error' ? 'alert' : 'status'} data-testid="play-notice" data-kind=${notice.kind}>
            ${notice.text}
          </p>`
        : null
    }
  </section>`;
}
