import type IORedis from 'ioredis';
import { z } from 'zod';
import { BoundedMemo } from '../../memo';
import type { Logger } from '../logging/logger';
import { redisClient } from '../redis/load-ioredis';
import { CALL_DELTAS_TTL_MS, type CallDeltas, type DeltaBus, FINISHED_CALL_GRACE_MS, type StoryDelta } from './delta-bus';
import { DeltaCoalescer } from './coalescer';

const StoryDeltaMessage = z.object({ sessionId: z.string(), callId: z.string(), seq: z.number().int().positive(), text: z.string() });

export interface RedisDeltaBusOptions {
  redisUrl: string;
  /** Namespaces the channels and keys (the queue's prefix). */
  prefix: string;
  logger: Pick<Logger, 'warn' | 'log'>;
  /** How long a worker trusts what it knows of a session's listeners before asking Redis again (`LISTENED_CHECK_MS`). */
  listenedCheckMs?: number;
}

/** How long a session counts as listened to after its last stream left (the streams' API processes refresh it a third of this). */
export const LISTENED_TTL_MS = 60_000;
/**
 * How long a worker trusts what it knows of a session's listeners (a check's answer, an
 * announcement) before asking Redis again. A new listener does not wait for it: its announcement is
 * heard at once. What it bounds: a session nobody listens to costs one check per this per worker,
 * and a listener that has left is still published to for up to this (its mark outlives it anyway).
 */
export const LISTENED_CHECK_MS = 10_000;
/** Sessions known at most (the expired ones go as others are learnt; past the bound, the oldest learnt too). */
const KNOWN_MAX = 10_000;
/** How long a call's end waits at most for its last delta to reach Redis (deltas are best effort; the reply is not held up). */
const LAST_DELTA_WAIT_MS = 2_000;
/** Marks refreshed per command (a script's keys: one Redis command each, kept short). */
const MARKS_PER_COMMAND = 500;

/** One delta pushed on its call's list (KEYS[1]) and published on its session's channel, then the list's TTL set: one command. An empty delta only sets the TTL (a call's end). */
const PUSH_SCRIPT = `if ARGV[1] ~= '' then
  redis.call('RPUSH', KEYS[1], ARGV[1])
  redis.call('PUBLISH', ARGV[3], ARGV[1])
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 0`;

/** Sessions marked listened (KEYS, their ids in ARGV[3..]) for ARGV[1] ms; a mark that is new is announced on ARGV[2]. */
const LISTENED_SCRIPT = `for i, key in ipairs(KEYS) do
  if redis.call('SET', key, '1', 'PX', ARGV[1], 'NX') then
    redis.call('PUBLISH', ARGV[2], ARGV[2 + i])
  else
    redis.call('PEXPIRE', key, ARGV[1])
  end
end
return 0`;

interface ScriptedRedis extends IORedis {
  covelDeltaPush(key: string, json: string, ttlMs: number, channel: string): Promise<number>;
  covelDeltasListened(keyCount: number, ...args: (string | number)[]): Promise<number>;
}

function scripted(redis: IORedis): ScriptedRedis {
  redis.defineCommand('covelDeltaPush', { numberOfKeys: 1, lua: PUSH_SCRIPT });
  redis.defineCommand('covelDeltasListened', { lua: LISTENED_SCRIPT });
  return redis as ScriptedRedis;
}

/** A session's stream subscription in this process: its listeners, and the subscription under way. */
interface Channel {
  listeners: Set<(delta: StoryDelta) => void>;
  ready: Promise<void>;
}

/**
 * The bus when worker and API are separate processes. Deltas are published only while someone
 * listens to their session, coalesced (`DeltaCoalescer`: at most one per 50 ms or 400 characters),
 * each one Redis command (a script): pushed onto its call's list (read by `recent` when a stream
 * resumes mid-call; it expires a minute after the call ends, 30 minutes at most) and PUBLISHed on
 * its session's channel (every API process that streams that session hears it). Pub/sub rather
 * than a Redis stream per reader: an API process holds one subscriber connection for all its
 * clients, and the publisher never waits for readers.
 *
 * Who listens: an API process that streams a session marks it (`<prefix>:deltas:listened:<session>`,
 * TTL `LISTENED_TTL_MS`, refreshed while it streams; a new mark is announced on
 * `<prefix>:delta-listeners`). A worker subscribes to the announcements (once per process), then
 * keeps a view of who listens: a session's mark is read (one command) when the view has nothing on
 * it younger than `LISTENED_CHECK_MS`; an announcement makes it listened at once. A listener that
 * comes while a call runs is heard, and the call then publishes what it has written so far as one
 * delta (the catch-up), and coalesces from there. Nobody listening: a session costs one read per
 * `LISTENED_CHECK_MS` per worker, whatever its calls (their text is in the log at their end). The
 * view holds only while the announcements are heard without a break: when the subscriber's
 * connection closes it is dropped, and the subscription is made again before anything is read.
 * Connections are opened on first use.
 */
