import { randomUUID } from 'node:crypto';
import { ConcurrencyError, type EventStore, type ProjectionRunner } from '../events';
import type { Locale } from '../plugins-sdk';
import { SessionNotFoundError } from './errors';
import type { TurnQueue } from './queue';

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
   * turn job. The input is durable once appended: if the enqueue fails, the sweeper enqueues it.
   */
  async submitInput(tenantId: string, sessionId: string, text: string): Promise<{ executionId: string; turnId: string }> {
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
      this.logger.error(`enqueue of execution ${executionId} failed; the sweeper will enqueue it: ${String(error)}`);
    }
    return { executionId, turnId };
  }
}
