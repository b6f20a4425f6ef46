import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import type { Engine, ProviderSlotHealth, QueueHealth } from '../../libs/engine';
import { type AsyncProjectionStatus, type DatabaseProbe, DATABASE_PROBE_TIMEOUT_MS, probeDatabase, withinMs } from '../../libs/events';
import { ENGINE } from './tokens';

export interface HealthReport {
  /**
   * `ok` (200); `degraded` (503) when a shard of an async projection is stopped, it quarantined an
   * event no operator has acknowledged yet, or a model slot is `slow` (everything else, turns included,
   * goes on); `unavailable` (503) when the database or the queue is down.
   */
  status: 'ok' | 'degraded' | 'unavailable';
  database: DatabaseProbe & { kind: Engine['database']['kind'] };
  queue: QueueHealth;
  /**
   * Each projection's state and lag, and where it stopped. `/health` needs no key, so no session,
   * tenant or error text appears here (the log line of each failure names them): shard, cursor
   * position, failed position, event type and error code. The views a turn reads are applied inline
   * with each append (never behind, never stopped). Null while they cannot be read (then `degraded`).
   */
  projections: PublicAsyncStatus[] | null;
  /**
   * Each model slot of `llm.toml`: `slow` for 10 minutes after one of its calls missed a deadline
   * (`PROVIDER_DEADLINE`: no first byte, a stream gone quiet, no whole answer), unless a later call
   * of it answered. `lastDeadlineMiss`: when, which protocol, which deadline and how long it was.
   * Null while it cannot be read (then `degraded`).
   */
  providers: ProviderSlotHealth[] | null;
}

/** An async projection: its failing shards only (the cursors of every shard are in the projector's status). */
export interface PublicAsyncStatus {
  kind: 'async';
  name: string;
  state: AsyncProjectionStatus['state'];
  lag: number;
  /** Failing shards. */
  failing: number;
  /** How many quarantined events of it no operator has acknowledged (and no replay applied): all of them, where `quarantined` lists the newest 20. */
  quarantinedOpen: number;
  failures: {
    shard: number;
    /** Global position of the shard's cursor (the last event it applied). */
    position: number;
    /** Global position of the event it stopped at. */
    globalPosition: number;
    eventType: string;
    errorCode: string;
    attempts: number;
    since: string;
    nextRetryAt: string | null;
  }[];
  /**
   * Events it skipped after failing to apply them `COVEL_PROJECTION_QUARANTINE_AFTER` times, not yet
   * acknowledged by an operator (`POST /admin/quarantine/:id/ack`, `npm run quarantine -- --ack <id>`):
   * while there is one, `/health` is `degraded`. No tenant, session or error text (the operator's list has them).
   * The newest 20 at most; `quarantinedOpen` counts them all.
   */
  quarantined: {
    /** The record's id (for the acknowledgement). */
    id: string;
    shard: number;
    globalPosition: number;
    eventType: string;
    errorCode: string;
    attempts: number;
    quarantinedAt: string;
  }[];
}

const asyncWithoutTenantData = (p: AsyncProjectionStatus): PublicAsyncStatus => ({
  kind: 'async',
  name: p.name,
  state: p.state,
  lag: p.lag,
  failing: p.failing,
  failures: p.shards.flatMap((s) =>
    s.failure
      ? [
          {
            shard: s.shard,
            position: s.cursor.globalPosition,
            globalPosition: s.failure.globalPosition,
            eventType: s.failure.eventType,
            errorCode: s.failure.errorCode,
            attempts: s.failure.attempts,
            since: s.failure.since,
            nextRetryAt: s.failure.nextRetryAt,
          },
        ]
      : [],
  ),
  quarantinedOpen: p.quarantinedOpen,
  quarantined: p.quarantined.map((q) => ({
    id: q.id,
    shard: q.shard,
    globalPosition: q.globalPosition,
    eventType: q.eventType,
    errorCode: q.errorCode,
    attempts: q.attempts,
    quarantinedAt: q.quarantinedAt,
  })),
});

/** `GET /health`: each dependency probed in bounded time; 200 when all are up, 503 otherwise. */
@Controller('health')
export class HealthController {
  constructor(@Inject(ENGINE) private readonly engine: Engine) {}

  @Get()
  async health(@Res({ passthrough: true }) res: Response): Promise<HealthReport> {
    const [database, queue] = await Promise.all([probeDatabase(this.engine.database.db), this.engine.queue.health()]);
    const [projections, providers] = await Promise.all([database.ok ? this.projections() : null, this.providers()]);
    const degraded =
      projections === null ||
      projections.some((p) => p.state === 'failing' || p.quarantinedOpen > 0) ||
      providers === null ||
      providers.some((p) => p.state === 'slow');
    const status = !database.ok || !queue.ok ? 'unavailable' : degraded ? 'degraded' : 'ok';
    res.status(status === 'ok' ? 200 : 503);
    return { status, database: { kind: this.engine.database.kind, ...database }, queue, projections, providers };
  }

  /** The model slots' health within the probe's bound, or null when it cannot be read in time. */
  private async providers(): Promise<ProviderSlotHealth[] | null> {
    const read = this.engine.providerHealth.report(Object.keys(this.engine.providers.config.slots)).catch(() => null);
    return withinMs(read, DATABASE_PROBE_TIMEOUT_MS, null);
  }

  /** The projections' status within the probe's bound, or null when it cannot be read in time. */
  private async projections(): Promise<PublicAsyncStatus[] | null> {
    const read = this.engine.projector.status().then(
      (async) => async.map(asyncWithoutTenantData),
      () => null,
    );
    return withinMs(read, DATABASE_PROBE_TIMEOUT_MS, null);
  }

  /** `GET /health/live`: the process answers (for liveness probes; says nothing of dependencies). */
  @Get('live')
  live() {
    return { status: 'ok' };
  }
}
