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

  createSession(body: { worldId?: string; locale?: string } = {}) {
    return this.request<{ id: string }>('POST', '/v1/sessions', body);
  }

  submit(sessionId: string, text: string) {
    return this.request<{ executionId: string; turnId: string }>('POST', `/v1/sessions/${sessionId}/inputs`, { text });
  }

  execution(executionId: string) {
    return this.request<{ status: string; error: { message: string } | null }>('GET', `/v1/executions/${executionId}`);
  }

  messages(sessionId: string) {
    return this.request<{ turnId: string; role: string; text: string; outputKind: string | null }[]>('GET', `/v1/sessions/${sessionId}/messages`);
  }

  /** Waits (polling) until the execution is committed or failed. */
  async waitFor(executionId: string, timeoutMs = 120_000, onStatus?: (s: string) => void): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { status, error } = await this.execution(executionId);
      onStatus?.(status);
      if (status === 'committed') return status;
      if (status === 'failed') throw new Error(`turn failed: ${error?.message ?? 'unknown error'}`);
      if (Date.now() > deadline) throw new Error(`turn still ${status} after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 150));
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
