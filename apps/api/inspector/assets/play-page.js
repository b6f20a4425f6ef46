// The Play page (#/play): start a session in a world, or go on with one of the tenant's; then
// #/play/<session id> plays it (./play-session.js).
import { h } from 'preact';
import { useState } from 'preact/hooks';
import htm from 'htm';
import { useLoad } from './http.js';
import { playApi } from './play-api.js';
import { PlaySession } from './play-session.js';

const html = htm.bind(h);

/** The world a new session starts in when the tenant has it (the sample world). */
const DEFAULT_WORLD = 'emberback';

function NewSession({ signOut }) {
  const worlds = useLoad('play-worlds', playApi.worlds, signOut);
  const [chosen, setChosen] = useState(null);
  const [state, setState] = useState({ busy: false, error: null });
  const items = worlds.data?.items ?? [];
  const worldId = chosen ?? (items.some((w) => w.id === DEFAULT_WORLD) ? DEFAULT_WORLD : (items[0]?.id ?? ''));
  const start = async (e) => {
    e.preventDefault();
    setState({ busy: true, error: null });
    try {
      const { id } = await playApi.createSession(worldId || null);
      location.hash = `#/play/${id}`;
    } catch (error) {
      if (error.status === 401) return signOut();
      setState({ busy: false, error });
    }
  };
  return html`<form class="new-session" id="new-session-form" onSubmit=${start}>
    <label for="play-world">World</label>
    <select id="play-world" value=${worldId} onChange=${(e) => setChosen(e.currentTarget.value)} disabled=${worlds.loading}>
      ${items.map((w) => html`<option value=${w.id}>${w.name}${w.builtIn ? ' (built-in)' : ` · rev ${w.revision}`}</option>`)}
      <option value="">no world</option>
    </select>
    <button type="submit" id="new-session" disabled=${state.busy || worlds.loading}>Start a new session</button>
    ${state.error ? html`<p class="error" role="alert">Could not start a session: ${state.error.message}</p>` : null}
  </form>`;
}

function PlayHome({ signOut }) {
  const sessions = useLoad('play-sessions', playApi.sessions, signOut);
  return html`<section class="play-home" data-testid="play-home">
    <h2>Play</h2>
    <p class="muted">Play a session here as a player would, on the public API (the story streams in as it is written).</p>
    <${NewSession} signOut=${signOut} />
    <h3>Or go on with one of your sessions</h3>
    ${
      sessions.data
        ? sessions.data.length
          ? html`<ul class="play-sessions">
              ${sessions.data.map(
                (s) =>
                  html`<li data-session=${s.sessionId}>
                    <a class="play-session-link" href=${`#/play/${s.sessionId}`}>${s.sessionId}</a>
                    <span class="muted"
                      >${` · ${s.worldId ?? 'no world'} · ${s.turns} ${s.turns === 1 ? 'turn' : 'turns'} · ${s.createdAt.slice(0, 16).replace('T', ' ')} UTC`}</span
                    >
                    ${s.branchedFrom ? html`<span class="muted"> · a branch</span>` : null}
                  </li>`,
              )}
            </ul>`
          : html`<p class="muted">No session yet.</p>`
        : sessions.error
          ? html`<p class="error" role="alert">Could not load your sessions: ${sessions.error.message}</p>`
          : html`<p class="muted">Loading your sessions…</p>`
    }
  </section>`;
}

export function PlayPage({ sessionId, signOut }) {
  return sessionId ? html`<${PlaySession} sessionId=${sessionId} signOut=${signOut} />` : html`<${PlayHome} signOut=${signOut} />`;
}
