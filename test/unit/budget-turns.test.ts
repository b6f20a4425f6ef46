import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProviderEmulator } from '../../libs/emulator';
import { TOOL_HEAVY_LLM, toolHeavyInput, toolHeavyScript } from '../support/tool-heavy-session';
import type { StoredEvent } from '../../libs/events';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';
import { auditedIdentical, playTurns } from '../support/turns';
import { rebuildInline } from '../../libs/events';
import { engineInlineProjections } from '../../libs/engine';
import { dumpProjections } from '../support/projection-dump';

/**
 * Issue 13's acceptance: "Replay and audit byte-identical for a 20-turn session where trimming
 * happens every turn". The narrator of test/fixtures/budget-plugins searches seven shelves per turn
 * (each result ~540 tokens) before it writes, on a 4k window with a 512-token reserve (input
 * limit 3,584): every turn's later steps are over the limit and the budget trims them.
 */
const PLUGINS = join(__dirname, '..', 'fixtures', 'budget-plugins');
const TURNS = 20;
const SHELVES = 7;
type Calling = Extract<StoredEvent, { type: 'llm.calling@1' }>;

describe('a tool-heavy 20-turn session trimmed every turn (issue 13)', () => {
  let covel: EmbeddedEngine;
  let emulator: ProviderEmulator;
  let llmDir: string;
  beforeAll(async () => {
    emulator = await new ProviderEmulator({ script: toolHeavyScript(SHELVES) }).start();
    llmDir = mkdtempSync(join(tmpdir(), 'covel-budget-llm-'));
    writeFileSync(join(llmDir, 'llm.toml'), TOOL_HEAVY_LLM);
    covel = await startEmbedded({ COVEL_PLUGINS_DIR: PLUGINS, COVEL_EMULATOR_URL: emulator.url, COVEL_LLM_CONFIG: join(llmDir, 'llm.toml') });
  }, 60_000);
  afterAll(async () => {
    await covel?.stop();
    await emulator?.stop();
    rmSync(llmDir, { recursive: true, force: true });
  });

  it('every turn trims, every request sent is under the input limit, and audit and replay are byte-identical', async () => {
    const client = await covel.newTenant();
    const { id } = await client.createSession({});
    const turnIds = await playTurns(
      client,
      id,
      Array.from({ length: TURNS }, (_, i) => toolHeavyInput(i + 1)),
      60_000,
    );
    const events = await covel.engine.store.readStream(id);
    const calls = events.filter((e): e is Calling => e.type === 'llm.calling@1');
    expect(calls).toHaveLength(TURNS * (SHELVES + 1));
    const budgets = calls.map((c) => c.data.budget);
    for (const [i, turnId] of turnIds.entries()) {
      const ofTurn = calls.filter((c) => c.data.turnId === turnId).map((c) => c.data.budget!);
      // the budget ran on every request; some request of each turn elided or collapsed tool results
      expect(ofTurn.every((b) => b !== undefined && b.stats.after <= b.stats.inputLimit)).toBe(true);
      expect({ turn: i + 1, trimmed: ofTurn.some((b) => b.stats.elided + b.stats.collapsed > 0) }).toEqual({ turn: i + 1, trimmed: true });
    }
    expect(budgets.every((b) => b !== undefined)).toBe(true);
    // later turns prune history too; the recorded layout follows the request as sent: its
    // player-input section is the player's text of that turn, wherever pruning moved it
    expect(budgets.some((b) => b!.stats.pruned > 0)).toBe(true);
    for (const c of calls) {
      const sent = JSON.parse(c.data.body) as { messages: { content: string }[] };
      const at = c.data.layout!.messageSections.indexOf('player-input');
      expect(sent.messages[at].content).toBe(toolHeavyInput(turnIds.indexOf(c.data.turnId) + 1));
    }
    // what was sent is what the log holds
    for (const c of calls) expect(emulator.requests.some((r) => r.raw === c.data.body)).toBe(true);

    expect(await auditedIdentical(covel.engine, id, turnIds)).toEqual(turnIds.map(() => true));
    const db = covel.engine.database.db;
    const rows = await dumpProjections(db);
    expect((await rebuildInline({ db, projections: engineInlineProjections })).failures).toEqual([]);
    expect(await dumpProjections(db)).toEqual(rows);
  }, 300_000);
});
