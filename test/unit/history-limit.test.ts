/**
 * Issue 28 item 10, through real turns on the embedded engine: a session's history use against the
 * limit (`COVEL_HISTORY_MESSAGE_LIMIT`, lowered to 20 here instead of playing 1,000 turns) is a
 * state the API reports — `GET /v1/sessions/:id` and the list the inspector reads — `warning` from
 * 80 %, `full` past it, when every turn fails with a code naming the fix; a session with the
 * `history-compaction` plugin is compacted and never warns. Story and fast slots of 8k (emulator),
 * so that compaction starts after a few long turns.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PlayClient } from '../../apps/play/play-client';
import type { HistoryUse } from '../../libs/engine';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';
import { SMALL_WINDOW_LLM } from '../support/small-window-llm';

const LIMIT = 20;

interface SessionAnswer {
  sessionId: string;
  plugins: string[] | null;
  history: HistoryUse;
}

describe('the history limit as a session state (API, inspector data) and the turn error past it', () => {
  let covel: EmbeddedEngine;
  let client: PlayClient;
  let llmDir: string;

  beforeAll(async () => {
    llmDir = mkdtempSync(join(tmpdir(), 'covel-llm-'));
    writeFileSync(join(llmDir, 'llm.toml'), SMALL_WINDOW_LLM);
    covel = await startEmbedded({
      COVEL_HISTORY_MESSAGE_LIMIT: String(LIMIT),
      COVEL_LLM_CONFIG: join(llmDir, 'llm.toml'),
      COVEL_EMULATOR_DELAY_MS: '0',
      COVEL_EMULATOR_CHUNK_DELAY_MS: '0',
    });
    client = await covel.newTenant();
  }, 120_000);
  afterAll(async () => {
    await covel?.stop();
    rmSync(llmDir, { recursive: true, force: true });
  });

  const history = async (id: string) => (await client.request<SessionAnswer>('GET', `/v1/sessions/${id}`)).history;
  const listed = async (id: string) => (await client.request<SessionAnswer[]>('GET', '/v1/sessions')).find((s) => s.sessionId === id);

  it('without a compaction provider: ok, warning from 80 % with the code and the fix, full past the limit; then each turn fails with HISTORY_NEEDS_COMPACTION', async () => {
    const { id } = await client.createSession({ plugins: ['narrator'] });
    expect(await history(id)).toEqual({ messages: 0, limit: LIMIT, state: 'ok', compaction: false });
    const seen: HistoryUse[] = [];
    for (let turn = 1; turn <= 11; turn++) {
      await client.playTurn(id, `I walk to the river, step ${turn}.`);
      seen.push(await history(id));
    }
    // two messages a turn (the input and the story), none compacted
    expect(seen.map((h) => h.messages)).toEqual(seen.map((_, i) => 2 * (i + 1)));
    expect(seen.map((h) => h.state)).toEqual([...Array(7).fill('ok'), 'warning', 'warning', 'warning', 'full']);
    expect(seen[6]).toEqual({ messages: 14, limit: LIMIT, state: 'ok', compaction: false });
    const warning = seen[7]; // 16 of 20: 80 %
    expect(warning).toMatchObject({ messages: 16, state: 'warning', compaction: false, code: 'HISTORY_NEEDS_COMPACTION' });
    expect(warning.fix).toMatch(/^add `history-compaction` to the session's plugins/);
    // the list the inspector reads says the same, with the session's plugins
    expect(await listed(id)).toMatchObject({ plugins: ['narrator'], history: seen[10] });
    expect(seen[10]).toMatchObject({ messages: 22, state: 'full', code: 'HISTORY_NEEDS_COMPACTION' });

    // past the limit the turn fails for good, with the code and a message naming the fix
    const { executionId } = await client.submit(id, 'I keep walking.');
    const ended = await client.request<{ status: string; error: { code: string; message: string } | null }>(
      'GET',
      `/v1/executions/${executionId}?waitMs=25000`,
    );
    expect(ended.status).toBe('failed');
    expect(ended.error?.code).toBe('HISTORY_NEEDS_COMPACTION');
    expect(ended.error?.message).toContain(
      "22 uncompacted messages exceed the history limit of 20 (COVEL_HISTORY_MESSAGE_LIMIT); add `history-compaction` to the session's plugins",
    );
    expect(await history(id)).toMatchObject({ messages: 22, state: 'full' });
  }, 240_000);

  it('with history-compaction: eleven long turns, each committed; the history is compacted as it grows and never warns', async () => {
    const { id } = await client.createSession({ plugins: ['narrator', 'history-compaction'] });
    const seen: HistoryUse[] = [];
    for (let turn = 1; turn <= 11; turn++) {
      await client.playTurn(id, `Turn ${turn}: ${'I search the flooded archive shelf by shelf, reading every spine aloud. '.repeat(80)}`);
      seen.push(await history(id));
    }
    expect(seen.map((h) => h.state)).toEqual(seen.map(() => 'ok'));
    expect(seen.every((h) => h.compaction && h.code === undefined && h.fix === undefined)).toBe(true);
    expect(Math.max(...seen.map((h) => h.messages))).toBeLessThan(16);
    // it did compact: all 22 messages are in the log, fewer are uncompacted
    expect(await client.messages(id)).toHaveLength(22);
    expect(seen[10].messages).toBeLessThan(22);
    expect(await listed(id)).toMatchObject({ plugins: ['history-compaction', 'narrator'], history: seen[10] });
  }, 300_000);

  it('another tenant’s session is not found', async () => {
    const { id } = await client.createSession({ plugins: ['narrator'] });
    const other = await covel.newTenant('other');
    await expect(other.request('GET', `/v1/sessions/${id}`)).rejects.toMatchObject({ status: 404, code: 'SESSION_NOT_FOUND' });
  });
});
