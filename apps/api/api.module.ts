import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import type { Engine } from '../../libs/engine';
import { TenantAuthGuard } from './auth.guard';
import { EngineErrorFilter } from './error.filter';
import { ExecutionWaits } from './execution-waits';
import { HealthController } from './health.controller';
import { InspectorController } from './inspector/inspector.controller';
import { LimitsController } from './limits/limits.controller';
import { DocsController } from './openapi/docs.controller';
import { SessionsController } from './sessions.controller';
import { WorldsController } from './worlds.controller';
import { WorldGenerationController } from './world-generation/world-generation.controller';
import { WorldGenerationEvents } from './world-generation/world-generation-events';
import { SessionViewsController } from './session-views.controller';
import { SessionEventsController } from './session-events/session-events.controller';
import { DEFAULT_SESSION_EVENTS_TIMINGS, SESSION_EVENTS_TIMINGS, SessionEvents, type SessionEventsTimings } from './session-events/session-events.service';
import { ENGINE } from './tokens';
import { UsageController } from './usage.controller';

@Module({})
export class ApiModule {
  static forEngine(engine: Engine, options: { sessionEvents?: SessionEventsTimings } = {}): DynamicModule {
    return {
      module: ApiModule,
      controllers: [
        HealthController,
        SessionsController,
        WorldGenerationController,
        WorldsController,
        SessionViewsController,
        SessionEventsController,
        DocsController,
        InspectorController,
        LimitsController,
        UsageController,
      ],
      providers: [
        { provide: ENGINE, useValue: engine },
        { provide: SESSION_EVENTS_TIMINGS, useValue: options.sessionEvents ?? DEFAULT_SESSION_EVENTS_TIMINGS },
        SessionEvents,
        WorldGenerationEvents,
        TenantAuthGuard,
        ExecutionWaits,
        { provide: APP_FILTER, useClass: EngineErrorFilter },
      ],
    };
  }
}
