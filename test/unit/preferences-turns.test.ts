import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProviderEmulator, type RecordedRequest } from '../../libs/emulator';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';
import { llmToml } from '../support/llm-toml';
import { auditedIdentical, playTurns } from '../support/turns';
import type { PlayClient } from '../../apps/play/play-client';

/**
 * Issue 28 item 6, spec §3 "Default LLM request settings for runtimes": the preferences of
 * `llm.toml` (a slot's preset) and of the player (at session creation, then
 * `PATCH /v1/sessions/:id/preferences`) through real turns, on each wire protocol. The keeper
 * plugin has one post-turn runtime per protocol, each on its own slot and each preferring
 * `agent.reasoning: false` and `agent.toolChoice: required`; what each turn's runtimes sent is
 * read from the bytes the official SDKs put on the wire to the emulator.
 */
const PLUGINS = join(__dirname, '..', 'fixtures', 'preference-plugins');

const LLM_TOML = `${llmToml({ story: { contextWindow: 128_000, maxOutputTokens: 1024 }, fast: { contextWindow: 128_000, maxOutputTokens: 512 } })}
[slots.chat]
protocol = "openai-chat"
model = "qwen-plus"
contextWindow = 128000
maxOutputTokens = 4096

[slots.responses]
protocol = "openai-responses"
model = "gpt-5.1"
contextWindow = 128000
maxOutputTokens = 4096
preset = "deliberate"

[slots.anthropic]
protocol = "anthropic"
model = "claude-sonnet-4-5"
contextWindow = 200000
maxOutputTokens = 4096

[slots.gemini]
protocol = "gemini"
model = "gemini-2.5-flash"
contextWindow = 1000000
maxOutputTokens = 4096

[presets.deliberate]
reasoning = { enabled = true, effort = "low" }
toolChoice = "auto"
`;

type Wire = Record<string, unknown>;

/** What each keeper runtime sent on the wire (the raw bytes the SDK sent, parsed), by protocol. */
function keeperRequests(requests: readonly RecordedRequest[]) {
  const sent = requests.map((r) => ({ path: r.path, body: JSON.parse(r.raw) as Wire }));
  const one = (what: string, match: (r: { path: string; body: Wire }) => boolean) => {
    const found = sent.filter(match);
    if (found.length !== 1) throw new Error(`${found.length} ${what} requests`);
    return found[0].body;
  };
  return {
    chat: one('qwen chat', (r) => r.path.endsWith('/chat/completions') && r.body.model === 'qwen-plus'),
    responses: one('responses', (r) => r.path.endsWith('/responses')),
    anthropic: one('anthropic', (r) => r.path.endsWith('/messages')),
    gemini: one('gemini', (r) => r.path.includes('gemini-2.5-flash')),
  };
}

/** The reasoning and tool choice fields of each request, as each protocol spells them. */
function settings(requests: ReturnType<typeof keeperRequests>) {
  const gemini = requests.gemini as { generationConfig?: { thinkingConfig?: unknown }; toolConfig?: { functionCallingConfig?: unknown } };
  return {
    chat: { enable_thinking: requests.chat.enable_thinking, tool_choice: requests.chat.tool_choice },
    responses: { reasoning: requests.responses.reasoning, tool_choice: requests.responses.tool_choice },
    anthropic: { thinking: requests.anthropic.thinking, tool_choice: requests.anthropic.tool_choice },
    gemini: { thinkingConfig: gemini.generationConfig?.thinkingConfig, functionCallingConfig: gemini.toolConfig?.functionCallingConfig },
  };
}

