import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import {
  ExecutionNotFoundError,
  InProcessQueue,
  isPermanentFailure,
  JournalGapError,
  RuntimeCatalog,
  SessionJournal,
  type TurnJob,
  UnknownStageError,
} from '../../libs/engine';
import { InvalidInputError, NotFoundError, UnavailableError } from '../../libs/errors';
import { EventStore, migrateToLatest, openDatabase, type StoredEvent } from '../../libs/events';
import { endpointFor, SlotConfigError } from '../../libs/providers';
import { loadPlugins } from '../../libs/plugins-sdk';
import { startEmbedded, type EmbeddedEngine } from '../support/embedded';
import { turnContext } from '../support/turn-context';

const job = (): TurnJob => ({ executionId: randomUUID(), sessionId: randomUUID(), tenantId: randomUUID() });

/** Runs one turn job on a fresh in-process queue until it ends; returns how often the handler ran. */
async function runToEnd(handler: () => Promise<void>): Promise<{ calls: number; errors: { error: unknown; willRetry: boolean }[] }> {
  let calls = 0;
  const errors: { error: unknown; willRetry: boolean }[] = [];
  let ended!: () => void;
  const done = new Promise<void>((resolve) => (ended = resolve));
  const queue = new InProcessQueue({
    retry: { backoffMs: 1, turnAttempts: 5 },
    onError: (error, { willRetry }) => {
      errors.push({ error, willRetry });
      if (!willRetry) ended();
    },
  });
  queue.consume({
    turn: async () => {
      calls++;
      await handler();
      ended();
      return { kind: 'done' };
    },
    runtime: async () => ({ kind: 'done' }),
  });
  await queue.enqueue(job());
  await done;
  await queue.close();
  return { calls, errors };
}

describe('permanent job failures (in-process driver)', () => {
  it('a not-found or invalid failure is not retried', async () => {
    const r = await runToEnd(async () => {
      throw new NotFoundError('THING_NOT_FOUND', 'no such thing');
    });
    expect(r.calls).toBe(1);
    expect(r.errors.map((e) => e.willRetry)).toEqual([false]);
  });

  it('a retryable failure is retried until it succeeds', async () => {
    let failures = 2;
    const r = await runToEnd(async () => {
      if (failures-- > 0) throw new UnavailableError('provider', 'try later');
    });
    expect(r.calls).toBe(3);
    expect(r.errors.map((e) => e.willRetry)).toEqual([true, true]);
  });

  it('a retryable failure stops after the last attempt', async () => {
    const r = await runToEnd(async () => {
      throw new UnavailableError('provider', 'still down');
    });
    expect(r.calls).toBe(5);
    expect(r.errors.map((e) => e.willRetry)).toEqual([true, true, true, true, false]);
  });

  it('enqueue on a closed queue is an unavailable engine error', async () => {
    const queue = new InProcessQueue();
    await queue.close();
    await expect(queue.enqueue(job())).rejects.toBeInstanceOf(UnavailableError);
  });
});

describe('permanent job failures (turn runner)', () => {
  let covel: EmbeddedEngine;
  beforeAll(async () => {
    covel = await startEmbedded();
  });
  afterAll(() => covel.stop());

  it('a job naming an execution its session does not have fails with a not-found engine error, once', async () => {
    const turns = covel.engine.turns!;
    const missing = job();
    const error = await turns.turn(missing, turnContext()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExecutionNotFoundError);
    expect(error).toMatchObject({ code: 'EXECUTION_NOT_FOUND', category: 'not-found' });
    expect(isPermanentFailure(error)).toBe(true);

    // through the in-process driver: the handler runs once, not five times
    const r = await runToEnd(async () => {
      await turns.turn(missing, turnContext());
    });
    expect(r.calls).toBe(1);
    expect(r.errors[0].error).toBeInstanceOf(ExecutionNotFoundError);
  });

  it('a late duplicate job of a committed execution is done, not a failure, while a later input is pending (and hands off to it)', async () => {
    const client = await covel.newTenant('late-duplicate');
    const { id } = await client.createSession();
    const first = await client.submit(id, 'first move');
    await client.waitFor(first.executionId, 20_000);
    // a second input is recorded but not yet run: the journal starts at it, without the first
    const later = randomUUID();
    const tenantId = (await covel.engine.store.readStream(id))[0].tenantId;
    await covel.engine.store.append({
      tenantId,
      streamId: id,
      expectedVersion: await covel.engine.store.streamVersion(id),
      events: [{ type: 'player-input.submitted@1', data: { executionId: later, turnId: randomUUID(), messageId: randomUUID(), text: 'later' } }],
    });
    const outcome = await covel.engine.turns!.turn({ executionId: first.executionId, sessionId: id, tenantId }, turnContext());
    expect(outcome).toEqual({ kind: 'done' });
    // nothing else enqueued the later input (it was appended behind the API's back): the hand-off did
    await client.waitFor(later, 20_000);
  });
});

describe('engine domain errors are engine errors', () => {
  it('a runtime naming an unknown stage', () => {
    const plugins = loadPlugins(join(__dirname, '..', 'fixtures', 'staged-plugins'));
    const error = (() => {
      try {
        return new RuntimeCatalog(plugins, ['only-this-stage']);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(UnknownStageError);
    expect(error).toMatchObject({ category: 'invalid', code: 'PLUGIN_STAGE_UNKNOWN' });
  });

  it('an unknown model slot, and no endpoint for a protocol', () => {
    expect(() => endpointFor('anthropic', {}, null)).toThrow(SlotConfigError);
    expect(() => endpointFor('anthropic', {}, null)).toThrow(/ANTHROPIC_API_KEY: no ANTHROPIC_API_KEY and no emulator/);
    expect(isPermanentFailure(new SlotConfigError('llm.toml', [{ path: 'slots.x', message: 'unknown model slot' }]))).toBe(true);
  });

  it('an append of no events', async () => {
    const open = await openDatabase({ kind: 'pglite' });
    try {
      await migrateToLatest(open.db);
      await expect(new EventStore(open.db).append({ tenantId: 't', streamId: 's', expectedVersion: 0, events: [] })).rejects.toBeInstanceOf(InvalidInputError);
    } finally {
      await open.close();
    }
  });

  it('a gap in the events handed to a journal', () => {
    expect(() => new SessionJournal([{ streamVersion: 2 } as StoredEvent])).toThrow(JournalGapError);
  });
});
