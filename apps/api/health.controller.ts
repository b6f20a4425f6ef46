import { Controller, Get, Inject } from '@nestjs/common';
import { sql } from 'kysely';
import type { Engine } from '../../libs/engine';
import { ENGINE } from './tokens';

@Controller('health')
export class HealthController {
  constructor(@Inject(ENGINE) private readonly engine: Engine) {}

  @Get()
  async health() {
    await sql`select 1`.execute(this.engine.database.db);
    // a projection stopped at some stream is 'degraded', not down: every other stream goes on
    const projections = (await this.engine.projections.status()).map((p) => ({
      name: p.name,
      state: p.state,
      position: p.position,
      lag: p.lag,
      failing: p.failing,
      failures: p.failures.map((f) => ({
        streamId: f.streamId,
        globalPosition: f.globalPosition,
        eventType: f.eventType,
        error: f.error,
        attempts: f.attempts,
        since: f.since,
      })),
    }));
    return {
      status: projections.some((p) => p.state === 'failing') ? 'degraded' : 'ok',
      database: this.engine.database.kind,
      queue: this.engine.config.redisUrl ? 'bullmq' : 'in-process',
      projections,
    };
  }
}
