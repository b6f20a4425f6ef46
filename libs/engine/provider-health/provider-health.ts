import type { CallDeadlineListener, DeadlinePhase, ProviderDeadlineError } from '../../providers';

/** How long a slot stays `slow` after a call missed its deadline, unless a later call of it answers first. */
export const SLOW_WINDOW_MS = 10 * 60_000;

/** The last call of a slot that missed its deadline (`/health`: no tenant, session or model text in it). */
export interface DeadlineMiss {
  /** When it failed (ISO time of the process that saw it). */
  at: string;
  protocol: string;
  phase: DeadlinePhase;
  deadlineMs: number;
  code: string;
}

/** One model slot in `/health`: `slow` while its last deadline miss is recent and no call of it answered since. */
export interface ProviderSlotHealth {
  slot: string;
  state: 'ok' | 'slow';
  lastDeadlineMiss: DeadlineMiss | null;
}

/**
 * Which model slots missed a call deadline lately: the workers tell it (`listener`, given to the
 * provider registry), `/health` reads it (`report`). In process for the embedded default; in Redis
 * when API and workers are separate processes (`RedisProviderHealth`).
 */
export interface ProviderHealth {
  readonly listener: CallDeadlineListener;
  /** The named slots' state, in their order; rejects when it cannot be read. */
  report(slots: readonly string[]): Promise<ProviderSlotHealth[]>;
  close(): Promise<void>;
}

export function deadlineMiss(failure: ProviderDeadlineError, now = new Date()): DeadlineMiss {
  return { at: now.toISOString(), protocol: failure.protocol, phase: failure.phase, deadlineMs: failure.deadlineMs, code: failure.code };
}

/** A slot's health from its last miss (null: none, or cleared by an answered call). */
export function slotHealth(slot: string, miss: DeadlineMiss | null, now = Date.now()): ProviderSlotHealth {
  const slow = miss !== null && now - Date.parse(miss.at) < SLOW_WINDOW_MS;
  return { slot, state: slow ? 'slow' : 'ok', lastDeadlineMiss: miss };
}

/** The embedded default's: API and worker are one process. An answered call clears its slot's miss. */
export class InProcessProviderHealth implements ProviderHealth {
  private readonly misses = new Map<string, DeadlineMiss>();
  private readonly cleared = new Set<string>();

  readonly listener: CallDeadlineListener = {
    missed: (failure) => {
      this.misses.set(failure.slot, deadlineMiss(failure));
      this.cleared.delete(failure.slot);
    },
    answered: (slot) => {
      if (this.misses.has(slot)) this.cleared.add(slot);
    },
  };

  report(slots: readonly string[]): Promise<ProviderSlotHealth[]> {
    return Promise.resolve(slots.map((slot) => this.slot(slot)));
  }

  private slot(slot: string): ProviderSlotHealth {
    const miss = this.misses.get(slot) ?? null;
    const health = slotHealth(slot, miss);
    return this.cleared.has(slot) ? { ...health, state: 'ok' } : health;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
