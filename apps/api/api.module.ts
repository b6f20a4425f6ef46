import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import type { Engine } from '../../libs/engine';
import { TenantAuthGuard } from './auth.guard';
import { EngineErrorFilter } from './error.filter';
import { ExecutionWaits } from './execution-waits';
import { HealthController } from './health.controller';
import { InspectorController } from './inspector/inspector.controller';
import { DocsController } from './openapi/docs.controller';
import { SessionsController } from './sessions.controller';
import { SessionViewsController } from './session-views.controller';
import { ENGINE } from './tokens';

@Module({})
export class ApiModule {
  static forEngine(engine: Engine): DynamicModule {
    return {
      module: ApiModule,
      controllers: [HealthController, SessionsController, SessionViewsController, DocsController, InspectorController],
      providers: [{ provide: ENGINE, useValue: engine }, TenantAuthGuard, ExecutionWaits, { provide: APP_FILTER, useClass: EngineErrorFilter }],
    };
  }
}
