import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { type EmulatorScript, ProviderEmulator } from '../../../emulator';
import type { ToolSet } from '../../tools';
import { EventStore, migrateToLatest, openDatabase, type OpenDatabase, PluginDataStore, ReadModels, type StoredEvent } from '../../../events';
import { type LoadedPlugin, loadPlugins } from '../../../plugins-sdk';
import { endpointFor, type LlmConfig, loadLlmConfig, ProviderRegistry } from '../../../providers';
import { loadConfig } from '../../config/config';
import { engineInlineProjections } from '../../startup/projections';
import { InProcessQueue, type QueueHandlers, type RuntimeJob, type TurnJob } from '../../queue';
import { RuntimeCatalog } from '../../catalog/runtime-catalog';
import { PluginHost } from '../../plugin-host';
import { WorldCatalog } from '../../catalog/world-catalog';
import type { TurnDeps } from '../../execution/deps';
import { TurnRunner } from '../turn-runner';

/** Plugins with two runtimes in pre-turn (mood: no output text, scene), narrator (narrative), recap (no stage). */
export const STAGED_PLUGINS = join(__dirname, '..', '..', '..', '..', 'test', 'fixtures', 'staged-plugins');

export interface TurnHarness {
  deps: TurnDeps;
  database: OpenDatabase;
  emulator: ProviderEmulator;
  queue: InProcessQueue;
  /** Turn jobs the queue was given (it records them, it runs no turn: tests drive the steps). */
  enqueued: TurnJob[];
  warnings: string[];
  /** A new session (a new tenant), in `locale` (a BCP 47 tag; default `en`). */
  session(options?: { locale?: string }): Promise<{ tenantId: string; sessionId: string }>;
  /** Appends a player input (as the API does; the read models are current after the append). */
  input(session: { tenantId: string; sessionId: string }, text?: string): Promise<TurnJob & { turnId: string }>;
  events(sessionId: string): Promise<StoredEvent[]>;
  types(sessionId: string): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * The turn modules' real surroundings, in memory: PGlite with the migrations, the inline read models,
 * the provider emulator behind the real SDKs, the real in-process queue. With `handlers`, the queue
 * runs jobs through them; by default it only records the turn jobs it is given.
 */
export async function turnHarness(
  options: {
    pluginsDir?: string;
    /** Only the plugins of `pluginsDir` this keeps (default: all). */
    pluginFilter?: (plugin: LoadedPlugin) => boolean;
    emulatorDelayMs?: number;
    handlers?: (deps: TurnDeps) => QueueHandlers;
    /** The plugins' server entries are loaded (PluginHost.load) with this handler time limit. */
    handlerTimeoutMs?: number;
    /** Scripted model replies (tool calls included); unscripted calls get the emulator's own reply. */
    script?: EmulatorScript;
    /** The agent runtimes' tools (`TurnDeps.tools`). */
    tools?: ToolSet;
    /** Changes the repository's llm.toml before the providers read it (a slot's window, reserve, tokenizer). */
    llm?: (config: LlmConfig) => LlmConfig;
    /** `TurnDeps.options.turnDeadlineMs` (default: the engine's default). */
    turnDeadlineMs?: number;
    /** The database, migrated here and closed with the harness (default: PGlite in memory). */
    database?: OpenDatabase;
  } = {},
): Promise<TurnHarness> {
  const config = loadConfig({ PORT: '0' });
  const database = options.database ?? (await openDatabase({ kind: 'pglite' }));
  await migrateToLatest(database.db);
  const emulator = await new ProviderEmulator({ responseDelayMs: options.emulatorDelayMs ?? 0, ...(options.script ? { script: options.script } : {}) }).start();
  const store = new EventStore(database.db, { inline: engineInlineProjections });
  const readModels = new ReadModels(database.db);
  const warnings: string[] = [];
  const enqueued: TurnJob[] = [];
  const queue = new InProcessQueue({ retry: { backoffMs: 5 } });
  const plugins = loadPlugins(options.pluginsDir ?? STAGED_PLUGINS).filter(options.pluginFilter ?? (() => true));
  const host = await PluginHost.load(plugins, { handlerTimeoutMs: options.handlerTimeoutMs });
  const deps: TurnDeps = {
    store,
    readModels,
    pluginData: new PluginDataStore(database.db),
    catalog: new RuntimeCatalog(plugins, undefined, host),
    providers: new ProviderRegistry((options.llm ?? ((c) => c))(loadLlmConfig(config.llmConfigFile)), (protocol) => endpointFor(protocol, {}, emulator.url)),
    worlds: new WorldCatalog(config.worldsDir),
    logger: { log: () => undefined, warn: (m) => warnings.push(m), error: (m) => warnings.push(m) },
    queue,
    options: { workerId: 'harness', ...(options.turnDeadlineMs !== undefined ? { turnDeadlineMs: options.turnDeadlineMs } : {}) },
    ...(options.tools ? { tools: options.tools } : {}),
  };
  queue.consume(
    options.handlers?.(deps) ?? {
      turn: async (job) => {
        enqueued.push(job);
        return { kind: 'done' };
      },
      runtime: async () => ({ kind: 'done' }),
    },
  );
  const events = (sessionId: string) => store.readStream(sessionId);
  return {
    deps,
    database,
    emulator,
    queue,
    enqueued,
    warnings,
    async session({ locale = 'en' } = {}) {
      const tenantId = randomUUID();
      const sessionId = randomUUID();
      await store.append({
        tenantId,
        streamId: sessionId,
        expectedVersion: 0,
        events: [{ type: 'session.created@1', data: { sessionId, worldId: null, locale } }],
      });
      return { tenantId, sessionId };
    },
    async input(session, text = 'Open the door') {
      const executionId = randomUUID();
      const turnId = randomUUID();
      await store.append({
        ...session,
        streamId: session.sessionId,
        expectedVersion: await store.streamVersion(session.sessionId),
        events: [{ type: 'player-input.submitted@1', data: { executionId, turnId, messageId: randomUUID(), text } }],
      });
      return { ...session, executionId, turnId };
    },
    events,
    types: async (sessionId) => (await events(sessionId)).map((e) => e.type),
    async close() {
      await queue.close();
      await emulator.stop();
      await database.close();
    },
  };
}

/**
 * `handlers` of a turn runner over the harness's deps (`made` is given it) that notes in
 * `runtimeJobs` each runtime job the queue runs (none while every stage runs inline in its turn job).
 */
export function runnerNotingRuntimeJobs(runtimeJobs: RuntimeJob[], made: (runner: TurnRunner) => void): (deps: TurnDeps) => QueueHandlers {
  return (deps) => {
    const runner = new TurnRunner(deps);
    made(runner);
    return {
      turn: (job, ctx) => runner.turn(job, ctx),
      runtime: (job, attempt) => {
        runtimeJobs.push(job);
        return runner.runtime(job, attempt);
      },
    };
  };
}

/** Resolves once `check` holds (polling the log; a hang guard, not a speed bound). */
export async function eventually(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A new session's turn with `text`, queued and run to its end (committed or failed); its job and the session's events then. */
export async function playToEnd(h: TurnHarness, text = 'Walk to the gate'): Promise<{ job: TurnJob & { turnId: string }; events: StoredEvent[] }> {
  return playTurn(h, await h.session(), text);
}

/** A turn of `session` with `text`, queued and run to its end (committed or failed); its job and the session's events then. */
export async function playTurn(
  h: TurnHarness,
  session: { tenantId: string; sessionId: string },
  text: string,
): Promise<{ job: TurnJob & { turnId: string }; events: StoredEvent[] }> {
  const job = await h.input(session, text);
  await h.queue.enqueue(job);
  const ended = async () =>
    (await h.events(session.sessionId)).some(
      (e) => (e.type === 'turn.committed@1' || e.type === 'execution.failed@1') && e.data.executionId === job.executionId,
    );
  await eventually(ended, 'the turn ended');
  return { job, events: await h.events(session.sessionId) };
}

/** `turnHarness({ llm })`: the story slot of the repository's llm.toml with `change` applied. */
export const storySlot =
  (change: Partial<LlmConfig['slots']['story']>) =>
  (config: LlmConfig): LlmConfig => ({ ...config, slots: { ...config.slots, story: { ...config.slots.story, ...change } } });
