// The web prompt inspector: sessions → turns → every model call of a turn, as the model saw it.
// Plain ES modules (no build step): Preact + htm for the views, uPlot for the chart. Every number
// and offset drawn here comes from the API (GET /v1/sessions/:id/turns/:turnId/calls and .../audit):
// the page computes no diff of its own.
import { h, render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import htm from 'htm';
import uPlot from 'uplot';

const html = htm.bind(h);
const KEY = 'covel.inspector.apiKey';

class HttpError extends Error {
  constructor(status, body) {
    super(`${status} ${body?.code ?? ''} ${body?.message ?? ''}`.trim());
    this.status = status;
  }
}

async function api(path) {
  const res = await fetch(path, { headers: { Authorization: `Bearer ${sessionStorage.getItem(KEY) ?? ''}`, Accept: 'application/json' } });
  const body = await res.json().catch(() => null);
  if (!res.ok) throw new HttpError(res.status, body);
  return body;
}

/** Loads `path` (null: nothing), again when it changes. */
function useApi(path, onUnauthorized) {
  const [state, setState] = useState({ data: null, error: null, loading: true });
  useEffect(() => {
    if (!path) return;
    let live = true;
    setState({ data: null, error: null, loading: true });
    api(path).then(
      (data) => live && setState({ data, error: null, loading: false }),
      (error) => {
        if (!live) return;
        if (error.status === 401) onUnauthorized();
        setState({ data: null, error, loading: false });
      },
    );
    return () => {
      live = false;
    };
  }, [path]);
  return state;
}

function useRoute() {
  const parse = () => location.hash.replace(/^#\/?/, '').split('/').filter(Boolean);
  const [parts, setParts] = useState(parse());
  useEffect(() => {
    const on = () => setParts(parse());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  // #/sessions/<id>/turns/<turnId>
  return { sessionId: parts[1] ?? null, turnId: parts[3] ?? null };
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

function Sessions({ signOut }) {
  const state = useApi('/v1/sessions', signOut);
  if (!state.data) return html`<${Status} state=${state} what="sessions" />`;
  if (state.data.length === 0) return html`<p class="muted">This tenant has no session yet.</p>`;
  return html`<section>
    <h2>Sessions</h2>
    <table class="list">
      <thead>
        <tr>
          <th>session</th>
          <th>world</th>
          <th>locale</th>
          <th>turns</th>
          <th>created</th>
        </tr>
      </thead>
      <tbody>
        ${state.data.map(
          (s) =>
            html`<tr>
              <td><a class="session-link" href=${`#/sessions/${s.sessionId}`}>${s.sessionId}</a></td>
              <td>${s.worldId ?? '—'}</td>
              <td>${s.locale}</td>
              <td>${s.turns}</td>
              <td>${s.createdAt}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </section>`;
}

/** Request size and cache-read share per turn (uPlot). */
function TurnChart({ turns }) {
  const ref = useRef(null);
  useEffect(() => {
    if (!ref.current || turns.length === 0) return;
    const x = turns.map((t) => t.number);
    const share = turns.map((t) => (t.providerInputTokens ? Math.round((1000 * (t.providerCachedTokens ?? 0)) / t.providerInputTokens) / 10 : null));
    const chart = new uPlot(
      {
        width: Math.min(900, ref.current.clientWidth || 900),
        height: 260,
        scales: { x: { time: false }, pct: { range: [0, 100] } },
        axes: [{ label: 'turn' }, { label: 'tokens' }, { side: 1, scale: 'pct', label: 'cache read %', grid: { show: false } }],
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
    return () => chart.destroy();
  }, [turns]);
  return html`<div class="chart" id="turn-chart" ref=${ref}></div>`;
}

function Turns({ sessionId, signOut }) {
  const state = useApi(`/v1/sessions/${sessionId}/turns`, signOut);
  if (!state.data) return html`<${Status} state=${state} what="turns" />`;
  return html`<section>
    <h2>Session ${sessionId}</h2>
    <h3>Request size and cache reads per turn</h3>
    <${TurnChart} turns=${state.data} />
    <table class="list">
      <thead>
        <tr>
          <th>#</th>
          <th>input</th>
          <th>status</th>
          <th>calls</th>
          <th>request tok (est.)</th>
          <th>input tok (provider)</th>
          <th>cached (provider)</th>
        </tr>
      </thead>
      <tbody>
        ${state.data.map(
          (t) =>
            html`<tr>
              <td>${t.number}</td>
              <td><a class="turn-link" data-turn=${t.number} href=${`#/sessions/${sessionId}/turns/${t.turnId}`}>${t.input || '(empty)'}</a></td>
              <td>${t.status}</td>
              <td>${t.calls}</td>
              <td>${t.requestTokensEstimate}</td>
              <td>${t.providerInputTokens ?? '—'}</td>
              <td>${t.providerCachedTokens ?? '—'}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </section>`;
}

/** One unit's text cut at the offsets it is given: section starts, cache boundaries, the end of the shared prefix. */
function UnitText({ unit, sharedUpTo, firstDifferenceAt, sourceOf }) {
  const cuts = new Set([0, unit.text.length]);
  for (const s of unit.spans) cuts.add(s.start).add(s.end);
  for (const b of unit.cacheBoundaries) cuts.add(b.offset);
  if (sharedUpTo > 0 && sharedUpTo < unit.text.length) cuts.add(sharedUpTo);
  if (firstDifferenceAt !== null) cuts.add(firstDifferenceAt);
  const offsets = [...cuts].filter((o) => o >= 0 && o <= unit.text.length).sort((a, b) => a - b);
  const out = [];
  for (let i = 0; i < offsets.length; i++) {
    const at = offsets[i];
    const span = unit.spans.find((s) => s.start === at);
    if (span) {
      const source = sourceOf(span.name);
      out.push(
        html`<div class="section-label" data-testid="section" data-section=${span.name}>
          <b>${span.name}</b> <span class="source">${source ? source.source : 'source not recorded'}</span>
          ${
            source?.items?.length
              ? html`<ul class="items">
                  ${source.items.map((it) => html`<li>${it}</li>`)}
                </ul>`
              : null
          }
        </div>`,
      );
    }
    if (firstDifferenceAt === at)
      out.push(
        html`<mark class="first-difference" data-testid="first-difference" title="first difference from the previous request">▶ first difference</mark>`,
      );
    for (const b of unit.cacheBoundaries.filter((c) => c.offset === at)) {
      out.push(
        html`<span class=${`cache-boundary ${b.kind}`} data-testid="cache-boundary" data-kind=${b.kind}
          >✂ cache boundary${b.after ? ` after ${b.after}` : ''}
          (${b.kind === 'cache_control' ? 'cache_control on the wire' : 'internal sentinel, stripped on the wire'})</span
        >`,
      );
    }
    const next = offsets[i + 1];
    if (next === undefined) break;
    const text = unit.text.slice(at, next);
    if (text) out.push(html`<span class=${next <= sharedUpTo ? 'shared' : 'fresh'}>${text}</span>`);
  }
  return html`<pre class="unit-text">${out}</pre>`;
}

function CallView({ call, index, audit }) {
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
  return html`<article class="call" data-testid="call" data-call=${call.callId}>
    <h3>Call ${index + 1}: ${call.pluginId}/${call.runtimeId} · step ${call.step} · attempt ${call.attempt}${call.fallback ? ` · ${call.fallback}` : ''}</h3>
    <p class="meta">${call.protocol} · ${call.model} · ${call.recordedAt}</p>
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
        <th>audit</th>
        <td>${auditCall ? (auditCall.identical ? 'byte-identical' : `differs at byte ${auditCall.firstMismatchAt}`) : '—'}</td>
      </tr>
    </table>
    ${
      cmp?.firstDifference
        ? html`<p class="diff-summary">
            First difference from <code>${cmp.previousCallId}</code>:
            ${cmp.firstDifference.messageIndex === null ? cmp.firstDifference.role : `message ${cmp.firstDifference.messageIndex}`}
            @${cmp.firstDifference.offset}${cmp.firstDifference.section ? ` [${cmp.firstDifference.section}]` : ''}
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
      return html`<div class=${`unit ${unit.kind}`} data-testid="unit" data-section=${unit.section ?? ''}>
        <div class="unit-label">
          <b>${label}</b
          >${unit.kind === 'message' ? html` · <span class="message-section" data-testid="message-section">${unit.section ?? 'section not recorded'}</span>` : null}
          ${source ? html` <span class="source">${source.source}</span>` : null}
          ${
            source?.items?.length
              ? html`<ul class="items">
                  ${source.items.map((it) => html`<li>${it}</li>`)}
                </ul>`
              : null
          }
        </div>
        <${UnitText} unit=${unit} sharedUpTo=${s.upTo} firstDifferenceAt=${s.diffAt} sourceOf=${sourceOf} />
      </div>`;
    })}
    ${
      call.reply
        ? html`<div class="reply">
            <b>Reply</b>
            <pre>${call.reply.text}</pre>
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
                  <code>${t.name}(${t.arguments})</code> → ${t.ok === null ? 'no result recorded' : t.ok ? 'ok' : 'failed'}
                  <pre>${t.content ?? ''}</pre>
                </div>`,
            )}
          </div>`
        : null
    }
  </article>`;
}

function Turn({ sessionId, turnId, signOut }) {
  const calls = useApi(`/v1/sessions/${sessionId}/turns/${turnId}/calls`, signOut);
  const audit = useApi(`/v1/sessions/${sessionId}/turns/${turnId}/audit`, signOut);
  return html`<section>
    <p><a href=${`#/sessions/${sessionId}`}>← turns of the session</a></p>
    <h2>Turn ${turnId}</h2>
    <p class="verdict" data-testid="audit-verdict" data-identical=${audit.data ? String(audit.data.identical) : ''}>
      Audit:
      ${
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
      calls.data
        ? calls.data.length
          ? calls.data.map((c, i) => html`<${CallView} key=${c.callId} call=${c} index=${i} audit=${audit.data} />`)
          : html`<p class="muted">No model call in this turn.</p>`
        : html`<${Status} state=${calls} what="calls" />`
    }
  </section>`;
}

function App() {
  const [hasKey, setHasKey] = useState(Boolean(sessionStorage.getItem(KEY)));
  const { sessionId, turnId } = useRoute();
  const signOut = () => {
    sessionStorage.removeItem(KEY);
    setHasKey(false);
  };
  if (!hasKey) return html`<${KeyForm} onKey=${() => setHasKey(true)} />`;
  return html`<div>
    <header>
      <a href="#/">Covel prompt inspector</a>
      <button class="sign-out" onClick=${signOut}>Forget the key</button>
    </header>
    <main>
      ${
        turnId
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
