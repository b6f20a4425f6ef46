import { loadConfig } from '../../libs/engine';

/** BullMQ worker settings from the environment (read when the processor class is declared). */
export function workerOptionsFromEnv() {
  const { worker } = loadConfig(process.env);
  return {
    concurrency: worker.concurrency,
    lockDuration: worker.lockDurationMs,
    stalledInterval: worker.stalledIntervalMs,
    // a killed worker's job comes back this many times before BullMQ gives up on it
    maxStalledCount: 10,
  };
}
