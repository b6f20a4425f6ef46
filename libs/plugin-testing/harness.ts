import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ProviderEmulator } from '../emulator';
import { createEngine, DEFAULT_HISTORY_READ_LIMIT, type Engine, loadConfig, pluginSettingsIssues, rebuildRequests, type SubmitInputRequest } from '../engine';
import { type PluginDataReader, type PluginDataRow, PluginDataStore, type StoredEvent } from '../events';
import { canonicalLocaleTag, type LoadedPlugin } from '../plugins-sdk';
import { HarnessLookupError, HarnessOptionsError, HarnessTurnFailedError, HarnessTurnTimeoutError } from './errors';
import { loadHarnessPlugins, placeWorld } from './fixtures';
import { parseOptions, type PluginHarnessOptions } from './options';
import { ScriptedReplies } from './replies';
import { requestView, type RequestView } from './request-view';
import { HarnessTurn } from './turn';

export interface TurnOptions {
  /** Resolve with a failed turn (its `failure` set) instead of rejecting with `HarnessTurnFailedError`. */
  allowFailure?: boolean;
  /** Form values submitted with the input (`{{ player.lastFormValues }}`). */
  formValues?: SubmitInputRequest['formValues'];
}

/** `audit()`: every model request of the session rebuilt from the log alone and compared byte for byte. */
export interface HarnessAudit {
  identical: boolean;
  calls: readonly {
    callId: string;
    turnId: string;
    pluginId: string;
    runtimeId: string;
    identical: boolean;
    /** The first UTF-16 index where the rebuilt body differs from the recorded one; null when identical. */
    firstMismatchAt: number | null;
  }[];
}

export interface PluginHarness {
  /** The real engine the harness runs (its store, read models, catalog …), for what the harness does not wrap. */
  readonly engine: Engine;
  readonly tenantId: string;
  readonly sessionId: string;
  /** The session's canonical locale tag. */
  readonly locale: string;
  /** The fixture world's id, or null. */
  readonly worldId: string | null;
  /** The turns run so far, in order. */
  readonly turns: readonly HarnessTurn[];
  /** What the engine logged as warnings and errors (a retried job, a failed runtime …). */
  readonly warnings: readonly string[];
  /** Submits a player input as the API does and waits until its turn is committed (or failed). */
  turn(text: string, options?: TurnOptions): Promise<HarnessTurn>;
  /** The session's events, in log order. */
  events(): Promise<StoredEvent[]>;
  /** A plugin's rows in one namespace of this session (the store's `list`, creation order). */
  pluginData(pluginId: string, namespace: string, options?: { limit?: number }): Promise<PluginDataRow[]>;
  /** The store's reads of one plugin in this session (`get`, `list`, the bounded `selfData`). */
  pluginDataReader(pluginId: string): PluginDataReader;
  /** Rebuilds every request of the session from the log (no plugin code, no model) and compares it with what was sent. */
  audit(): Promise<HarnessAudit>;
  /** Stops the engine, the emulator and the database, and deletes the harness's temporary files. Safe to call twice. */
  close(): Promise<void>;
}

const POLL_MS = 10;

/**
 * Starts the real engine for a plugin's contract tests: the embedded composition (`createEngine`:
 * PGlite in memory, the in-process queue, the turn runner) with the given plugin
 * folders, a fixture world, and a provider emulator of its own whose replies the test scripts.
 * Each harness is isolated (its own database, emulator, session and files); `close()` releases all of it.
 */
