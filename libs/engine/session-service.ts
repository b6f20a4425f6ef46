import { randomUUID } from 'node:crypto';
import { ConcurrencyError, type EventStore, type ProjectionRunner } from '../events';
import type { Locale } from '../plugins-sdk';
import { SessionNotFoundError } from './errors';
import { queueUnavailable, type TurnQueue } from './queue';

export interface Logger {
  log(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** Use cases behind the API: create a session, submit a player input. */
export class SessionService {
  constructor(
    private readonly store: EventStore,
    private readonly queue: TurnQueue,
    private readonly projections: ProjectionRunner,
    private readonly logger: Logger,
  ) {}

  async createSession(tenantId: string, input: { worldId?: string; locale?: Locale }): Promise<{ id: string }> {
    const sessionId = randomUUID();
    await this.store.append({
      tenantId,
      streamId: sessionId,
      expectedVersion: 0,
      events: [{ type: 'session.created@1', data: { sessionId, worldId: input.worldId ?? null, locale: input.locale ?? 'en' } }],
    });
    return { id: sessionId };
  }

  /** True when the session exists and belongs to the tenant. */
  async owns(tenantId: string, sessionId: string): Promise<boolean> {
    return (await this.store.streamTenant(sessionId)) === tenantId;
  }

  /**
   * Appends the input (retrying on concurrent appends to the same session), then enqueues its
   * turn job. When the queue is known to be down, nothing is appended and the caller gets
   * `UnavailableError` (retry later). The input is durable once appended: if the enqueue fails
   * after that (bounded wait), the turn is still accepted and the sweeper enqueues it.
   */
  async submitInput(tenantId: string, sessionId: string, text: string): Promise<{ executionId: string; turnId: string }> {
    if (!this.queue.isAvailable()) throw queueUnavailable('the turn queue is unavailable; nothing was recorded, retry later');
    if (!(await this.owns(tenantId, sessionId))) throw new SessionNotFoundError(sessionId);
    const executionId = randomUUID();
    const turnId = randomUUID();
    const event = { type: 'player-input.submitted@1' as const, data: { executionId, turnId, messageId: randomUUID(), text } };
    for (let tries = 0; ; tries++) {
      const version = await this.store.streamVersion(sessionId);
      try {
        await this.store.append({ tenantId, streamId: sessionId, expectedVersion: version, events: [event] });
        break;
      } catch (error) {
        if (!(error instanceof ConcurrencyError) || tries >= 50) throw error;
      }
    }
    try {
      await this.projections.catchUp();
    } catch (error) {
      this.logger.warn(`projection catch-up after input failed (will retry): ${String(error)}`);
    }
    try {
      await this.queue.enqueue({ executionId, sessionId, tenantId });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.logger.warn(`enqueue of execution ${executionId} failed (${reason}); the input is recorded and the sweeper will enqueue it`);
    }
    return { executionId, turnId };
  }
}
