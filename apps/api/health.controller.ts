import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import type { Engine, QueueHealth } from '../../libs/engine';
import { type DatabaseProbe, probeDatabase, type ProjectionStatus } from '../../libs/events';
import { ENGINE } from './tokens';

export interface HealthReport {
  /**
   * `ok` (200); `degraded` (503) when a projection is stopped at some stream (every other stream
   * goes on); `unavailable` (503) when the database or the queue is down.
   */
  status: 'ok' | 'degraded' | 'unavailable';
  database: DatabaseProbe & { kind: Engine['database']['kind'] };
  queue: QueueHealth;
  /** Each projection's position, lag and state; empty while the database cannot be read. */
  projections: ProjectionStatus[];
}

/** `GET /health`: each dependency probed in bounded time; 200 when all are up, 503 otherwise. */
@Controller('health')
export class HealthController {
  constructor(@Inject(ENGINE) private readonly engine: Engine) {}

  @Get()
  async health(@Res({ passthrough: true }) res: Response): Promise<HealthReport> {
    const [database, queue] = await Promise.all([probeDatabase(this.engine.database.db), this.engine.queue.health()]);
    const projections = database.ok ? await this.engine.projections.status().catch(() => []) : [];
    const status = !database.ok || !queue.ok ? 'unavailable' : projections.some((p) => p.state === 'failing') ? 'degraded' : 'ok';
    res.status(status === 'ok' ? 200 : 503);
    return { status, database: { kind: this.engine.database.kind, ...database }, queue, projections };
  }

  /** `GET /health/live`: the process answers (for liveness probes; says nothing of dependencies). */
  @Get('live')
  live() {
    return { status: 'ok' };
  }
}