export async function createPluginHarness(input: PluginHarnessOptions): Promise<PluginHarness> {
  const options = parseOptions(input);
  const plugins = loadHarnessPlugins(options.plugins, options.builtins);
  // the player's settings are checked as the API checks them, before anything starts
  const settingsIssues = options.pluginSettings ? pluginSettingsIssues(plugins, options.pluginSettings) : [];
  if (settingsIssues.length > 0) throw new HarnessOptionsError(settingsIssues);
  const replies = new ScriptedReplies(options.replies, plugins);
  const dir = mkdtempSync(join(tmpdir(), 'covel-plugin-harness-'));
  const closers: (() => Promise<void>)[] = [async () => rmSync(dir, { recursive: true, force: true })];
  const closeAll = async () => {
    for (const close of closers.splice(0)) await close().catch(() => undefined);
  };
  try {
    const worldsDir = join(dir, 'worlds');
    mkdirSync(worldsDir);
    const worldId = options.world === undefined ? null : placeWorld(options.world, worldsDir);
    const emulator = await new ProviderEmulator({ script: replies.script }).start();
    closers.unshift(() => emulator.stop());
    const warnings: string[] = [];
    const config = loadConfig({
      PORT: '0',
      COVEL_DATA_DIR: join(dir, 'data'),
      COVEL_WORLDS_DIR: worldsDir,
      COVEL_EMULATOR_URL: emulator.url,
      ...(options.llmConfig ? { COVEL_LLM_CONFIG: resolve(options.llmConfig) } : {}),
      ...(options.handlerTimeoutMs ? { COVEL_PLUGIN_HANDLER_TIMEOUT_MS: String(options.handlerTimeoutMs) } : {}),
    });
    const logger = { log: () => undefined, warn: (m: string) => warnings.push(m), error: (m: string) => warnings.push(m) };
    // PGlite in memory: nothing on disk but the world fixture, nothing to lock
    const engine = await createEngine({ ...config, database: { kind: 'pglite' } }, 'all', logger, { plugins });
    closers.unshift(() => engine.close()); // drains the queue, then closes the database
    engine.queue.consume(engine.turns!);
    const { tenant } = await engine.tenants.create(`plugin-harness-${randomUUID()}`);
    const locale = canonicalLocaleTag(options.locale)!;
    const worldPlugins = worldId && engine.worlds.files.has(worldId) ? engine.worlds.files.get(worldId).plugins : undefined;
    const sessionPlugins = options.sessionPlugins ?? harnessSessionPlugins(plugins, options.plugins, worldPlugins);
    const { answer } = await engine.sessions.createSession({
      tenantId: tenant.id,
      locale,
      ...(worldId ? { worldId } : {}),
      ...(options.pluginSettings ? { pluginSettings: options.pluginSettings } : {}),
      ...(sessionPlugins ? { plugins: sessionPlugins } : {}),
    });
    replies.addSession(answer.id);
    return new Harness({ engine, tenantId: tenant.id, sessionId: answer.id, locale, worldId, warnings, turnTimeoutMs: options.turnTimeoutMs, closeAll });
  } catch (error) {
    await closeAll();
    throw error;
  }
}

class Harness implements PluginHarness {
  readonly engine: Engine;
  readonly tenantId: string;
  readonly sessionId: string;
  readonly locale: string;
  readonly worldId: string | null;
  readonly warnings: string[];
  readonly turns: HarnessTurn[] = [];
  private readonly turnTimeoutMs: number;
  private readonly closeAll: () => Promise<void>;
  private closed = false;

  constructor(init: {
    engine: Engine;
    tenantId: string;
    sessionId: string;
    locale: string;
    worldId: string | null;
    warnings: string[];
    turnTimeoutMs: number;
    closeAll: () => Promise<void>;
  }) {
    this.engine = init.engine;
    this.tenantId = init.tenantId;
    this.sessionId = init.sessionId;
    this.locale = init.locale;
    this.worldId = init.worldId;
    this.warnings = init.warnings;
    this.turnTimeoutMs = init.turnTimeoutMs;
    this.closeAll = init.closeAll;
  }

