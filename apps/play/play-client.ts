/** One long-poll's wait: under the API's 30 s cap, and under common proxies' idle timeouts. */
const LONG_POLL_MS = 25_000;

/** One problem the API named in a 400's `issues`: where (a field path, `(body)`, a PNG chunk) and what. */
export interface ApiIssue {
  path: string;
  message: string;
}

/** An answer of the API that is not a success: its status, the engine's error code and the problems it named. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | null,
    readonly issues: readonly ApiIssue[] = [],
    /** The server's own message (without the method, path and status), for a sentence of the client's. */
    readonly serverMessage: string = message,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The engine did not answer at all (nothing listens there, a wrong host): says where the URL came from and how to change it. */
export class EngineUnreachableError extends Error {
  constructor(
    readonly url: string,
    /** Where the URL came from, in words (e.g. `from COVEL_URL`). */
    readonly urlSource: string | undefined,
    cause: unknown,
  ) {
    super(
      `cannot reach the Covel engine at ${url}${urlSource ? ` (${urlSource})` : ''}: ${networkReason(cause)}.\n` +
        `Is it running? Start it with npm start (then npm run play finds it), or point the player at it with COVEL_URL, ` +
        `e.g. COVEL_URL=http://127.0.0.1:3000 npm run play`,
      { cause },
    );
    this.name = 'EngineUnreachableError';
  }
}

/** Why a request got no answer, from undici's `fetch failed` and the system error it wraps. */
export function networkReason(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const code = typeof cause === 'object' && cause !== null && 'code' in cause ? String(cause.code) : '';
  const words: Record<string, string> = {
    ECONNREFUSED: 'connection refused (nothing listens on that port)',
    ENOTFOUND: 'no such host',
    EAI_AGAIN: 'the host name could not be resolved',
    ECONNRESET: 'the connection was reset',
    ETIMEDOUT: 'the connection timed out',
    EHOSTUNREACH: 'the host is unreachable',
  };
  if (words[code]) return `${words[code]}, ${code}`;
  return cause instanceof Error ? `${cause.message}${code ? ` (${code})` : ''}` : String(cause);
}

/** One alternative of a turn (`GET …/turns/:turnId/alternatives`, the regenerate feature). */
export interface TurnAlternative {
  /** The alternative's id (its execution id): what `select` takes. */
  id: string;
  turnId: string;
  createdAt: string;
  status: 'running' | 'committed' | 'failed' | 'cancelled';
  /** The first 200 code points of its story text. */
  preview: string;
  /** It is the one in the history. */
  selected: boolean;
}

/** A message of the story (`GET /v1/sessions/:id/messages`), the fields the player reads. */
export interface StoryMessage {
  messageId: string;
  turnId: string;
  role: string;
  sourceType: string;
  text: string;
  outputKind: string | null;
}

/** `POST …/turns/:turnId/revert`: the turns that left the story (the named one first) and their executions. */
export interface RevertAnswer {
  turnId: string;
  turnIds: string[];
  executionIds: string[];
}

/** `PATCH …/messages/:messageId`: with `regenerate`, the execution writing the turn again. */
export interface EditAnswer {
  messageId: string;
  turnId: string;
  text: string;
  /** With `regenerate`: the execution that writes the turn again. */
  execution?: { executionId: string; turnId: string };
}

/** `POST …/branch`: the new session, the one it branched from and the last turn it keeps. */
export interface BranchAnswer {
  sessionId: string;
  parentSessionId: string;
  atTurnId: string;
}

/** A session of the tenant (`GET /v1/sessions/:id`), the fields the player reads. */
export interface SessionSummary {
  sessionId: string;
  worldId: string | null;
  /** The revision of the tenant's world it runs; null for a built-in world or none (absent from an older engine). */
  worldRevision?: number | null;
  locale: string;
}

/** A world as `GET /v1/worlds` lists it. */
export interface WorldSummary {
  /** A tenant's world: a UUID; a built-in world: its folder's name. */
  id: string;
  name: string;
  revision: number;
  archived: boolean;
  builtIn: boolean;
  provenance?: { kind: 'authored' } | { kind: 'imported'; format: 'world-folder' | 'card-v2' | 'card-v3' } | { kind: 'generated' };
  description?: string;
  characters?: number;
  lorebookEntries?: number;
  openings?: number;
}

