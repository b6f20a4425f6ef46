// Talking to the API, for every page of the inspector: the tenant's key (kept in this tab's
// sessionStorage), reads and writes with it, and the hooks that load a read into a component.
import { useEffect, useState } from 'preact/hooks';

export const KEY = 'covel.inspector.apiKey';

/** An answer that is not a success: its status, and the engine's `code` and `message` when it sent them. */
export class HttpError extends Error {
  constructor(status, body) {
    super(`${status} ${body?.code ?? ''} ${body?.message ?? ''}`.trim());
    this.status = status;
    this.code = body?.code ?? null;
    this.serverMessage = body?.message ?? '';
  }
}

/** The headers every `/v1` request carries. */
export const authHeaders = () => ({ Authorization: `Bearer ${sessionStorage.getItem(KEY) ?? ''}` });

/** A read (GET) of the API: its JSON, or an HttpError. */
export async function api(path) {
  const res = await fetch(path, { headers: { ...authHeaders(), Accept: 'application/json' } });
  const body = await res.json().catch(() => null);
  if (!res.ok) throw new HttpError(res.status, body);
  return body;
}

/** A fresh Idempotency-Key (crypto.randomUUID only exists in secure contexts: random bytes work everywhere). */
function idempotencyKey() {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  return [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * A write (POST, PATCH) with a JSON body and its own Idempotency-Key, as a client of the API sends
 * it (a repeat of the same request would answer the first one): its JSON answer, or an HttpError.
 */
export async function send(method, path, body = {}) {
  const res = await fetch(path, {
    method,
    headers: { ...authHeaders(), Accept: 'application/json', 'Content-Type': 'application/json', 'Idempotency-Key': idempotencyKey() },
    body: JSON.stringify(body),
  });
  const answer = await res.json().catch(() => null);
  if (!res.ok) throw new HttpError(res.status, answer);
  return answer;
}

/** Loads `path` (null: nothing), again when it changes. */
export const useApi = (path, onUnauthorized) => useLoad(path, () => api(path), onUnauthorized);

/** Runs `load` for `key` (null: nothing), again when the key changes. */
export function useLoad(key, load, onUnauthorized) {
  const [state, setState] = useState({ data: null, error: null, loading: true });
  useEffect(() => {
    if (!key) return;
    let live = true;
    setState({ data: null, error: null, loading: true });
    load().then(
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
  }, [key]);
  return state;
}