  async turn(text: string, options: TurnOptions = {}): Promise<HarnessTurn> {
    this.open();
    const { answer } = await this.engine.sessions.submitInput({
      tenantId: this.tenantId,
      sessionId: this.sessionId,
      text,
      ...(options.formValues ? { formValues: options.formValues } : {}),
    });
    const status = await this.ended(answer.executionId);
    const events = await this.events();
    const own = events.filter((e) => 'executionId' in e.data && e.data.executionId === answer.executionId);
    const turn = new HarnessTurn(this.sessionId, answer.executionId, answer.turnId, own, await this.requestsOf(events, answer.executionId));
    this.turns.push(turn);
    if (status === 'failed' && !options.allowFailure) {
      throw new HarnessTurnFailedError(answer.executionId, turn.failure ?? { code: 'UNKNOWN', message: 'no execution.failed@1 event' });
    }
    return turn;
  }

  events(): Promise<StoredEvent[]> {
    this.open();
    return this.engine.store.readStream(this.sessionId);
  }

  pluginDataReader(pluginId: string): PluginDataReader {
    this.open();
    return new PluginDataStore(this.engine.database.db).scope({ tenantId: this.tenantId, sessionId: this.sessionId, pluginId });
  }

  pluginData(pluginId: string, namespace: string, options?: { limit?: number }): Promise<PluginDataRow[]> {
    return this.pluginDataReader(pluginId).list(namespace, options);
  }

  async audit(): Promise<HarnessAudit> {
    const events = await this.events();
    const rebuilt = await rebuildRequests(events, this.engine.catalog, this.engine.providers, this.engine.worlds, {
      historyReadLimit: DEFAULT_HISTORY_READ_LIMIT,
      media: this.engine.media,
    });
    const calls = rebuilt.map((c) => ({
      callId: c.callId,
      turnId: c.turnId,
      pluginId: c.pluginId,
      runtimeId: c.runtimeId,
      identical: c.identical,
      firstMismatchAt: c.identical ? null : firstMismatch(c.recorded, c.rebuilt),
    }));
    return { identical: calls.every((c) => c.identical), calls };
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.closeAll();
  }

  private open() {
    if (this.closed) throw new HarnessLookupError('the plugin harness is closed');
  }

  /** Polls the execution's read model (tenant-scoped) until it ends. */
  private async ended(executionId: string): Promise<'committed' | 'failed'> {
    const until = Date.now() + this.turnTimeoutMs;
    for (;;) {
      const view = await this.engine.readModels.execution(this.tenantId, executionId);
      if (view?.status === 'committed' || view?.status === 'failed') return view.status;
      if (Date.now() > until) throw new HarnessTurnTimeoutError(executionId, this.turnTimeoutMs, view?.status ?? 'unknown');
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }

  /** The execution's requests: the recorded bodies, with their sections from the engine's rebuild of the log. */
  private async requestsOf(events: readonly StoredEvent[], executionId: string): Promise<RequestView[]> {
    const calling = new Map(
      events.flatMap((e) => (e.type === 'llm.calling@1' && e.data.executionId === executionId ? [[e.data.callId, e.data] as const] : [])),
    );
    const views: RequestView[] = [];
    // an execution's calls are of one turn: only that turn's are re-derived
    const [first] = calling.values();
    await rebuildRequests(events, this.engine.catalog, this.engine.providers, this.engine.worlds, {
      historyReadLimit: DEFAULT_HISTORY_READ_LIMIT,
      media: this.engine.media,
      ...(first ? { turnId: first.turnId } : {}),
      inspect: (call, request) => {
        const recorded = calling.get(call.callId);
        if (recorded) views.push(requestView(recorded, call, request));
      },
    });
    return views;
  }
}

function firstMismatch(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/**
 * The plugins a harness session runs by default: every plugin folder the test named (opt-in ones
 * too: the test loaded them to run them), and of the built-ins (`builtins: true`) those the world
 * lists, else those enabled by default.
 */
function harnessSessionPlugins(loaded: readonly LoadedPlugin[], folders: readonly string[], worldPlugins: readonly string[] | undefined): string[] {
  const named = new Set(folders.map((f) => resolve(f)));
  return loaded
    .filter((p) => named.has(resolve(p.root)) || (worldPlugins ? worldPlugins.includes(p.manifest.id) : p.manifest.enabledByDefault))
    .map((p) => p.manifest.id);
}
