/** One long-poll's wait: under the API's 30 s cap, and under common proxies' idle timeouts. */
const LONG_POLL_MS = 25_000;

/** A small HTTP client of the Covel API for the terminal player and tests. */
export class PlayClient {
  constructor(
    private readonly baseUrl: string,
    private readonly apiKey: string,
  ) {}

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const data = (await res.json().catch(() => ({}))) as T & { message?: string };
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${data.message ?? ''}`.trim());
    return data;
  }

  createSession(body: { worldId?: string; locale?: string; pluginSettings?: Record<string, Record<string, string | number | boolean>> } = {}) {
    return this.request<{ id: string }>('POST', '/v1/sessions', body);
  }

  submit(sessionId: string, text: string) {
    return this.request<{ executionId: string; turnId: string }>('POST', `/v1/sessions/${sessionId}/inputs`, { text });
  }

  /** The execution's state; with `waitMs`, the API answers once it has ended or after waitMs (long-poll, at most 30000). */
  execution(executionId: string, waitMs?: number) {
    const query = waitMs === undefined ? '' : `?waitMs=${waitMs}`;
    return this.request<{ status: string; error: { message: string } | null }>('GET', `/v1/executions/${executionId}${query}`);
  }

  /** Resumes an execution a runtime suspended (`status: waiting`): the payload is the suspended tool call's result. */
  resume(executionId: string, payload: unknown) {
    return this.request<{ executionId: string; turnId: string; resumeId: string }>('POST', `/v1/executions/${executionId}/resume`, { payload });
  }

  messages(sessionId: string) {
    return this.request<{ turnId: string; role: string; text: string; outputKind: string | null }[]>('GET', `/v1/sessions/${sessionId}/messages`);
  }

  /** Waits until the execution is committed or failed: long-polls of up to 25 s, one after another. */
  async waitFor(executionId: string, timeoutMs = 120_000, onStatus?: (s: string) => void): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const left = deadline - Date.now();
      const { status, error } = await this.execution(executionId, Math.max(0, Math.min(left, LONG_POLL_MS)));
      onStatus?.(status);
      if (status === 'committed') return status;
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
