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
    return { status: 'ok', database: this.engine.database.kind, queue: this.engine.config.redisUrl ? 'bullmq' : 'in-process' };
  }
}
