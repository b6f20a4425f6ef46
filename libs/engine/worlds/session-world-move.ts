import { ConcurrencyError, type EventStore, IdempotencyKeyTakenError, type WorldReads } from '../../events';
import { ConflictError, InvalidInputError } from '../../errors';
import { SessionNotFoundError } from '../errors';
import { type IdempotentAnswer, priorAnswer, requestHash } from '../session/idempotency';
import { readSessionCreated, worldRevisionBefore } from '../session/session-reads';

export interface MoveSessionWorldRequest {
  tenantId: string;
  sessionId: string;
  /** The revision to move to; default the world's current one. */
  revision?: number;
  idempotencyKey?: string;
}

/** How many times the append is tried again when other appends to the session come first. */
const MAX_APPEND_TRIES = 20;

/**
 * Moves a session on purpose to a newer revision of its (tenant's) world, recorded as
 * `session.world-revised@1`: executions whose input comes after it read that revision, earlier
 * ones (and their audit) keep theirs. A built-in world has one revision (409 `WORLD_READ_ONLY`);
 * the same or an older revision is a 409 `WORLD_REVISION_NOT_NEWER`; an unknown one a 400 naming `revision`.
 */
export async function moveSessionWorld(
  deps: { store: EventStore; reads: WorldReads },
  request: MoveSessionWorldRequest,
): Promise<IdempotentAnswer<{ worldId: string; revision: number; fromRevision: number }>> {
  const { tenantId, sessionId } = request;
  const created = await readSessionCreated(deps, sessionId);
  if (created === null || created.tenantId !== tenantId) throw new SessionNotFoundError(sessionId);
  const { worldId, worldRevision } = created;
  if (worldId === null) throw new ConflictError('SESSION_HAS_NO_WORLD', `session ${sessionId} runs no world`);
  if (worldRevision === undefined) throw new ConflictError('WORLD_READ_ONLY', `session ${sessionId} runs the built-in world ${worldId}, which has one revision`);
  const idempotency =
    request.idempotencyKey === undefined
      ? undefined
      : { key: request.idempotencyKey, requestHash: requestHash({ operation: 'move-world-revision', sessionId, body: { revision: request.revision ?? null } }) };
  for (let tries = 0; ; tries++) {
    if (idempotency) {
      const prior = await priorAnswer(deps.store, tenantId, idempotency, (e) =>
        e.type === 'session.world-revised@1' && e.streamId === sessionId ? { worldId, revision: e.data.toRevision, fromRevision: e.data.fromRevision } : null,
      );
      if (prior) return { answer: prior, replayed: true };
    }
    const version = await deps.store.streamVersion(sessionId);
    const from = await worldRevisionBefore(deps, sessionId, worldRevision, version + 1);
    const current = await deps.reads.current(tenantId, worldId);
    const to = request.revision ?? current?.revision ?? from;
    if (current === null || to > current.revision) throw new InvalidInputError([{ path: 'revision', message: `world ${worldId} has no revision ${to}` }], 'UNKNOWN_WORLD_REVISION');
    if (to <= from) throw new ConflictError('WORLD_REVISION_NOT_NEWER', `session ${sessionId} already runs revision ${from} of world ${worldId}; name a newer one`);
    try {
      await deps.store.append({
        tenantId,
        streamId: sessionId,
        expectedVersion: version,
        events: [{ type: 'session.world-revised@1', data: { worldId, fromRevision: from, toRevision: to } }],
        idempotency,
      });
      return { answer: { worldId, revision: to, fromRevision: from }, replayed: false };
    } catch (error) {
      const retry = error instanceof ConcurrencyError || error instanceof IdempotencyKeyTakenError;
      if (!retry || tries >= MAX_APPEND_TRIES) throw error;
    }
  }
}
