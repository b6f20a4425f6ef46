import { loadConfig } from '../../libs/engine';

/**
 * BullMQ worker settings from the environment (read when the processor class is declared).
 *
 * Recovery time versus false alarms: a running job's lock lasts `lockDuration` and is renewed every
 * half of it; every `stalledInterval` one worker looks for active jobs whose lock has expired and
 * moves them back to wait. A killed worker's job is therefore taken by another worker between
 * lockDuration/2 and lockDuration + stalledInterval after the kill (defaults 5 s and 2 s: 2.5–7 s).
 * Shorter means more Redis calls (one renewal per worker every lockDuration/2, one stalled check
 * per stalledInterval) and a smaller margin: an event loop blocked longer than lockDuration loses
 * the lock and the job runs a second attempt elsewhere. The attempt fencing makes that safe (the
 * stale attempt cannot append; outputs already produced are reused), it only costs a repeated call.
 */
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
