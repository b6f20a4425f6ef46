// The public API calls the Play page makes: the same routes, bodies and headers a client developer
// uses (docs/api.md), each write with its own Idempotency-Key (./http.js).
import { api, send } from './http.js';

const s = (sessionId) => `/v1/sessions/${encodeURIComponent(sessionId)}`;

/** The most a long-poll of GET /v1/executions/:id waits (the API's cap is 30 s). */
export const LONG_POLL_MS = 25_000;

export const playApi = {
  sessions: () => api('/v1/sessions?limit=50'),
  /** The worlds a new session can start in (archived ones are left out). */
  worlds: () => api('/v1/worlds?limit=100'),
  createSession: (worldId) => send('POST', '/v1/sessions', worldId ? { worldId } : {}),
  session: (sessionId) => api(s(sessionId)),
  messages: (sessionId) => api(`${s(sessionId)}/messages`),
  submit: (sessionId, text) => send('POST', `${s(sessionId)}/inputs`, { text }),
  /** Writes the latest turn again: a new alternative of it. */
  regenerate: (sessionId, turnId) => send('POST', `${s(sessionId)}/turns/${turnId}/retry`),
  alternatives: (sessionId, turnId) => api(`${s(sessionId)}/turns/${turnId}/alternatives`),
  /** Puts an alternative (its id, as `alternatives` lists it) in the story. */
  select: (sessionId, turnId, alternativeId) => send('POST', `${s(sessionId)}/turns/${turnId}/select`, { alternativeId }),
  /** Undo: the turn and every later one leave the story. */
  revert: (sessionId, turnId) => send('POST', `${s(sessionId)}/turns/${turnId}/revert`),
  /** A new text for a committed message; `regenerate` (the latest input) writes its turn again. */
  editMessage: (sessionId, messageId, text, regenerate) =>
    send('PATCH', `${s(sessionId)}/messages/${messageId}`, { text, ...(regenerate ? { regenerate: true } : {}) }),
  /** A new session whose story is this one's up to `atTurnId`. */
  branch: (sessionId, atTurnId) => send('POST', `${s(sessionId)}/branch`, { atTurnId }),
  /** Stops a running execution; `keepPartial`: the story text written so far stays as the turn's. */
  cancel: (executionId, keepPartial) => send('POST', `/v1/executions/${executionId}/cancel`, { keepPartial }),
  /** The execution's state once it has ended, or after LONG_POLL_MS. */
  waitExecution: (executionId) => api(`/v1/executions/${executionId}?waitMs=${LONG_POLL_MS}`),
};
