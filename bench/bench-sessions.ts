import { randomUUID } from 'node:crypto';
import { EventStore, inlineProjections, migrateToLatest, type NewEvent, openDatabase, type OpenDatabase, ReadModels } from '../libs/events';
import { ProviderRegistry } from '../libs/providers';

/** What the context benches read from: an in-process database (migrated), its event store and read models. */
export interface BenchDatabase {
  open: OpenDatabase;
  store: EventStore;
  readModels: ReadModels;
}

export const BENCH_TENANT = 'bench';

/** A fresh in-process database (PGlite) with the latest schema; close it with `open.close()`. */
export async function openBenchDatabase(): Promise<BenchDatabase> {
  const open = await openDatabase({ kind: 'pglite' });
  try {
    await migrateToLatest(open.db);
  } catch (error) {
    await open.close();
    throw error;
  }
  return { open, store: new EventStore(open.db, { inline: inlineProjections }), readModels: new ReadModels(open.db) };
}

/** The `story` and `fast` slots on OpenAI Chat: the benches build request bodies and never send them. */
export function benchProviders(): ProviderRegistry {
  return new ProviderRegistry(
    {
      slots: {
        story: { protocol: 'openai-chat', model: 'bench', contextWindow: 128_000, maxOutputTokens: 1024, cacheBoundaries: true },
        fast: { protocol: 'openai-chat', model: 'bench', contextWindow: 128_000, maxOutputTokens: 512, cacheBoundaries: true },
      },
    },
    () => ({ kind: 'emulator', apiKey: 'bench', baseURL: 'http://127.0.0.1:9/v1' }),
  );
}

const text = (n: number) => `Turn ${n}: the embers shift as the travellers cross the ridge and argue about the map. `.repeat(3);

/**
 * A session of `messages` committed messages, compacted the way the default policy keeps it:
 * at most ~60 uncompacted messages and at most eight summary segments.
 */
export async function seedSession(store: EventStore, tenantId: string, messages: number): Promise<string> {
  const sessionId = randomUUID();
  let version = 0;
  let pending: NewEvent[] = [{ type: 'session.created@1', data: { sessionId, worldId: 'emberback', locale: 'en' } }];
  const flush = async () => {
    if (pending.length === 0) return;
    version = (await store.append({ tenantId, streamId: sessionId, expectedVersion: version, events: pending })).version;
    pending = [];
  };
  let uncompacted: string[] = [];
  let summaries: string[] = [];
  for (let t = 0; t < messages / 2; t++) {
    const executionId = randomUUID();
    const turnId = randomUUID();
    const userId = randomUUID();
    const storyId = randomUUID();
    pending.push({ type: 'player-input.submitted@1', data: { executionId, turnId, messageId: userId, text: `I do thing ${t}` } });
    pending.push({
      type: 'turn.committed@1',
      data: {
        executionId,
        turnId,
        attempt: 1,
        messages: [
          { messageId: userId, role: 'user', sourceType: 'player', pluginId: null, runtimeId: null, outputKind: null, text: `I do thing ${t}` },
          { messageId: storyId, role: 'assistant', sourceType: 'runtime', pluginId: 'narrator', runtimeId: 'narrator', outputKind: 'story', text: text(t) },
        ],
      },
    });
    uncompacted.push(userId, storyId);
    if (uncompacted.length > 60) {
      const covered = uncompacted.slice(0, 40);
      uncompacted = uncompacted.slice(40);
      const summaryId = randomUUID();
      const batch: { summaryId: string; messageIds: string[]; replacesSummaryIds: string[]; content: string }[] = [];
      if (summaries.length >= 8) {
        const [a, b] = summaries;
        batch.push({ summaryId: randomUUID(), messageIds: [], replacesSummaryIds: [a, b], content: `Merged summary up to turn ${t}. ` });
        summaries = [a, ...summaries.slice(2)];
      }
      batch.push({ summaryId, messageIds: covered, replacesSummaryIds: [], content: `Summary up to turn ${t}: the party crossed ${t} ridges. `.repeat(4) });
      summaries.push(summaryId);
      pending.push({ type: 'history.compacted@1', data: { compactionId: randomUUID(), summaries: batch } });
    }
    if (pending.length >= 400) await flush();
  }
  await flush();
  return sessionId;
}

export interface SeedOptions {
  /** Seeds more of a session after its messages (e.g. its plugin data). */
  more?: (sessionId: string) => Promise<void>;
  /** What `more` seeds, for the log line ("and 500 plugin data rows"). */
  moreLabel?: string;
}

/** One session per size (`seedSession`, then `options.more`), in the order given, each logged with the time it took. */
export async function seedSessions(
  store: EventStore,
  sizes: readonly number[],
  log: (line: string) => void,
  options: SeedOptions = {},
): Promise<{ size: number; sessionId: string }[]> {
  const sessions: { size: number; sessionId: string }[] = [];
  for (const size of sizes) {
    const started = Date.now();
    const sessionId = await seedSession(store, BENCH_TENANT, size);
    await options.more?.(sessionId);
    log(`  seeded ${size} messages${options.moreLabel ? ` ${options.moreLabel}` : ''} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    sessions.push({ size, sessionId });
  }
  return sessions;
}