export class RedisDeltaBus implements DeltaBus {
  private publisher: ScriptedRedis | null = null;
  private subscriber: IORedis | null = null;
  private readonly channels = new Map<string, Channel>();
  /** Calls of this process not publishing yet (nobody listened when they began), by session. */
  private readonly unheard = new Map<string, Set<DeltaCoalescer>>();
  private announcements: Promise<void> | null = null;
  /** What this process knows of sessions' listeners, until when (then their mark is read again). */
  private readonly known: BoundedMemo<string, boolean>;
  /** Reads of marks under way, by session (the calls that begin meanwhile wait for the same answer). */
  private readonly checks = new Map<string, Promise<boolean>>();
  /** Counts the subscriber's closes: an answer read across one is not kept (an announcement may have been missed). */
  private subscriberEpoch = 0;
  /** Sessions this process streams, and the timer that refreshes their marks. */
  private readonly listened = new Set<string>();
  private refresher: NodeJS.Timeout | null = null;

  constructor(private readonly options: RedisDeltaBusOptions) {
    this.known = new BoundedMemo({ maxEntries: KNOWN_MAX, ttlMs: options.listenedCheckMs ?? LISTENED_CHECK_MS });
  }

  open(call: { sessionId: string; callId: string }): CallDeltas {
    const key = this.callKey(call.callId);
    const channel = this.channel(call.sessionId);
    let seq = 0;
    const push = (text: string, ttlMs: number) =>
      this.pub()
        .covelDeltaPush(key, text === '' ? '' : JSON.stringify({ ...call, seq: ++seq, text }), ttlMs, channel)
        .catch((error: unknown) => this.publisherFailed(error));
    const coalescer = new DeltaCoalescer({ started: false, emit: (text) => void push(text, CALL_DELTAS_TTL_MS) });
    this.addUnheard(call.sessionId, coalescer);
    const known = this.knownListened(call.sessionId);
    if (known === true) this.hear(call.sessionId);
    else if (known === undefined)
      void this.isListened(call.sessionId).then((listened) => {
        if (listened) this.hear(call.sessionId);
      });
    return {
      write: (text) => coalescer.write(text),
      end: async () => {
        this.dropUnheard(call.sessionId, coalescer);
        const started = coalescer.isStarted;
        const rest = coalescer.end();
        if (!started) return; // nothing was published: nothing to end
        // the rest and the grace of the call's list in one command, before the reply is recorded
        let timer: NodeJS.Timeout | undefined;
        const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, LAST_DELTA_WAIT_MS)));
        await Promise.race([push(rest, FINISHED_CALL_GRACE_MS), bound]);
        clearTimeout(timer);
      },
    };
  }

  async subscribe(sessionId: string, onDelta: (delta: StoryDelta) => void): Promise<() => Promise<void>> {
    const name = this.channel(sessionId);
    let channel = this.channels.get(name);
    if (!channel) {
      channel = { listeners: new Set(), ready: this.listen(sessionId, name) };
      const started = channel;
      this.channels.set(name, started);
      // a failed subscription is not kept: the next stream tries again
      started.ready.catch(() => {
        if (this.channels.get(name) === started) this.channels.delete(name);
      });
    }
    const listener = (delta: StoryDelta) => onDelta(delta);
    const held = channel;
    held.listeners.add(listener);
    try {
      await held.ready; // heard from here on (the first stream's subscription may still be under way)
    } catch (error) {
      held.listeners.delete(listener);
      throw error;
    }
    return async () => {
      held.listeners.delete(listener);
      if (held.listeners.size > 0 || this.channels.get(name) !== held) return;
      this.channels.delete(name);
      this.listened.delete(sessionId);
      await this.subscriber?.unsubscribe(name).catch(() => undefined);
    };
  }

  async recent(callId: string): Promise<StoryDelta[]> {
    const items = await this.pub().lrange(this.callKey(callId), 0, -1);
    return items.flatMap((item) => parseDelta(item) ?? []);
  }

  async close(): Promise<void> {
    this.channels.clear();
    this.unheard.clear();
    this.listened.clear();
    this.known.clear();
    this.checks.clear();
    this.announcements = null;
    if (this.refresher) clearInterval(this.refresher);
    this.refresher = null;
    const connections = [this.publisher, this.subscriber].filter((c): c is IORedis => c !== null);
    this.publisher = this.subscriber = null;
    await Promise.all(connections.map((c) => c.quit().catch(() => c.disconnect())));
  }

  /** Subscribes to a session's deltas, then marks it listened (announced: a call under way starts publishing). */
  private async listen(sessionId: string, channel: string): Promise<void> {
    await this.sub().subscribe(channel);
    this.listened.add(sessionId);
    // not marked (Redis is failing): the stream still has the log; the refresh marks it again
    await this.mark([sessionId]).catch((error: unknown) => this.options.logger.warn(`story deltas of session ${sessionId} not asked for: ${String(error)}`));
    if (this.refresher) return;
    this.refresher = setInterval(() => void this.refresh(), LISTENED_TTL_MS / 3);
    this.refresher.unref();
  }

  private async refresh(): Promise<void> {
    const sessions = [...this.listened];
    try {
      for (let i = 0; i < sessions.length; i += MARKS_PER_COMMAND) await this.mark(sessions.slice(i, i + MARKS_PER_COMMAND));
    } catch (error) {
      this.options.logger.warn(`story delta listeners not refreshed: ${String(error)}`);
    }
  }

  private mark(sessions: string[]): Promise<number> {
    if (sessions.length === 0) return Promise.resolve(0);
    const keys = sessions.map((id) => this.listenedKey(id));
    return this.pub().covelDeltasListened(keys.length, ...keys, LISTENED_TTL_MS, this.announcementsChannel(), ...sessions);
  }

  /** What the view says of the session (undefined: nothing young enough, its mark is to be read). */
  private knownListened(sessionId: string): boolean | undefined {
    return this.known.get(sessionId);
  }

  private learn(sessionId: string, listened: boolean): void {
    this.known.set(sessionId, listened); // set again: the newest, answered for listenedCheckMs from now
  }

  /** Whether someone listens to the session: its mark read once the announcements are heard (so a listener that comes later is heard of); one read at a time per session. */
  private isListened(sessionId: string): Promise<boolean> {
    let check = this.checks.get(sessionId);
    if (!check) {
      check = this.check(sessionId).finally(() => this.checks.delete(sessionId));
      this.checks.set(sessionId, check);
    }
    return check;
  }

  private async check(sessionId: string): Promise<boolean> {
    try {
      const epoch = this.subscriberEpoch;
      this.announcements ??= this.sub()
        .subscribe(this.announcementsChannel())
        .then(() => undefined);
      await this.announcements;
      const listened = (await this.pub().exists(this.listenedKey(sessionId))) > 0;
      // kept only if the announcements were heard all along; "nobody" never overrides an announcement heard meanwhile
      if (epoch === this.subscriberEpoch && this.announcements !== null) {
        if (listened) this.learn(sessionId, true);
        else if (this.knownListened(sessionId) === undefined) this.learn(sessionId, false);
      }
      return listened || this.knownListened(sessionId) === true;
    } catch (error) {
      this.announcements = null;
      this.publisherFailed(error);
      return false;
    }
  }

  /** Someone listens to the session: its calls still quiet publish what they have, and go on. */
  private hear(sessionId: string): void {
    const calls = this.unheard.get(sessionId);
    if (!calls) return;
    this.unheard.delete(sessionId);
    for (const coalescer of calls) coalescer.start();
  }

  private addUnheard(sessionId: string, coalescer: DeltaCoalescer): void {
    let calls = this.unheard.get(sessionId);
    if (!calls) this.unheard.set(sessionId, (calls = new Set()));
    calls.add(coalescer);
  }

  private dropUnheard(sessionId: string, coalescer: DeltaCoalescer): void {
    const calls = this.unheard.get(sessionId);
    if (!calls?.delete(coalescer) || calls.size > 0) return;
    this.unheard.delete(sessionId);
  }

  private publisherDown = false;

  private publisherFailed(error: unknown): void {
    if (this.publisherDown) return;
    this.publisherDown = true;
    this.options.logger.warn(`story delta publisher: ${String(error)}; deltas are dropped until Redis is back (the log keeps the text)`);
  }

  private pub(): ScriptedRedis {
    if (this.publisher) return this.publisher;
    const publisher = scripted(redisClient(this.options.redisUrl, { maxRetriesPerRequest: 1 }));
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
    const subscriber = redisClient(this.options.redisUrl, { maxRetriesPerRequest: null });
    const announcements = this.announcementsChannel();
    subscriber.on('message', (channel: string, message: string) => {
      if (channel === announcements) {
        this.learn(message, true);
        this.hear(message);
        return;
      }
      const delta = parseDelta(message);
      if (!delta) return;
      for (const listener of this.channels.get(channel)?.listeners ?? []) listener(delta);
    });
    subscriber.on('error', (error: unknown) => this.options.logger.warn(`story delta subscriber: ${String(error)}`));
    // announcements may be missed while the connection is down: the view is dropped, the subscription made again on the next read
    subscriber.on('close', () => {
      this.subscriberEpoch++;
      this.announcements = null;
      this.known.clear();
    });
    this.subscriber = subscriber;
    return subscriber;
  }

  private channel(sessionId: string): string {
    return `${this.options.prefix}:deltas:${sessionId}`;
  }

  private callKey(callId: string): string {
    return `${this.options.prefix}:deltas:call:${callId}`;
  }

  private listenedKey(sessionId: string): string {
    return `${this.options.prefix}:deltas:listened:${sessionId}`;
  }

  private announcementsChannel(): string {
    return `${this.options.prefix}:delta-listeners`;
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
