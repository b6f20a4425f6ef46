import type { EventStore, MediaStore } from '../../events';
import type { ProviderRegistry } from '../../providers';
import { rebuildRequests, type RebuiltCall } from './request-rebuild';
import type { RuntimeCatalog } from '../catalog/runtime-catalog';
import type { CatalogGenerations } from '../catalog/catalog-generations';
import type { WorldLoader } from '../catalog/world-catalog';
import { EngineError } from '../../errors';
import type { ToolSet } from '../tools';

export interface TurnAudit {
  sessionId: string;
  turnId: string;
  /** Every request of the turn re-derived from the events alone matches what was sent. */
  identical: boolean;
  calls: (Omit<RebuiltCall, 'recorded' | 'rebuilt'> & { recordedBytes: number; firstMismatchAt: number | null })[];
}

export class TurnNotFoundError extends EngineError {
  readonly code = 'TURN_NOT_FOUND';
  readonly category = 'not-found';
  constructor(readonly turnId: string) {
    super(`turn ${turnId} not found`);
  }
}

/** Re-derives every request of one turn from the session's events and compares it with what was sent. */
export async function auditTurn(
  deps: {
    store: EventStore;
    catalog: RuntimeCatalog;
    generations?: CatalogGenerations;
    providers: ProviderRegistry;
    worlds: WorldLoader;
    historyReadLimit: number;
    /** The tools of agent runtimes, as the worker had them (default: none). */
    tools?: ToolSet;
    /** Generated media (the recent images' bytes are read again); none: requests that attached images do not compare. */
    media?: MediaStore;
  },
  sessionId: string,
  turnId: string,
): Promise<TurnAudit> {
  // every event folds, but only this turn's calls compare: the others' request bodies are not read
  const events = await deps.store.readStreamForTurn(sessionId, turnId);
  // a turn is a player input's execution or an activation's (runtime.activated@1)
  const started = (e: (typeof events)[number]) => (e.type === 'player-input.submitted@1' || e.type === 'runtime.activated@1') && e.data.turnId === turnId;
  if (!events.some(started)) throw new TurnNotFoundError(turnId);
  const rebuilt = (
    await rebuildRequests(events, deps.catalog, deps.providers, deps.worlds, {
      historyReadLimit: deps.historyReadLimit,
      generations: deps.generations,
      tools: deps.tools,
      media: deps.media,
      inherited: await deps.store.inheritedStory(sessionId),
      turnId,
    })
  ).filter((c) => c.turnId === turnId);
  const calls = rebuilt.map(({ recorded, rebuilt: again, ...rest }) => ({
    ...rest,
    recordedBytes: Buffer.byteLength(recorded),
    firstMismatchAt: rest.identical ? null : firstMismatch(recorded, again),
  }));
  return { sessionId, turnId, identical: calls.every((c) => c.identical), calls };
}

function firstMismatch(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}