/** The `issues` of an error answer, when it has any: each a path and a message. */
function issuesOf(value: unknown): ApiIssue[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((i: unknown) =>
    typeof i === 'object' && i !== null && typeof (i as ApiIssue).message === 'string'
      ? [{ path: typeof (i as ApiIssue).path === 'string' ? (i as ApiIssue).path : '', message: (i as ApiIssue).message }]
      : [],
  );
}

/** A small HTTP client of the Covel API for the terminal player and tests. */
export class PlayClient {
  constructor(
    readonly baseUrl: string,
    private readonly apiKey: string,
    /** Where `baseUrl` came from, in words, for the message when the engine cannot be reached. */
    readonly urlSource?: string,
  ) {}

  /** The headers of an authenticated request (the event stream sets its own Accept). */
  authHeaders(): Record<string, string> {
    return { authorization: `Bearer ${this.apiKey}` };
  }

  async request<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    return this.send<T>(method, path, body === undefined ? {} : { body: JSON.stringify(body), contentType: 'application/json' }, signal);
  }

  /** One request with a body as it is (JSON text, a file's bytes); the answer's JSON, or an ApiError naming the server's message and issues. */
  private async send<T>(method: string, path: string, content: { body?: string | Uint8Array; contentType?: string }, signal?: AbortSignal): Promise<T> {
    let res: Response;
    try {
      res = await fetch(`${this.baseUrl}${path}`, {
        method,
        ...(signal ? { signal } : {}),
        headers: { authorization: `Bearer ${this.apiKey}`, ...(content.contentType ? { 'content-type': content.contentType } : {}) },
        ...(content.body === undefined ? {} : { body: content.body }),
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new EngineUnreachableError(this.baseUrl, this.urlSource, error);
    }
    const data = (await res.json().catch(() => ({}))) as T & { message?: string; code?: string; issues?: unknown };
    if (!res.ok)
      throw new ApiError(
        `${method} ${path}: ${res.status} ${data.message ?? ''}`.trim(),
        res.status,
        typeof data.code === 'string' ? data.code : null,
        issuesOf(data.issues),
        data.message ?? '',
      );
    return data;
  }

  /** `opening`: which of the world's openings (default the first, when it has any; null: none). */
  createSession(
    body: {
      worldId?: string;
      locale?: string;
      pluginSettings?: Record<string, Record<string, string | number | boolean>>;
      plugins?: string[];
      opening?: number | null;
    } = {},
  ) {
    return this.request<{ id: string }>('POST', '/v1/sessions', body);
  }

  /** One of the tenant's sessions as the list gives it: its world and the revision of it the session runs (null: a built-in world, or none). */
  session(sessionId: string) {
    return this.request<SessionSummary>('GET', `/v1/sessions/${encodeURIComponent(sessionId)}`);
  }

  /** A page of the worlds the tenant can play (the deployment's built-in ones first); `cursor`: the page before's `nextCursor`. */
  worlds(options: { cursor?: string; limit?: number } = {}) {
    const query = new URLSearchParams();
    if (options.limit !== undefined) query.set('limit', String(options.limit));
    if (options.cursor !== undefined) query.set('cursor', options.cursor);
    const search = query.size > 0 ? `?${query.toString()}` : '';
    return this.request<{ items: WorldSummary[]; nextCursor: string | null }>('GET', `/v1/worlds${search}`);
  }

  /** A world (now, or at `revision`), with its whole document. */
  world(worldId: string, revision?: number) {
    return this.request<WorldSummary & { document: Record<string, unknown> }>(
      'GET',
      `/v1/worlds/${encodeURIComponent(worldId)}${revision === undefined ? '' : `?revision=${revision}`}`,
    );
  }

  /** A world from a file, sent as it is (the engine tells a card's PNG or JSON and a zip apart by their content). */
  importWorld(bytes: Uint8Array, contentType = 'application/octet-stream') {
    return this.send<WorldSummary & { document: Record<string, unknown> }>('POST', '/v1/worlds/import', { body: bytes, contentType });
  }

  submit(sessionId: string, text: string) {
    return this.request<{ executionId: string; turnId: string }>('POST', `/v1/sessions/${sessionId}/inputs`, { text });
  }

  /** Runs the latest turn again (regenerate): a new execution of the same turn. */
  retry(sessionId: string, turnId: string) {
    return this.request<{ executionId: string; turnId: string }>('POST', `/v1/sessions/${sessionId}/turns/${turnId}/retry`, {});
  }

  /** The alternatives of a turn (its first result and each retry's). */
  alternatives(sessionId: string, turnId: string) {
    return this.request<{ turnId: string; alternatives: TurnAlternative[] }>('GET', `/v1/sessions/${sessionId}/turns/${turnId}/alternatives`);
  }

  /** Puts an alternative of a turn (its id: an execution id, as `alternatives` lists it) in the story. */
  selectAlternative(sessionId: string, turnId: string, alternativeId: string) {
    return this.request<{ alternativeId: string; turnId: string }>('POST', `/v1/sessions/${sessionId}/turns/${turnId}/select`, { alternativeId });
  }

  /** Undo: the turn and every later one leave the story (`turn.reverted@1`); the log keeps them. */
  revert(sessionId: string, turnId: string) {
    return this.request<RevertAnswer>('POST', `/v1/sessions/${sessionId}/turns/${turnId}/revert`, {});
  }

  /**
   * Edits a committed message (a player input or story text; `message.edited@1`). With `regenerate`
   * (the latest turn's input), the turn is written again from the edited input: the answer then
   * names the new execution.
   */
  editMessage(sessionId: string, messageId: string, text: string, options: { regenerate?: boolean } = {}) {
    return this.request<EditAnswer>('PATCH', `/v1/sessions/${sessionId}/messages/${messageId}`, {
      text,
      ...(options.regenerate ? { regenerate: true } : {}),
    });
  }

  /** A new session whose story is this one's up to `atTurnId` (`session.branched@1`). */
  branch(sessionId: string, atTurnId: string) {
    return this.request<BranchAnswer>('POST', `/v1/sessions/${sessionId}/branch`, { atTurnId });
  }

  /** The execution's state; with `waitMs`, the API answers once it has ended or after waitMs (long-poll, at most 30000). */
  execution(executionId: string, waitMs?: number, signal?: AbortSignal) {
    const query = waitMs === undefined ? '' : `?waitMs=${waitMs}`;
    return this.request<{ status: string; error: { message: string } | null }>('GET', `/v1/executions/${executionId}${query}`, undefined, signal);
  }

  /** Resumes an execution a runtime suspended (`status: waiting`): the payload is the suspended tool call's result. */
  resume(executionId: string, payload: unknown) {
    return this.request<{ executionId: string; turnId: string; resumeId: string }>('POST', `/v1/executions/${executionId}/resume`, { payload });
  }

  /**
   * Stops an execution (Ctrl-C): its model call is aborted; with `keepPartial`, the story text
   * written so far is kept as the turn's. An ApiError 409 `EXECUTION_ENDED` when it ended first.
   */
  cancel(executionId: string, options: { keepPartial?: boolean } = {}) {
    return this.request<{
      executionId: string;
      turnId: string;
      status: 'cancelled';
      keepPartial: boolean;
      messages?: { role: string; outputKind: string | null; text: string }[];
    }>('POST', `/v1/executions/${executionId}/cancel`, options.keepPartial === undefined ? {} : { keepPartial: options.keepPartial });
  }

  messages(sessionId: string) {
    return this.request<StoryMessage[]>('GET', `/v1/sessions/${sessionId}/messages`);
  }

  /** Waits until the execution is committed or cancelled (resolves to that status) or has failed (throws): long-polls of up to 25 s, one after another. */
  async waitFor(executionId: string, timeoutMs = 120_000, onStatus?: (s: string) => void, signal?: AbortSignal): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const left = deadline - Date.now();
      const { status, error } = await this.execution(executionId, Math.max(0, Math.min(left, LONG_POLL_MS)), signal);
      onStatus?.(status);
      if (status === 'committed' || status === 'cancelled') return status;
      if (status === 'failed') throw new Error(`turn failed: ${error?.message ?? 'unknown error'}`);
      if (Date.now() >= deadline) throw new Error(`turn still ${status} after ${timeoutMs} ms`);
    }
  }

  /** Submits one input, waits for its commit, returns the story text of that turn. */
  async playTurn(sessionId: string, text: string, onStatus?: (s: string) => void): Promise<string> {
    const { executionId, turnId } = await this.submit(sessionId, text);
    await this.waitFor(executionId, undefined, onStatus);
    const messages = await this.messages(sessionId);
    return messages
      .filter((m) => m.turnId === turnId && m.role === 'assistant' && m.outputKind === 'story')
      .map((m) => m.text)
      .join('\n\n');
  }
}
