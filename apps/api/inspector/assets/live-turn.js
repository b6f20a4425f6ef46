// The turn being written, on the Play page: the session's event stream (./session-stream.js) shows
// its status and its story text as the model writes it; a long-poll of GET /v1/executions/:id is
// the engine's own word that it ended, should the stream be down. Stop cancels it.
import { useEffect, useRef, useState } from 'preact/hooks';
import { playApi } from './play-api.js';
import { followSession } from './session-stream.js';

/** Execution states of a turn still going (a long-poll answers these only after its wait). */
const GOING = new Set(['queued', 'running', 'waiting']);
/** Stream events of an execution the page has not started yet (its POST has not answered): kept for a few executions. */
const EARLY_EXECUTIONS = 20;
const EARLY_EVENTS = 10_000;

/**
 * `{ live, stream, start, stop }`: `live` the running turn (`{ executionId, turnId, input, text,
 * status, stopping }`, null when none), `stream` the state of the session's event stream;
 * `start(answer, input)` follows the execution a POST answered; `stop(keepPartial)` cancels it.
 * `onEnded({ outcome: committed | failed | cancelled | <status>, error })` when it ends.
 */
export function useLiveTurn(sessionId, onEnded) {
  const [live, setLive] = useState(null);
  const [stream, setStream] = useState({ connected: false });
  const current = useRef(null);
  const early = useRef(new Map());
  const ended = useRef(onEnded);
  ended.current = onEnded;

  const show = (turn) => setLive(turn.done ? null : { ...turn });
  const finish = (turn, outcome, error = null) => {
    if (turn.done) return;
    turn.done = true;
    if (current.current === turn) current.current = null;
    show(turn);
    ended.current({ outcome, error, executionId: turn.executionId, turnId: turn.turnId });
  };
  const apply = (turn, event) => {
    if (turn.done) return;
    if (event.type === 'status' && event.data.status) {
      turn.status = event.data.status;
      show(turn);
    } else if (event.type === 'delta') {
      turn.text += String(event.data.text ?? '');
      show(turn);
    } else if (event.type === 'committed') finish(turn, 'committed');
    else if (event.type === 'failed') finish(turn, 'failed', event.data.error ?? null);
    else if (event.type === 'cancelled') finish(turn, 'cancelled');
  };
  const keepEarly = (executionId, event) => {
    const kept = early.current.get(executionId) ?? [];
    if (kept.length >= EARLY_EVENTS) return;
    kept.push(event);
    early.current.set(executionId, kept);
    if (early.current.size > EARLY_EXECUTIONS) early.current.delete(early.current.keys().next().value);
  };

  useEffect(() => {
    const abort = new AbortController();
    current.current = null;
    early.current = new Map();
    setLive(null);
    void followSession({
      sessionId,
      signal: abort.signal,
      onState: setStream,
      onEvent: (event) => {
        const executionId = event.data?.executionId;
        if (!executionId) return;
        const turn = current.current;
        if (turn && turn.executionId === executionId) apply(turn, event);
        else keepEarly(executionId, event);
      },
    });
    return () => abort.abort();
  }, [sessionId]);

  /** Until the turn is over: the engine's answer, each long-poll up to 25 s (a lost answer is asked again). */
  const poll = async (turn) => {
    while (!turn.done) {
      try {
        const execution = await playApi.waitExecution(turn.executionId);
        if (!GOING.has(execution.status)) finish(turn, execution.status, execution.error ?? null);
      } catch (error) {
        if (error.status >= 400 && error.status < 500) finish(turn, 'failed', { message: error.message });
        else await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    }
  };

  const start = (answer, input) => {
    const turn = { executionId: answer.executionId, turnId: answer.turnId, input, text: '', status: 'queued', stopping: false, done: false };
    current.current = turn;
    show(turn);
    const kept = early.current.get(turn.executionId) ?? [];
    early.current.delete(turn.executionId);
    for (const event of kept) apply(turn, event);
    void poll(turn);
  };

  const stop = async (keepPartial) => {
    const turn = current.current;
    if (!turn || turn.stopping) return;
    turn.stopping = true;
    show(turn);
    try {
      await playApi.cancel(turn.executionId, keepPartial);
      finish(turn, 'cancelled');
    } catch (error) {
      // e.g. 409: it committed first (a stop racing a commit ends as one of the two): the stream or the long-poll ends it
      turn.stopping = false;
      show(turn);
      throw error;
    }
  };

  return { live, stream, start, stop };
}
