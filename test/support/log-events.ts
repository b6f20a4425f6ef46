import type { NewEvent } from '../../libs/events';

/** A session's first event (no world, English). */
export const sessionCreated = (sessionId: string): NewEvent => ({ type: 'session.created@1', data: { sessionId, worldId: null, locale: 'en' } });

/**
 * The narrator's compaction barrier passed with nothing to do: an event no inline projection
 * handles, so each append of one alone sends the same statement text.
 */
export const barrierPassed = (executionId: string, options: { turnId?: string; estimatedTokens?: number } = {}): NewEvent => ({
  type: 'compaction.barrier-passed@1',
  data: {
    executionId,
    turnId: options.turnId ?? 't1',
    attempt: 1,
    pluginId: 'narrator',
    runtimeId: 'story',
    estimatedTokens: options.estimatedTokens ?? 10,
    triggerWindow: 100,
    thresholdTokens: 75,
    outcome: 'nothing',
  },
});
