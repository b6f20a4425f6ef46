import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import { type Engine, engineProjections, type QueueHealth } from '../../libs/engine';
import { type DatabaseProbe, probeDatabase, type ProjectionPosition, projectionPositions } from '../../libs/events';
import { ENGINE } from './tokens';

export interface HealthReport {
  /** `unavailable` (HTTP 503) when the database or the queue is down. */
  status: 'ok' | 'unavailable';
  database: DatabaseProbe & { kind: Engine['database']['kind'] };
  queue: QueueHealth;
  projections: ProjectionPosition[];
}

/** `GET /health`: each dependency probed in bounded time; 200 when all are up, 503 otherwise. */
@Controller('health')
export class HealthController {
  constructor(@Inject(ENGINE) private readonly engine: Engine) {}

  @Get()
  async health(@Res({ passthrough: true }) res: Response): Promise<HealthReport> {
    const [database, queue] = await Promise.all([probeDatabase(this.engine.database.db), this.engine.queue.health()]);
    const projections = database.ok ? await this.projections() : [];
    const ok = database.ok && queue.ok;
    res.status(ok ? 200 : 503);
    return { status: ok ? 'ok' : 'unavailable', database: { kind: this.engine.database.kind, ...database }, queue, projections };
  }

  // ---- projections part --------------------------------------------------------------------
  // Checkpoint position and lag behind the log head, read from projection_checkpoints.
  // MERGE POINT: the per-projection state (running / stopped at an event) comes from
  // `ProjectionRunner.status()`, added in parallel; it replaces this read and may also decide
  // `status` (a stopped projection). Unreadable (database down) is an empty list.
  private async projections(): Promise<ProjectionPosition[]> {
    return projectionPositions(
      this.engine.database.db,
      engineProjections.map((p) => p.name),
    ).catch(() => []);
  }
}
