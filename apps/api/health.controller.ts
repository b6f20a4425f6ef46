import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import type { Engine, QueueHealth } from '../../libs/engine';
import { type DatabaseProbe, DATABASE_PROBE_TIMEOUT_MS, probeDatabase, type ProjectionStatus, withinMs } from '../../libs/events';
import { ENGINE } from './tokens';

export interface HealthReport {
  /**
   * `ok` (200); `degraded` (503) when a projection is stopped at some stream (every other stream
   * goes on); `unavailable` (503) when the database or the queue is down.
   */
  status: 'ok' | 'degraded' | 'unavailable';
  database: DatabaseProbe & { kind: Engine['database']['kind'] };
  queue: QueueHealth;
  /**
   * Each projection's position, lag and state, and where it stopped (global position, event type,
   * since). `/health` needs no key, so no session, tenant or error text appears here: the log line
   * of each failure names them. Null while the projections cannot be read (then `degraded`).
   */
  projections: PublicProjectionStatus[] | null;
}

type PublicProjectionStatus = Omit<ProjectionStatus, 'failures'> & {
  failures: Pick<ProjectionStatus['failures'][number], 'globalPosition' | 'eventType' | 'attempts' | 'since' | 'nextRetryAt'>[];
};

const withoutTenantData = (p: ProjectionStatus): PublicProjectionStatus => ({
  ...p,
  failures: p.failures.map(({ globalPosition, eventType, attempts, since, nextRetryAt }) => ({ globalPosition, eventType, attempts, since, nextRetryAt })),
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
    const read = this.engine.projections.status().then(
      (all) => all.map(withoutTenantData),
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
