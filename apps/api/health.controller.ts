import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import type { Engine, QueueHealth } from '../../libs/engine';
import { type AsyncProjectionStatus, type DatabaseProbe, DATABASE_PROBE_TIMEOUT_MS, probeDatabase, type ProjectionStatus, withinMs } from '../../libs/events';
import { ENGINE } from './tokens';

export interface HealthReport {
  /**
   * `ok` (200); `degraded` (503) when a projection is stopped somewhere (a stream of a turn-read
   * view, or a shard of an async projection; everything else goes on); `unavailable` (503) when
   * the database or the queue is down.
   */
  status: 'ok' | 'degraded' | 'unavailable';
  database: DatabaseProbe & { kind: Engine['database']['kind'] };
  queue: QueueHealth;
  /**
   * Each projection's state and lag, and where it stopped. `/health` needs no key, so no session,
   * tenant or error text appears here (the log line of each failure names them): for the views a
   * turn reads, position, event type, attempts; for the async projections, shard, cursor position,
   * failed position, event type and error code. Null while they cannot be read (then `degraded`).
   */
  projections: PublicProjectionStatus[] | null;
}

/** A view a turn reads (transitional catch-up runner): where it stopped, per stream, without the stream. */
type PublicTurnReadStatus = Omit<ProjectionStatus, 'failures'> & {
  kind: 'turn-read';
  failures: Pick<ProjectionStatus['failures'][number], 'globalPosition' | 'eventType' | 'attempts' | 'since' | 'nextRetryAt'>[];
};

/** An async projection: its failing shards only (the cursors of every shard are in the projector's status). */
interface PublicAsyncStatus {
  kind: 'async';
  name: string;
  state: AsyncProjectionStatus['state'];
  lag: number;
  /** Failing shards. */
  failing: number;
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
}

type PublicProjectionStatus = PublicTurnReadStatus | PublicAsyncStatus;

const turnReadWithoutTenantData = (p: ProjectionStatus): PublicTurnReadStatus => ({
  kind: 'turn-read',
  ...p,
  failures: p.failures.map(({ globalPosition, eventType, attempts, since, nextRetryAt }) => ({ globalPosition, eventType, attempts, since, nextRetryAt })),
});

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
});

/** `GET /health`: each dependency probed in bounded time; 200 when all are up, 503 otherwise. */
@Controller('health')
export class HealthController {
  constructor(@Inject(ENGINE) private readonly engine: Engine) {}

  @Get()
  async health(@Res({ passthrough: true }) res: Response): Promise<HealthReport> {
    const [database, queue] = await Promise.all([probeDatabase(this.engine.database.db), this.engine.queue.health()]);
    const projections = database.ok ? await this.projections() : null;
    const status = !database.ok || !queue.ok ? 'unavailable' : projections === null || projections.some((p) => p.state === 'failing') ? 'degraded' : 'ok';
    res.status(status === 'ok' ? 200 : 503);
    return { status, database: { kind: this.engine.database.kind, ...database }, queue, projections };
  }

  /** The projections' status within the probe's bound, or null when it cannot be read in time. */
  private async projections(): Promise<PublicProjectionStatus[] | null> {
    const read = Promise.all([this.engine.projections.status(), this.engine.projector.status()]).then(
      ([turnReads, async]) => [...turnReads.map(turnReadWithoutTenantData), ...async.map(asyncWithoutTenantData)],
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
