import IORedis from 'ioredis';
import { z } from 'zod';
import type { Logger } from '../logging/logger';
import { CALL_DELTAS_TTL_MS, type DeltaBus, FINISHED_CALL_GRACE_MS, type StoryDelta } from './delta-bus';

const StoryDeltaMessage = z.object({ sessionId: z.string(), callId: z.string(), seq: z.number().int().positive(), text: z.string() });

export interface RedisDeltaBusOptions {
  redisUrl: string;
  /** Namespaces the channels and keys (the queue's prefix). */
  prefix: string;
  logger: Pick<Logger, 'warn' | 'log'>;
}

/**
 * The bus when worker and API are separate processes: each delta is PUBLISHed on its session's
 * channel (every API process that streams that session hears it) and pushed onto its call's list
 * (read by `recent` when a stream resumes mid-call), which expires a minute after the call ends
 * (30 minutes at most). Pub/sub rather than a Redis stream per reader: an API process holds one
 * subscriber connection for all its clients, and the publisher never waits for readers.
 * Connections are opened on first use: a worker only publishes, an API process only reads.
 */
export class RedisDeltaBus implements DeltaBus {
  private publisher: IORedis | null = null;
  private subscriber: IORedis | null = null;
  private readonly listeners = new Map<string, Set<(delta: StoryDelta) => void>>();

  constructor(private readonly options: RedisDeltaBusOptions) {}

  publish(delta: StoryDelta): void {
    const json = JSON.stringify(delta);
    const key = this.callKey(delta.callId);
    this.pub()
      .multi()
      .rpush(key, json)
      .pexpire(key, CALL_DELTAS_TTL_MS)
      .publish(this.channel(delta.sessionId), json)
      .exec()
      .catch((error: unknown) => this.publisherFailed(error));
  }

  finish(callId: string): void {
    this.pub()
      .pexpire(this.callKey(callId), FINISHED_CALL_GRACE_MS)
      .catch((error: unknown) => this.options.logger.warn(`story deltas of call ${callId} kept longer: ${String(error)}`));
  }

  async subscribe(sessionId: string, onDelta: (delta: StoryDelta) => void): Promise<() => Promise<void>> {
    const channel = this.channel(sessionId);
    let set = this.listeners.get(channel);
    const first = !set;
    if (!set) this.listeners.set(channel, (set = new Set()));
    const listener = (delta: StoryDelta) => onDelta(delta);
    set.add(listener);
    if (first) await this.sub().subscribe(channel);
    return async () => {
      set.delete(listener);
      if (set.size > 0 || this.listeners.get(channel) !== set) return;
      this.listeners.delete(channel);
      await this.subscriber?.unsubscribe(channel).catch(() => undefined);
    };
  }

  async recent(callId: string): Promise<StoryDelta[]> {
    const items = await this.pub().lrange(this.callKey(callId), 0, -1);
    return items.flatMap((item) => parseDelta(item) ?? []);
  }

  async close(): Promise<void> {
    this.listeners.clear();
    const connections = [this.publisher, this.subscriber].filter((c): c is IORedis => c !== null);
    this.publisher = this.subscriber = null;
    await Promise.all(connections.map((c) => c.quit().catch(() => c.disconnect())));
  }

  private publisherDown = false;

  private publisherFailed(error: unknown): void {
    if (this.publisherDown) return;
    this.publisherDown = true;
    this.options.logger.warn(`story delta publisher: ${String(error)}; deltas are dropped until Redis is back (the log keeps the text)`);
  }

  private pub(): IORedis {
    if (this.publisher) return this.publisher;
    const publisher = new IORedis(this.options.redisUrl, { maxRetriesPerRequest: 1 });
    // without a listener ioredis reports every reconnect attempt as an unhandled error event; deltas
    // are best effort (the log has the text): say it once per outage, and when it is back
    publisher.on('error', (error: unknown) => this.publisherFailed(error));
    publisher.on('ready', () => {
      if (!this.publisherDown) return;
      this.publisherDown = false;
      this.options.logger.log('story delta publisher: redis connection is back');
    });
    this.publisher = publisher;
    return publisher;
  }

  private sub(): IORedis {
    if (this.subscriber) return this.subscriber;
    const subscriber = new IORedis(this.options.redisUrl, { maxRetriesPerRequest: null });
    subscriber.on('message', (channel: string, message: string) => {
      const delta = parseDelta(message);
      if (!delta) return;
      for (const listener of this.listeners.get(channel) ?? []) listener(delta);
    });
    subscriber.on('error', (error: unknown) => this.options.logger.warn(`story delta subscriber: ${String(error)}`));
    this.subscriber = subscriber;
    return subscriber;
  }

  private channel(sessionId: string): string {
    return `${this.options.prefix}:deltas:${sessionId}`;
  }

  private callKey(callId: string): string {
    return `${this.options.prefix}:deltas:call:${callId}`;
  }
}

function parseDelta(text: string): StoryDelta | null {
  try {
    const parsed = StoryDeltaMessage.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