describe('preferences from llm.toml and from the player, through real turns on each protocol (spec §3, issue 28 item 6)', () => {
  let emulator: ProviderEmulator;
  let covel: EmbeddedEngine;
  let configDir: string;
  /** Runs while a narrator call is in flight (before the emulator answers it). */
  let duringNarrator: (() => Promise<void>) | null = null;
  beforeAll(async () => {
    emulator = await new ProviderEmulator({
      beforeReply: async (request) => {
        const body = request.body as { model?: string };
        if (body.model !== 'gpt-4.1-mini' || !duringNarrator) return;
        const run = duringNarrator;
        duringNarrator = null;
        await run();
      },
    }).start();
    configDir = mkdtempSync(join(tmpdir(), 'covel-preferences-'));
    const llm = join(configDir, 'llm.toml');
    writeFileSync(llm, LLM_TOML);
    covel = await startEmbedded({ COVEL_PLUGINS_DIR: PLUGINS, COVEL_EMULATOR_URL: emulator.url, COVEL_LLM_CONFIG: llm });
  }, 120_000);
  afterAll(async () => {
    await covel?.stop();
    await emulator?.stop();
    rmSync(configDir, { recursive: true, force: true });
  });

  /** Plays one turn and returns what its keeper runtimes sent. */
  async function turn(client: PlayClient, sessionId: string, text: string) {
    const before = emulator.requests.length;
    const [turnId] = await playTurns(client, sessionId, [text]);
    return { turnId, sent: settings(keeperRequests(emulator.requests.slice(before))) };
  }

  const patch = (client: PlayClient, sessionId: string, body: unknown) =>
    client.request<{ preferences: unknown }>('PATCH', `/v1/sessions/${sessionId}/preferences`, body);

  it('the runtime prefers, a preset and the player override; a PATCH changes the next turn, not the running one; the audit rebuilds every request', async () => {
    const client = await covel.newTenant();
    const { id } = await client.request<{ id: string }>('POST', '/v1/sessions', {
      preferences: { slots: { anthropic: { reasoning: { enabled: true } } } },
    });

    // turn 1: the runtime's preferences where nothing is explicit (chat, gemini), the slot's preset
    // over them (responses), the player's explicit thinking (anthropic: thinking enabled → the
    // forced choice falls back to auto)
    const one = await turn(client, id, 'Open the ledger');
    expect(one.sent).toEqual({
      chat: { enable_thinking: false, tool_choice: 'required' },
      responses: { reasoning: { effort: 'low' }, tool_choice: 'auto' },
      anthropic: { thinking: { type: 'enabled', budget_tokens: 2048 }, tool_choice: { type: 'auto' } },
      gemini: { thinkingConfig: { thinkingBudget: 0 }, functionCallingConfig: { mode: 'ANY' } },
    });

    // the player changes them: answered with the preferences as they now are
    const changed = await patch(client, id, {
      slots: {
        chat: { reasoning: { enabled: true } },
        responses: { reasoning: { enabled: false }, toolChoice: 'required' },
        anthropic: null,
        gemini: { toolChoice: 'none' },
      },
    });
    expect(changed).toEqual({
      preferences: {
        slots: {
          chat: { reasoning: { enabled: true } },
          gemini: { toolChoice: 'none' },
          responses: { reasoning: { enabled: false }, toolChoice: 'required' },
        },
      },
    });

    // turn 2: Qwen's explicit thinking turns the plugin's forced choice into auto; the player's
    // explicit off and required win over the preset; anthropic back to the runtime's preferences;
    // the player's none is sent as it is
    const two = await turn(client, id, 'Count the coins');
    expect(two.sent).toEqual({
      chat: { enable_thinking: true, tool_choice: 'auto' },
      responses: { reasoning: { effort: 'none' }, tool_choice: 'required' },
      anthropic: { thinking: { type: 'disabled' }, tool_choice: { type: 'any' } },
      gemini: { thinkingConfig: { thinkingBudget: 0 }, functionCallingConfig: { mode: 'NONE' } },
    });

    // turn 3: a change made while the turn runs (during its narrator call, before its keepers are
    // built) is for the turns accepted after it: this turn's keepers send turn 2's settings
    duringNarrator = async () => {
      await patch(client, id, { slots: { gemini: { toolChoice: null }, chat: { reasoning: { enabled: false } } } });
    };
    const three = await turn(client, id, 'Close the ledger');
    expect(duringNarrator).toBeNull();
    expect(three.sent).toEqual(two.sent);

    // turn 4: the change applies
    const four = await turn(client, id, 'Open it again');
    expect(four.sent).toEqual({
      ...two.sent,
      chat: { enable_thinking: false, tool_choice: 'required' },
      gemini: { thinkingConfig: { thinkingBudget: 0 }, functionCallingConfig: { mode: 'ANY' } },
    });

    // every change is an event; the audit rebuilds every request of every turn byte for byte
    const events = await covel.engine.store.readStream(id);
    expect(events.filter((e) => e.type === 'session.preferences-changed@1').map((e) => e.streamVersion)).toEqual([2, expect.any(Number), expect.any(Number)]);
    expect(await auditedIdentical(covel.engine, id, [one.turnId, two.turnId, three.turnId, four.turnId])).toEqual([true, true, true, true]);
  }, 120_000);

  it('a change that changes nothing records nothing; bad bodies and unknown slots are 400s naming the field; another tenant gets a 404', async () => {
    const client = await covel.newTenant();
    const { id } = await client.request<{ id: string }>('POST', '/v1/sessions', {});
    const raw = (c: PlayClient, method: string, path: string, body: unknown) =>
      fetch(`${covel.baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${(c as unknown as { apiKey: string }).apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const refused = async (res: Response) => {
      const body = (await res.json()) as { code: string; issues?: { path: string }[] };
      return [res.status, body.code, (body.issues ?? []).map((i) => i.path)];
    };
    const prefs = `/v1/sessions/${id}/preferences`;

    expect(await patch(client, id, { slots: { gemini: { toolChoice: null } } })).toEqual({ preferences: { slots: {} } });
    expect(await patch(client, id, { slots: { gemini: { toolChoice: 'none' } } })).toEqual({ preferences: { slots: { gemini: { toolChoice: 'none' } } } });
    expect(await patch(client, id, { slots: { gemini: { toolChoice: 'none' } } })).toEqual({ preferences: { slots: { gemini: { toolChoice: 'none' } } } });
    const recorded = (await covel.engine.store.readStream(id)).filter((e) => e.type === 'session.preferences-changed@1');
    expect(recorded.map((e) => e.data)).toEqual([{ preferences: { slots: { gemini: { toolChoice: 'none' } } } }]);

    expect(await refused(await raw(client, 'PATCH', prefs, { slots: { chat: { toolChoice: 'always' } } }))).toEqual([
      400,
      'INVALID_INPUT',
      ['slots.chat.toolChoice'],
    ]);
    expect(await refused(await raw(client, 'PATCH', prefs, { slots: { chat: { reasoning: { enabled: true, effort: 'max' } } } }))).toEqual([
      400,
      'INVALID_INPUT',
      ['slots.chat.reasoning.effort'],
    ]);
    expect(await refused(await raw(client, 'PATCH', prefs, { slots: { chat: { tool_choice: 'auto' } } }))).toEqual([400, 'INVALID_INPUT', ['slots.chat']]);
    const [status, code, paths] = await refused(await raw(client, 'PATCH', prefs, { chat: { toolChoice: 'auto' } }));
    expect([status, code, [...(paths as string[])].sort()]).toEqual([400, 'INVALID_INPUT', ['(body)', 'slots']]);
    expect(await refused(await raw(client, 'PATCH', prefs, { slots: { nope: { toolChoice: 'auto' } } }))).toEqual([400, 'UNKNOWN_SLOT', ['slots.nope']]);
    expect(await refused(await raw(client, 'POST', '/v1/sessions', { preferences: { slots: { nope: {} } } }))).toEqual([
      400,
      'UNKNOWN_SLOT',
      ['preferences.slots.nope'],
    ]);
    expect(await refused(await raw(client, 'POST', '/v1/sessions', { preferences: { slots: { chat: { toolChoice: 3 } } } }))).toEqual([
      400,
      'INVALID_INPUT',
      ['preferences.slots.chat.toolChoice'],
    ]);

    // another tenant's session is not found, and nothing is recorded in it
    const stranger = await covel.newTenant('stranger');
    expect(await refused(await raw(stranger, 'PATCH', prefs, { slots: { chat: { toolChoice: 'auto' } } }))).toEqual([404, 'SESSION_NOT_FOUND', []]);
    expect((await covel.engine.store.readStream(id)).filter((e) => e.type === 'session.preferences-changed@1')).toHaveLength(1);
  }, 60_000);
});
