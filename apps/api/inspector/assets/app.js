// The web prompt inspector: sessions → turns → every model call of a turn, as the model saw it;
// the tenant's worlds, and the revision of its world each session runs; and a page to play a
// session in the browser (./play-page.js).
// Plain ES modules (no build step): Preact + htm for the views, uPlot for the chart. Every number
// and offset drawn here comes from the API (GET /v1/sessions/:id/turns/:turnId/calls and .../audit):
// the page computes no diff of its own.
import { h, render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import htm from 'htm';
import uPlot from 'uplot';
import { api, KEY, useApi, useLoad } from './http.js';
import { PlayPage } from './play-page.js';
import { BranchLinks, RevertedMark, RevertedBanner } from './steering-marks.js';

const html = htm.bind(h);

/** Worlds per page of GET /v1/worlds, and the most pages read (the list says when there are more). */
const WORLD_PAGE = 100;
const WORLD_PAGES = 20;

/** The tenant's worlds, archived ones included: the deployment's built-in worlds first, then its own, page after page by the cursor. */
async function loadWorlds() {
  const items = [];
  let cursor = null;
  for (let pages = 0; pages < WORLD_PAGES; pages++) {
    const page = await api(`/v1/worlds?archived=true&limit=${WORLD_PAGE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    items.push(...page.items);
    cursor = page.nextCursor;
    if (!cursor) break;
  }
  return { items, more: cursor !== null };
}
const useWorlds = (onUnauthorized) => useLoad('worlds', loadWorlds, onUnauthorized);
/** A world of the list by its id (a tenant's world id in any letter case), or null. */
const findWorld = (worlds, id) => (id ? (worlds.data?.items.find((w) => w.id === id || w.id === id.toLowerCase()) ?? null) : null);

function useRoute() {
  const parse = () => location.hash.replace(/^#\/?/, '').split('/').filter(Boolean);
  const [parts, setParts] = useState(parse());
  useEffect(() => {
    const on = () => setParts(parse());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  // #/sessions/<id>/turns/<turnId>, #/worlds, #/play, #/play/<id>
  if (parts[0] === 'worlds') return { view: 'worlds', sessionId: null, turnId: null };
  if (parts[0] === 'play') return { view: 'play', sessionId: parts[1] ?? null, turnId: null };
  return { view: 'sessions', sessionId: parts[1] ?? null, turnId: parts[3] ?? null };
}

function KeyForm({ onKey }) {
  const [value, setValue] = useState('');
  const submit = (e) => {
    e.preventDefault();
    if (!value.trim()) return;
    sessionStorage.setItem(KEY, value.trim());
    onKey();
  };
  return html`<form class="key-form" onSubmit=${submit}>
    <h1>Covel prompt inspector</h1>
    <p>The tenant's API key (kept in this browser tab's session storage only).</p>
    <input id="api-key" type="password" autocomplete="off" placeholder="API key" value=${value} onInput=${(e) => setValue(e.currentTarget.value)} />
    <button id="api-key-submit" type="submit">Open</button>
  </form>`;
}

const Status = ({ state, what }) =>
  state.loading
    ? html`<p class="muted">Loading ${what}…</p>`
    : state.error
      ? html`<p class="error" role="alert">Could not load ${what}: ${state.error.message}</p>`
      : null;

/** "est. $0.0123" for a number; null where the view has no cost (null, or a view without the field). */
function formatCost(usd) {
  if (typeof usd !== 'number' || !Number.isFinite(usd) || usd < 0) return null;
  if (usd === 0) return 'est. $0';
  if (usd >= 1) return `est. $${usd.toFixed(2)}`;
  if (usd < 0.000001) return 'est. < $0.000001';
  return `est. $${new Intl.NumberFormat('en-US', { maximumSignificantDigits: 3, maximumFractionDigits: 6 }).format(usd)}`;
}
const Cost = ({ usd, empty = null }) => {
  const text = formatCost(usd);
  return text ? html`<span class="cost" data-testid="cost">${text}</span>` : empty;
};

/**
 * A part that folds: a `<details>` that keeps what the reader chose. `force` (true/false) overrides
 * it while a search runs; `lazy`: the body is built only while open (a long turn opens fast).
 */
function Fold({ initial = true, force, lazy = false, summary, children, class: className, ...attrs }) {
  const [open, setOpen] = useState(initial);
  const shown = force ?? open;
  const onToggle = (e) => {
    if (force === undefined && e.currentTarget.open !== open) setOpen(e.currentTarget.open);
  };
  return html`<details class=${className} open=${shown} onToggle=${onToggle} ...${attrs}>
    <summary>${summary}</summary>
    ${lazy && !shown ? null : children}
  </details>`;
}

/** A session's use of the history limit (`history` of GET /v1/sessions and /v1/sessions/:id): "120 / 150", marked from `warning` on. */
function HistoryUse({ history }) {
  if (!history) return html`<span class="muted">—</span>`;
  const percent = Math.floor((100 * history.messages) / history.limit);
  const title =
    history.state === 'ok'
      ? `${history.messages} uncompacted messages of the limit of ${history.limit}${history.compaction ? ' (compacted as it grows)' : ''}`
      : `${history.state === 'full' ? `over the limit: every turn fails with ${history.code}` : `${percent} % of the limit`}: ${history.fix}`;
  // the spaces are in the values: htm drops whitespace that holds a line break
  const text = `${history.messages} / ${history.limit}${history.state === 'ok' ? '' : ' '}`;
  return html`<span class=${`history history-${history.state}`} data-testid="session-history" data-state=${history.state} title=${title}
    >${text}${history.state === 'ok' ? null : html`<strong>${history.state}</strong>`}</span
  >`;
}

/** On a session's page from `warning` on: where its history stands, the code its turns fail with past the limit, and the fix. */
function HistoryBanner({ session }) {
  const history = session.data?.history;
  if (!history || history.state === 'ok') return null;
  const percent = Math.floor((100 * history.messages) / history.limit);
  const headline = history.state === 'full' ? 'History full:' : `History at ${percent} %:`;
  const said =
    history.state === 'full'
      ? ` ${history.messages} uncompacted messages, over the limit of ${history.limit}: every turn fails with ${history.code}. Fix: ${history.fix}`
      : ` ${history.messages} of ${history.limit} uncompacted messages; past the limit every turn fails with ${history.code}. Fix: ${history.fix}`;
  return html`<p class=${`history-banner history-${history.state}`} role="alert" data-testid="history-banner" data-state=${history.state}>
    <strong>${headline}</strong>${said}
  </p>`;
}

/**
 * The world a session runs: its name (the id when the list does not have it), and for a tenant's world
 * the revision the session runs (`worldRevision`: the one it started on, or the last it was moved to).
 */
function SessionWorld({ session, worlds }) {
  if (!session.worldId) return html`<span class="muted">—</span>`;
  const world = findWorld(worlds, session.worldId);
  const name = world ? world.name : session.worldId;
  const revision = session.worldRevision ?? null;
  return html`<span class="session-world" data-testid="session-world" data-world=${session.worldId} data-revision=${revision ?? ''} title=${session.worldId}
    ><bdi>${name}</bdi
    >${revision === null ? html`<span class="muted">${world?.builtIn ? ' · built-in' : ''}</span>` : html`<span class="revision">${` · rev ${revision}`}</span>`}</span
  >`;
}

/** On a session's page: its world, the revision it runs, and whether the world has moved on since. */
function SessionWorldLine({ session, worlds }) {
  const s = session.data;
  if (!s) return null;
  if (!s.worldId) return html`<p class="muted" data-testid="session-world-line">No world.</p>`;
  const world = findWorld(worlds, s.worldId);
  const revision = s.worldRevision ?? null;
  const now =
    revision === null
      ? world?.builtIn
        ? 'a built-in world (one revision)'
        : null
      : world && world.revision !== revision
        ? `revision ${revision}; the world is at revision ${world.revision} now (POST /v1/sessions/${s.sessionId}/world-revision moves the session)`
        : `revision ${revision}${world ? ', its current one' : ''}`;
  return html`<p class="session-world-line" data-testid="session-world-line" data-revision=${revision ?? ''}>
    ${'World: '}<a href="#/worlds"
      ><b><bdi>${world ? world.name : s.worldId}</bdi></b></a
    >${' '}<code class="muted">${s.worldId}</code>${now ? ` · ${now}` : ''}${world?.archived ? ' · archived' : ''}
  </p>`;
}

/** Built-in (the deployment's), or the tenant's own and how it came to be when not written by hand. */
const worldKind = (w) =>
  w.builtIn
    ? 'built-in'
    : w.provenance?.kind === 'imported'
      ? `own · imported ${w.provenance.format}`
      : w.provenance?.kind === 'generated'
        ? 'own · generated'
        : 'own';

/** The tenant's worlds: built-in and its own, archived ones too, with the revision each is at. */
function Worlds({ signOut }) {
  const worlds = useWorlds(signOut);
  if (!worlds.data) return html`<${Status} state=${worlds} what="worlds" />`;
  const { items, more } = worlds.data;
  return html`<section>
    <h2>Worlds</h2>
    <p class="muted">
      ${`${items.length} ${items.length === 1 ? 'world' : 'worlds'}: the deployment’s built-in ones (read-only, one revision), then the tenant’s own in creation order.`}${more ? ` Only the first ${items.length} are shown.` : ''}
    </p>
    <table class="list worlds">
      <thead>
        <tr>
          <th>world</th>
          <th>id</th>
          <th>kind</th>
          <th>revision</th>
          <th>state</th>
          <th>characters</th>
          <th>lorebook</th>
          <th>openings</th>
          <th>updated</th>
        </tr>
      </thead>
      <tbody>
        ${items.map(
          (w) =>
            html`<tr data-world=${w.id} data-built-in=${String(w.builtIn)} data-archived=${String(w.archived)}>
              <td class="world-name" title=${w.description ?? ''}><bdi>${w.name}</bdi></td>
              <td><code>${w.id}</code></td>
              <td>${worldKind(w)}</td>
              <td class="num" data-testid="world-revision">${w.revision}</td>
              <td data-testid="world-state">${w.archived ? html`<strong class="archived">archived</strong>` : 'active'}</td>
              <td class="num">${w.characters}</td>
              <td class="num">${w.lorebookEntries}</td>
              <td class="num">${w.openings}</td>
              <td title=${w.updatedAt ?? ''}>${w.updatedAt ? `${w.updatedAt.slice(0, 16).replace('T', ' ')} UTC` : '—'}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </section>`;
}

function Sessions({ signOut }) {
  const state = useApi('/v1/sessions', signOut);
  const worlds = useWorlds(signOut);
  if (!state.data) return html`<${Status} state=${state} what="sessions" />`;
  if (state.data.length === 0) return html`<p class="muted">This tenant has no session yet.</p>`;
  return html`<section>
    <h2>Sessions</h2>
    <table class="list">
      <thead>
        <tr>
          <th>session</th>
          <th title="the world, and the revision of it the session runs">world</th>
          <th>locale</th>
          <th>turns</th>
          <th title="uncompacted messages / the limit">history</th>
          <th>cost</th>
          <th>created</th>
        </tr>
      </thead>
      <tbody>
        ${state.data.map(
          (s) =>
            html`<tr data-session=${s.sessionId}>
              <td>
                <a class="session-link" href=${`#/sessions/${s.sessionId}`}>${s.sessionId}</a>${
                  s.branchedFrom ? html` <span class="muted" data-testid="session-branch" title=${`branch of ${s.branchedFrom.sessionId}`}>branch</span>` : null
                }
              </td>
              <td><${SessionWorld} session=${s} worlds=${worlds} /></td>
              <td>${s.locale}</td>
              <td class="num" data-testid="session-turns">${s.turns}</td>
              <td class="num"><${HistoryUse} history=${s.history} /></td>
              <td class="num"><${Cost} usd=${s.estCostUsd} empty="—" /></td>
              <td>${s.createdAt}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </section>`;
}

/** Width of a y axis: its widest tick label, so the axis title beside it never overlaps it. */
const axisSize = (self, values, axisIdx, cycleNum) => {
  const axis = self.axes[axisIdx];
  if (cycleNum > 1) return axis._size; // uPlot's own guard against resize loops
  const widest = Math.max(0, ...(values ?? []).map((v) => String(v).length));
  return Math.ceil(widest * 7.5) + (axis.ticks?.size ?? 10) + (axis.gap ?? 5) + 6;
};

/** Request size and cache-read share per turn (uPlot). */
function TurnChart({ turns }) {
  const ref = useRef(null);
  useEffect(() => {
    if (!ref.current || turns.length === 0) return;
    const x = turns.map((t) => t.number);
    const share = turns.map((t) => (t.providerInputTokens ? Math.round((1000 * (t.providerCachedTokens ?? 0)) / t.providerInputTokens) / 10 : null));
    const chart = new uPlot(
      {
        width: Math.min(1100, ref.current.clientWidth || 900),
        height: 260,
        scales: { x: { time: false }, pct: { range: [0, 100] } },
        axes: [
          { label: 'turn', incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000] }, // whole turns
          { label: 'tokens', size: axisSize, labelSize: 20, labelGap: 2 },
          { side: 1, scale: 'pct', label: 'cache read %', grid: { show: false }, size: axisSize, labelSize: 20, labelGap: 2 },
        ],
        series: [
          { label: 'turn' },
          { label: 'request tokens (estimate)', stroke: '#2b6cb0', width: 2 },
          { label: 'input tokens (provider)', stroke: '#718096', dash: [4, 4] },
          { label: 'cache-read share %', stroke: '#2f855a', scale: 'pct', width: 2 },
        ],
      },
      [x, turns.map((t) => t.requestTokensEstimate), turns.map((t) => t.providerInputTokens), share],
      ref.current,
    );
    ref.current.uplot = chart; // the browser test reads its axes
    return () => chart.destroy();
  }, [turns]);
  return html`<div class="chart" id="turn-chart" ref=${ref}></div>`;
}

/** The alternatives of a turn in the list: how many, which one is in the history, and one link each (the one in the history marked). */
function AlternativeLinks({ sessionId, turn, current }) {
  const selected = turn.alternatives.findIndex((a) => a.selected);
  return html`<span class="alternatives" data-testid="alternatives" data-count=${turn.alternatives.length} data-selected=${selected + 1}>
    <span class="alternatives-count" data-testid="alternatives-count"
      >${`${turn.alternatives.length} alternatives${selected >= 0 ? `, no. ${selected + 1} in the story` : ', none in the story'}: `}</span
    >
    ${turn.alternatives.map(
      (a, i) =>
        html`<a
          class=${`alternative${a.selected ? ' selected' : ''}${a.turnId === current ? ' current' : ''}`}
          data-alternative=${i + 1}
          href=${`#/sessions/${sessionId}/turns/${a.turnId}`}
          title=${`${a.status}${a.selected ? ', in the history' : ''}`}
          >${i + 1}${a.selected ? ' ✓' : ''}</a
        >`,
    )}
  </span>`;
}

/** Rows of the turn list drawn at first; the rest when asked (a long session's page opens fast). */
const TURN_PAGE = 500;

function Turns({ sessionId, signOut }) {
  const state = useApi(`/v1/sessions/${sessionId}/turns`, signOut);
  const session = useApi(`/v1/sessions/${sessionId}`, signOut);
  const worlds = useWorlds(signOut);
  const [shown, setShown] = useState(TURN_PAGE);
  if (!state.data) return html`<${Status} state=${state} what="turns" />`;
  const turns = state.data;
  const reverted = turns.filter((t) => t.reverted).length;
  const cost = turns.reduce((sum, t) => (typeof t.estCostUsd === 'number' && typeof sum === 'number' ? sum + t.estCostUsd : null), 0);
  return html`<section>
    <h2>Session ${sessionId}</h2>
    <p><a class="play-link" href=${`#/play/${sessionId}`}>▶ Play this session</a></p>
    <${SessionWorldLine} session=${session} worlds=${worlds} />
    <${BranchLinks} session=${session} turns=${turns} signOut=${signOut} />
    <${HistoryBanner} session=${session} />
    <p class="muted">
      ${`${turns.length} turns${reverted ? ` (${reverted} reverted: greyed, out of the story)` : ''}`}${turns.length && cost !== null ? html` · <${Cost} usd=${cost} /> for the turns listed (the sessions list counts regenerations too)` : null}
    </p>
    <h3>Request size and cache reads per turn</h3>
    <${TurnChart} turns=${turns} />
    <table class="list turns">
      <thead>
        <tr>
          <th>#</th>
          <th>input</th>
          <th>status</th>
          <th>calls</th>
          <th>request tok (est.)</th>
          <th>input tok (provider)</th>
          <th>cached (provider)</th>
          <th>cost</th>
          <th>alternatives</th>
        </tr>
      </thead>
      <tbody>
        ${turns.slice(0, shown).map(
          (t) =>
            html`<tr data-turn=${t.number} class=${t.reverted ? 'reverted' : ''} data-reverted=${String(Boolean(t.reverted))}>
              <td class="num">${t.number}</td>
              <td class="input"><a class="turn-link" data-turn=${t.number} href=${`#/sessions/${sessionId}/turns/${t.turnId}`}>${t.input || '(empty)'}</a></td>
              <td>${t.status}${t.reverted ? html`<br /><${RevertedMark} reverted=${t.reverted} />` : null}</td>
              <td class="num">${t.calls}</td>
              <td class="num">${t.requestTokensEstimate}</td>
              <td class="num">${t.providerInputTokens ?? '—'}</td>
              <td class="num">${t.providerCachedTokens ?? '—'}</td>
              <td class="num"><${Cost} usd=${t.estCostUsd} empty="—" /></td>
              <td>${(t.alternatives?.length ?? 0) > 1 ? html`<${AlternativeLinks} sessionId=${sessionId} turn=${t} />` : null}</td>
            </tr>`,
        )}
      </tbody>
    </table>
    ${turns.length > shown ? html`<button onClick=${() => setShown(shown + TURN_PAGE)}>Show ${Math.min(TURN_PAGE, turns.length - shown)} more turns</button>` : null}
  </section>`;
}

/** The ranges of `text` matching the search (exact UTF-16 offsets of the text itself, case-insensitive). */
function matchesIn(text, search) {
  if (!search) return [];
  const out = [];
  search.lastIndex = 0;
  for (let m = search.exec(text); m; m = search.exec(text)) {
    if (m[0].length === 0) break;
    out.push([m.index, m.index + m[0].length]);
  }
  return out;
}
const countMatches = (text, search) => (text ? matchesIn(text, search).length : 0);

/** Plain text with the search's matches marked. */
function Highlighted({ text, search }) {
  const ranges = matchesIn(text, search);
  if (!ranges.length) return text;
  const out = [];
  let at = 0;
  for (const [start, end] of ranges) {
    if (start > at) out.push(text.slice(at, start));
    out.push(html`<mark class="hit">${text.slice(start, end)}</mark>`);
    at = end;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}

/**
 * One unit's text cut at the offsets it is given: section starts (each section folds), cache
 * boundaries, the end of the shared prefix, the first difference, and the search's matches.
 */
function UnitText({ unit, sharedUpTo, firstDifferenceAt, sourceOf, search }) {
  const hits = matchesIn(unit.text, search);
  const cuts = new Set([0, unit.text.length]);
  for (const s of unit.spans) cuts.add(s.start).add(s.end);
  for (const b of unit.cacheBoundaries) cuts.add(b.offset);
  for (const [start, end] of hits) cuts.add(start).add(end);
  if (sharedUpTo > 0 && sharedUpTo < unit.text.length) cuts.add(sharedUpTo);
  if (firstDifferenceAt !== null) cuts.add(firstDifferenceAt);
  const offsets = [...cuts].filter((o) => o >= 0 && o <= unit.text.length).sort((a, b) => a - b);
  // pieces before the first section, then one group per section
  const groups = [{ span: null, pieces: [], hits: 0 }];
  for (let i = 0; i < offsets.length; i++) {
    const at = offsets[i];
    const span = unit.spans.find((s) => s.start === at);
    if (span) groups.push({ span, pieces: [], hits: 0 });
    const group = groups[groups.length - 1];
    if (firstDifferenceAt === at)
      group.pieces.push(
        html`<mark class="first-difference" data-testid="first-difference" title="first difference from the previous request">▶ first difference</mark>`,
      );
    for (const b of unit.cacheBoundaries.filter((c) => c.offset === at)) {
      group.pieces.push(
        html`<span class=${`cache-boundary ${b.kind}`} data-testid="cache-boundary" data-kind=${b.kind}
          >✂ cache boundary${b.after ? ` after ${b.after}` : ''}
          (${b.kind === 'cache_control' ? 'cache_control on the wire' : 'internal sentinel, stripped on the wire'})</span
        >`,
      );
    }
    const next = offsets[i + 1];
    if (next === undefined) break;
    const text = unit.text.slice(at, next);
    if (!text) continue;
    const hit = hits.some(([start, end]) => at >= start && next <= end);
    if (hit) group.hits += 1;
    const piece = html`<span class=${next <= sharedUpTo ? 'shared' : 'fresh'}>${text}</span>`;
    group.pieces.push(hit ? html`<mark class="hit">${piece}</mark>` : piece);
  }
  return groups.map((g) => {
    if (!g.span) return g.pieces.length ? html`<pre class="unit-text">${g.pieces}</pre>` : null;
    const source = sourceOf(g.span.name);
    return html`<${Fold}
      class="section"
      data-testid="section"
      data-section=${g.span.name}
      force=${search ? g.hits > 0 : undefined}
      summary=${html`<span class="section-label"><b>${g.span.name}</b> <span class="source">${source ? source.source : 'source not recorded'}</span></span>`}
    >
      ${
        source?.items?.length
          ? html`<ul class="items">
              ${source.items.map((it) => html`<li>${it}</li>`)}
            </ul>`
          : null
      }
      <pre class="unit-text">${g.pieces}</pre>
    </${Fold}>`;
  });
}

const ROLE_NAMES = { user: 'player input', assistant: 'model reply', tool: 'tool result', system: 'system prompt', developer: 'system prompt' };
const humanize = (name) => name.replace(/[-_]/g, ' ');

/** Characters as a reader counts them (grapheme clusters) in the first `offset` UTF-16 units of `text`. */
function charactersBefore(text, offset) {
  const head = text.slice(0, offset);
  if (typeof Intl.Segmenter === 'function') {
    let n = 0;
    for (const _ of new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(head)) n++;
    return n;
  }
  return [...head].length;
}

/** "message 3 (history · player input), character 0": where the request first differs, as a person says it. */
function describeDifference(diff, unit) {
  const kind = ROLE_NAMES[diff.role] ?? diff.role;
  const where =
    diff.messageIndex === null
      ? `the ${diff.role === 'tools' ? 'tool definitions' : 'system prompt'}${diff.section && diff.section !== 'system' ? ` (section ${humanize(diff.section)})` : ''}`
      : `message ${diff.messageIndex} (${[diff.section && humanize(diff.section) !== kind ? humanize(diff.section) : null, kind].filter(Boolean).join(' · ')})`;
  return `${where}, character ${unit ? charactersBefore(unit.text, diff.offset) : diff.offset}`;
}

/** Where the compared request was: a turn of the session or the previous step of this one. */
function previousRequestName(cmp, call, turns) {
  if (cmp.previousTurnId === call.turnId) return 'the previous step of this turn';
  const turn = turns?.find((t) => (t.alternatives ?? [t]).some((a) => a.turnId === cmp.previousTurnId));
  return turn ? `turn ${turn.number}’s request` : 'the previous request';
}

function callMatches(call, search) {
  if (!search) return 0;
  let n = 0;
  for (const u of call.units) n += countMatches(u.text, search);
  n += countMatches(call.reply?.text, search);
  for (const t of call.tools) n += countMatches(t.arguments, search) + countMatches(t.content, search);
  return n;
}

function CallSummary({ call, index, auditCall }) {
  const usage = call.usage;
  const what = [`${call.pluginId}/${call.runtimeId}`, `step ${call.step}`, call.attempt > 1 ? `attempt ${call.attempt}` : null, call.fallback].filter(Boolean);
  const numbers = [
    call.model,
    `${call.requestTokensEstimate} tok est.`,
    usage ? `${usage.inputTokens} in / ${usage.cachedInputTokens} cached / ${usage.outputTokens} out` : 'no answer recorded',
  ];
  const cost = formatCost(call.estCostUsd);
  return html`<span class="call-line">
    <b>${`Call ${index + 1} `}</b>${what.join(' · ')}<span class="muted">${` · ${numbers.join(' · ')}`}</span
    >${cost ? html`${' · '}<${Cost} usd=${call.estCostUsd} />` : null}${
      auditCall
        ? auditCall.identical
          ? html`${' '}<span class="ok" title="audit: byte-identical">✓</span>`
          : html`${' '}<span class="bad" title="audit">✗ differs</span>`
        : null
    }
  </span>`;
}

function CallBody({ call, audit, search, turns }) {
  const auditCall = audit?.calls.find((c) => c.callId === call.callId) ?? null;
  const sources = auditCall?.sources ?? [];
  const sourceOf = (name) => sources.find((s) => s.section === name) ?? null;
  const cmp = call.comparison;
  const shared = (i, unit) => {
    if (!cmp) return { upTo: 0, diffAt: null };
    if (cmp.differsAtUnit === null || i < cmp.differsAtUnit) return { upTo: unit.text.length, diffAt: null };
    if (i === cmp.differsAtUnit) return { upTo: cmp.firstDifference.offset, diffAt: cmp.firstDifference.offset };
    return { upTo: 0, diffAt: null };
  };
  const diffUnit = cmp?.firstDifference && cmp.differsAtUnit !== null ? call.units[cmp.differsAtUnit] : null;
  return html`<p class="meta">${call.protocol} · ${call.model} · ${call.recordedAt} · <code title="call id">${call.callId}</code></p>
    <table class="numbers">
      <tr>
        <th>request tokens (estimate)</th>
        <td>${call.requestTokensEstimate}</td>
      </tr>
      <tr>
        <th>shared with the previous request (estimate, cacheable)</th>
        <td data-testid="shared-estimate">${cmp ? `${cmp.sharedTokensEstimate} tokens (${cmp.sharedPercent}% of it)` : '— (first request of this runtime)'}</td>
      </tr>
      <tr>
        <th>cached tokens (provider)</th>
        <td data-testid="provider-cached">${call.usage ? call.usage.cachedInputTokens : '— (no answer recorded)'}</td>
      </tr>
      <tr>
        <th>input / output tokens (provider)</th>
        <td>${call.usage ? `${call.usage.inputTokens} / ${call.usage.outputTokens}` : '—'}</td>
      </tr>
      <tr>
        <th>cost (estimate)</th>
        <td data-testid="call-cost"><${Cost} usd=${call.estCostUsd} empty="—" /></td>
      </tr>
      <tr>
        <th>audit</th>
        <td>${auditCall ? (auditCall.identical ? 'byte-identical' : `differs at byte ${auditCall.firstMismatchAt}`) : '—'}</td>
      </tr>
    </table>
    ${
      cmp?.firstDifference
        ? html`<p class="diff-summary" title=${`compared with call ${cmp.previousCallId} of turn ${cmp.previousTurnId}`}>
            ${'First difference from the previous request: '}<b>${describeDifference(cmp.firstDifference, diffUnit)}</b>
            <span class="muted">${` (compared with ${previousRequestName(cmp, call, turns)})`}</span>
          </p>`
        : cmp
          ? html`<p class="diff-summary">The whole previous request is repeated (prefix intact).</p>`
          : null
    }
    ${call.hasLayout ? null : html`<p class="muted">No layout recorded for this call: sections are not known.</p>`}
    ${call.units.map((unit, i) => {
      const s = shared(i, unit);
      const label = unit.kind === 'message' ? `message ${unit.messageIndex} · ${unit.role}` : unit.kind;
      const source = unit.kind === 'message' && unit.section ? sourceOf(unit.section) : null;
      const hits = search ? countMatches(unit.text, search) : 0;
      return html`<${Fold}
        class=${`unit ${unit.kind}`}
        data-testid="unit"
        data-section=${unit.section ?? ''}
        force=${search ? hits > 0 : undefined}
        summary=${html`<span class="unit-label"
          ><b>${label}</b
          >${unit.kind === 'message' ? html` · <span class="message-section" data-testid="message-section">${unit.section ?? 'section not recorded'}</span>` : null}
          ${source ? html` <span class="source">${source.source}</span>` : null}
          <span class="muted"> · ${unit.text.length ? `${[...unit.text].length} chars` : 'empty'}</span></span
        >`}
      >
        ${
          source?.items?.length
            ? html`<ul class="items">
                ${source.items.map((it) => html`<li>${it}</li>`)}
              </ul>`
            : null
        }
        <${UnitText} unit=${unit} sharedUpTo=${s.upTo} firstDifferenceAt=${s.diffAt} sourceOf=${sourceOf} search=${search} />
      </${Fold}>`;
    })}
    ${
      call.reply
        ? html`<div class="reply">
            <b>Reply</b>
            <pre><${Highlighted} text=${call.reply.text} search=${search} /></pre>
            ${call.reply.toolCalls.length ? html`<pre class="tool-calls">${JSON.stringify(call.reply.toolCalls, null, 2)}</pre>` : null}
          </div>`
        : null
    }
    ${
      call.tools.length
        ? html`<div class="tools">
            <b>Tool calls and results</b>
            ${call.tools.map(
              (t) =>
                html`<div class="tool" data-testid="tool">
                  <code>${t.name}(<${Highlighted} text=${t.arguments} search=${search} />)</code> →
                  ${t.ok === null ? 'no result recorded' : t.ok ? 'ok' : 'failed'}
                  <pre><${Highlighted} text=${t.content ?? ''} search=${search} /></pre>
                </div>`,
            )}
          </div>`
        : null
    }`;
}

function CallView({ call, index, audit, search, initiallyOpen, turns }) {
  const auditCall = audit?.calls.find((c) => c.callId === call.callId) ?? null;
  return html`<${Fold}
    class="call"
    data-testid="call"
    data-call=${call.callId}
    initial=${initiallyOpen}
    force=${search ? true : undefined}
    lazy=${true}
    summary=${html`<${CallSummary} call=${call} index=${index} auditCall=${auditCall} />`}
  >
    <${CallBody} call=${call} audit=${audit} search=${search} turns=${turns} />
  </${Fold}>`;
}

/** Calls of a turn shown open at first when there are this many or fewer; more: each folded to one line. */
const OPEN_CALLS_UP_TO = 3;

const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The alternatives of the turn shown: which one this is, whether it is in the history, the others one click away. */
function TurnAlternatives({ sessionId, turn, turnId }) {
  const alternatives = turn.alternatives ?? [];
  if (alternatives.length < 2) return null;
  const at = alternatives.findIndex((a) => a.turnId === turnId);
  const here = alternatives[at];
  const status = here?.selected ? 'in the history' : `not in the history (${here?.status ?? 'unknown'})`;
  return html`<p class="turn-alternatives" data-testid="turn-alternatives">
    ${`Regenerated turn: alternative ${at + 1} of ${alternatives.length} · ${status} · alternatives: `}
    <${AlternativeLinks} sessionId=${sessionId} turn=${turn} current=${turnId} />
  </p>`;
}

function Turn({ sessionId, turnId, signOut }) {
  const callsState = useApi(`/v1/sessions/${sessionId}/turns/${turnId}/calls`, signOut);
  const audit = useApi(`/v1/sessions/${sessionId}/turns/${turnId}/audit`, signOut);
  const turnsState = useApi(`/v1/sessions/${sessionId}/turns`, signOut);
  const [query, setQuery] = useState('');
  const [folding, setFolding] = useState({ open: null, generation: 0 });
  // the calls view: a list of calls, or { turn, calls }
  const data = callsState.data;
  const calls = data ? (Array.isArray(data) ? data : (data.calls ?? [])) : null;
  const turns = turnsState.data;
  const turn =
    (data && !Array.isArray(data) && data.turn) || turns?.find((t) => t.turnId === turnId || (t.alternatives ?? []).some((a) => a.turnId === turnId)) || null;
  // the turn's total as the calls view gives it (the same on every call); else the turns list's figure of this turn
  const turnCost = calls && calls.length > 0 ? calls[0].turnEstCostUsd : turn && turn.turnId === turnId ? turn.estCostUsd : null;
  const search = query.trim() ? new RegExp(escapeRegExp(query.trim()), 'giu') : null;
  const matching = calls && search ? calls.map((c) => callMatches(c, search)) : null;
  const shown = calls ? calls.map((c, i) => ({ c, i })).filter(({ i }) => !matching || matching[i] > 0) : [];
  const total = matching ? matching.reduce((a, b) => a + b, 0) : 0;
  return html`<section>
    <p><a href=${`#/sessions/${sessionId}`}>← turns of the session</a></p>
    <h2>
      Turn ${turn ? turn.number : ''} <span class="muted turn-id">${turnId}</span>
      ${formatCost(turnCost) ? html` · <span data-testid="turn-cost"><${Cost} usd=${turnCost} /></span>` : null}
    </h2>
    ${turn ? html`<p class="turn-input">${turn.input}</p>` : null}
    ${turn ? html`<${RevertedBanner} turn=${turn} turns=${turns} sessionId=${sessionId} />` : null}
    ${turn ? html`<${TurnAlternatives} sessionId=${sessionId} turn=${turn} turnId=${turnId} />` : null}
    <p class="verdict" data-testid="audit-verdict" data-identical=${audit.data ? String(audit.data.identical) : ''}>
      ${'Audit: '}${
        audit.data
          ? audit.data.identical
            ? 'byte-identical — every request re-derived from the events matches the bytes sent'
            : 'NOT byte-identical — a re-derived request differs from what was sent'
          : audit.loading
            ? 'running…'
            : `unavailable (${audit.error?.message ?? ''})`
      }
    </p>
    ${
      calls
        ? calls.length
          ? html`<div class="toolbar">
                <input
                  id="turn-search"
                  type="search"
                  placeholder="Search this turn’s requests, replies and tools"
                  value=${query}
                  onInput=${(e) => setQuery(e.currentTarget.value)}
                />
                ${search ? html`<span data-testid="search-count">${total} ${total === 1 ? 'match' : 'matches'} in ${shown.length} of ${calls.length} calls</span>` : null}
                <button id="expand-all" onClick=${() => setFolding({ open: true, generation: folding.generation + 1 })}>Expand all</button>
                <button id="collapse-all" onClick=${() => setFolding({ open: false, generation: folding.generation + 1 })}>Collapse all</button>
              </div>
              ${shown.map(
                ({ c, i }) =>
                  html`<${CallView}
                    key=${`${c.callId}/${folding.generation}`}
                    call=${c}
                    index=${i}
                    audit=${audit.data}
                    search=${search}
                    turns=${turns}
                    initiallyOpen=${folding.open ?? calls.length <= OPEN_CALLS_UP_TO}
                  />`,
              )}`
          : html`<p class="muted">No model call in this turn.</p>`
        : html`<${Status} state=${callsState} what="calls" />`
    }
  </section>`;
}

function App() {
  const [hasKey, setHasKey] = useState(Boolean(sessionStorage.getItem(KEY)));
  const { view, sessionId, turnId } = useRoute();
  const signOut = () => {
    sessionStorage.removeItem(KEY);
    setHasKey(false);
  };
  if (!hasKey) return html`<${KeyForm} onKey=${() => setHasKey(true)} />`;
  return html`<div>
    <header>
      <nav>
        <a href="#/">Covel prompt inspector</a>
        <a class="nav-link" id="nav-sessions" href="#/">Sessions</a>
        <a class="nav-link" id="nav-worlds" href="#/worlds">Worlds</a>
        <a class="nav-link" id="nav-play" href="#/play">Play</a>
      </nav>
      <button class="sign-out" onClick=${signOut}>Forget the key</button>
    </header>
    <main>
      ${
        view === 'worlds'
          ? html`<${Worlds} signOut=${signOut} />`
          : view === 'play'
            ? html`<${PlayPage} sessionId=${sessionId} signOut=${signOut} />`
            : turnId
              ? html`<${Turn} sessionId=${sessionId} turnId=${turnId} signOut=${signOut} />`
              : sessionId
                ? html`<${Turns} sessionId=${sessionId} signOut=${signOut} />`
                : html`<${Sessions} signOut=${signOut} />`
      }
    </main>
  </div>`;
}

const root = document.getElementById('app');
root.textContent = ''; // the page's "Loading…"
render(html`<${App} />`, root);
