import type IORedis from 'ioredis';
import { z } from 'zod';
import type { CallDeadlineListener } from '../../providers';
import type { Logger } from '../logging/logger';
import { redisClient } from '../redis/load-ioredis';
import { type DeadlineMiss, deadlineMiss, type ProviderHealth, type ProviderSlotHealth, SLOW_WINDOW_MS, slotHealth } from './provider-health';

/** How often one process clears a slot's miss when its calls answer (one DEL per slot at most this often). */
const CLEAR_EVERY_MS = 10_000;

const Miss = z.object({
  at: z.string(),
  protocol: z.string(),
  phase: z.enum(['first-byte', 'idle', 'total']),
  deadlineMs: z.number(),
  code: z.string(),
  answered: z.boolean().optional(),
});

/**
 * Provider health when API and workers are separate processes: a worker SETs its slot's last miss
 * (expiring after `SLOW_WINDOW_MS`), and marks it answered when a later call of the slot answers
 * (at most once per `CLEAR_EVERY_MS` per slot and process); the API reads the slots' keys in one
 * MGET. Best effort: a write that fails is logged once per outage, never a reason to fail a call.
 */
export class RedisProviderHealth implements ProviderHealth {
  private connection: IORedis | null = null;
  private readonly lastClear = new Map<string, number>();
  private down = false;
  private closed = false;

  constructor(private readonly options: { redisUrl: string; prefix: string; logger: Pick<Logger, 'warn'> }) {}

  readonly listener: CallDeadlineListener = {
    missed: (failure) => {
      this.lastClear.delete(failure.slot);
      this.write((redis) => redis.set(this.key(failure.slot), JSON.stringify(deadlineMiss(failure)), 'PX', SLOW_WINDOW_MS));
    },
    answered: (slot) => {
      const last = this.lastClear.get(slot);
      if (last !== undefined && Date.now() - last < CLEAR_EVERY_MS) return;
      this.lastClear.set(slot, Date.now());
      // the miss stays readable (`lastDeadlineMiss`), marked answered; KEEPTTL: it expires as it would have
      const key = this.key(slot);
      this.write((redis) => redis.eval(MARK_ANSWERED, 1, key));
    },
  };

  async report(slots: readonly string[]): Promise<ProviderSlotHealth[]> {
    if (slots.length === 0) return [];
    const values = await this.redis().mget(...slots.map((s) => this.key(s)));
    return slots.map((slot, i) => {
      const miss = parse(values[i]);
      const health = slotHealth(slot, miss ? withoutAnswered(miss) : null);
      return miss?.answered ? { ...health, state: 'ok' } : health;
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const connection = this.connection;
    this.connection = null;
    await connection?.quit().catch(() => connection.disconnect());
  }

  private write(command: (redis: IORedis) => Promise<unknown>): void {
    if (this.closed) return; // a call that ended while the process closes
    command(this.redis()).then(
      () => (this.down = false),
      (error: unknown) => {
        if (!this.down) this.options.logger.warn(`provider health not written to Redis: ${String(error)}`);
        this.down = true;
      },
    );
  }

  private redis(): IORedis {
    if (this.connection) return this.connection;
    const connection = redisClient(this.options.redisUrl, { maxRetriesPerRequest: 1, lazyConnect: false });
    connection.on('error', () => undefined); // reported by the failed command
    this.connection = connection;
    return connection;
  }

  private key(slot: string): string {
    return `${this.options.prefix}:provider-health:${slot}`;
  }
}

/** Marks the slot's miss answered, keeping its expiry; nothing when there is none. */
const MARK_ANSWERED = `
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
local m = cjson.decode(v)
if m.answered then return 0 end
m.answered = true
redis.call('SET', KEYS[1], cjson.encode(m), 'KEEPTTL')
return 1`;

function parse(value: string | null): (DeadlineMiss & { answered?: boolean }) | null {
  if (value === null) return null;
  try {
    const parsed = Miss.safeParse(JSON.parse(value));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

function withoutAnswered(miss: DeadlineMiss & { answered?: boolean }): DeadlineMiss {
  const { answered: _answered, ...rest } = miss;
  return rest;
}
