export { EngineMetrics, MAX_ERROR_CODES, timedAdapter } from './engine-metrics';
export type { EngineMetricsOptions, MetricsSources, QueueDepthSample } from './engine-metrics';
export { serveMetrics } from './http';
export type { MetricsServer } from './http';
export { turnTimeline, unionLength, NO_STAGE } from './turn-timeline';
export type { TurnTimeline, TimelineEvent } from './turn-timeline';
export { installIoCounters, ioCounts, registerIoCounters } from './io-counts';
export type { IoCountsSnapshot } from './io-counts';
