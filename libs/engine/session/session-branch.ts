import { randomUUID } from 'node:crypto';
import { ConcurrencyError, type EventStore, type IdempotencyRecord, type NewEvent, type ReadModels } from '../../events';
import { ConflictError, NotFoundError } from '../../errors';
import { SessionNotFoundError } from '../errors';
import { preferencesBefore } from '../preferences';
import { appendIdempotent } from './append-idempotent';
import { type IdempotentAnswer, requestHash } from './idempotency';
import { readSessionCreated, type SessionCreated, worldRevisionBefore } from './session-reads';

export interface SessionBranchDeps {
  store: EventStore;
  readModels: ReadModels;
}

export interface BranchSessionRequest {
  tenantId: string;
  /** The parent session. */
  sessionId: string;
  /** The last turn the branch keeps: a turn of the parent's history, or its opening's turn. */
  atTurnId: string;
  /** Who branches (`session.branched@1` `by`): the caller the API authenticated. */
  by: string;
  /** A repeat with the same key and body answers the first branch; see `IdempotencyKeyMismatchError`. */
  idempotencyKey?: string;
}

export interface BranchAnswer {
  /** The new session (the branch). */
  sessionId: string;
  parentSessionId: string;
  atTurnId: string;
}

/** How many times the branch point is read again when the parent moves under the read. */
const MAX_READ_TRIES = 20;

/**
 * Branching a session (`POST /v1/sessions/:id/branch`): a new session whose log starts, in one
 * append, with `session.branched@1 { parentSessionId, atTurnId, parentVersion, rootSessionId, by }`
 * and what makes it a session like its parent as the parent stands at the branch:
 * `session.created@1` with its world (at the revision then in effect), locale, language name,
 * plugins and plugin settings, and `session.preferences-changed@1` with its preferences if it has
 * any. The branch's history, plugin data and summaries are its parent's log up to `parentVersion`
 * without the turns after `atTurnId`, folded into the branch's own read models when
 * `session.branched@1` is applied (the projections). Its requests send its root's prompt cache key.
 */
export class SessionBranchService {
  constructor(private readonly deps: SessionBranchDeps) {}

  /**
   * Refused: another tenant's or an unknown session (404 `SESSION_NOT_FOUND`), a turn not in the
   * parent's history (404 `TURN_NOT_FOUND`), an execution of the parent queued or running (409
   * `TURN_RUNNING`). Under an idempotency key (recorded in the branch's `session.branched@1`, the
   * first event of the stream it is appended to) a repeat answers the first branch and appends nothing.
   */
  async branch(request: BranchSessionRequest): Promise<IdempotentAnswer<BranchAnswer>> {
    const { tenantId, sessionId: parentSessionId, atTurnId, idempotencyKey } = request;
    const parent = await readSessionCreated(this.deps, parentSessionId);
    if (parent === null || parent.tenantId !== tenantId) throw new SessionNotFoundError(parentSessionId);
    const idempotency: IdempotencyRecord | undefined =
      idempotencyKey === undefined
        ? undefined
        : { key: idempotencyKey, requestHash: requestHash({ operation: 'branch-session', sessionId: parentSessionId, body: { atTurnId } }) };
    return appendIdempotent(this.deps.store, {
      tenantId,
      ...(idempotency ? { idempotency } : {}),
      replay: (e) =>
        e.type === 'session.branched@1' && e.data.parentSessionId === parentSessionId
          ? { sessionId: e.streamId, parentSessionId, atTurnId: e.data.atTurnId }
          : null,
      plan: async () => {
        const parentVersion = await this.branchPoint(tenantId, parentSessionId, atTurnId);
        const sessionId = randomUUID();
        const events = await this.branchStart({ parent, parentSessionId, parentVersion, sessionId, atTurnId, by: request.by });
        // a new stream: only a concurrent request with the same key can come first (the next pass answers it)
        return { streamId: sessionId, expectedVersion: 0, events, answer: { sessionId, parentSessionId, atTurnId } };
      },
    });
  }

  /**
   * The parent's stream version the branch reads through, once the turn is in its history and
   * nothing of it runs. Both are checked between two reads of the version that agree: what they
   * saw is the parent's log up to that version (an input or a commit between them reads again).
   */
  private async branchPoint(tenantId: string, parentSessionId: string, atTurnId: string): Promise<number> {
    let version = await this.deps.store.streamVersion(parentSessionId);
    for (let tries = 0; ; tries++) {
      const running = await this.deps.readModels.earliestPendingExecution(tenantId, parentSessionId);
      if (running) {
        throw new ConflictError(
          'TURN_RUNNING',
          `a turn of session ${parentSessionId} is still running (execution ${running.executionId}); branch once it has ended`,
        );
      }
      if (!(await this.deps.readModels.historyHasTurn(tenantId, parentSessionId, atTurnId))) {
        throw new NotFoundError('TURN_NOT_FOUND', `session ${parentSessionId} has no turn ${atTurnId} in its history`);
      }
      const again = await this.deps.store.streamVersion(parentSessionId);
      if (again === version) return version;
      if (tries >= MAX_READ_TRIES) throw new ConcurrencyError(parentSessionId, version, again);
      version = again;
    }
  }

  /** The branch's first events: its origin, then the parent's settings and preferences as they stand at `parentVersion`. */
  private async branchStart(args: {
    parent: SessionCreated;
    parentSessionId: string;
    parentVersion: number;
    sessionId: string;
    atTurnId: string;
    by: string;
  }): Promise<NewEvent[]> {
    const { parent, parentSessionId, parentVersion, sessionId } = args;
    const through = parentVersion + 1;
    const [worldRevision, preferences] = await Promise.all([
      parent.worldRevision === undefined ? undefined : worldRevisionBefore(this.deps, parentSessionId, parent.worldRevision, through),
      preferencesBefore(this.deps.store, parentSessionId, through),
    ]);
    return [
      {
        type: 'session.branched@1',
        data: {
          parentSessionId,
          atTurnId: args.atTurnId,
          parentVersion,
          // a branch of a branch keeps the first ancestor that is not a branch
          rootSessionId: parent.branch?.rootSessionId ?? parentSessionId,
          by: args.by,
        },
      },
      {
        type: 'session.created@1',
        data: {
          sessionId,
          worldId: parent.worldId,
          ...(worldRevision === undefined ? {} : { worldRevision }),
          locale: parent.locale,
          ...(Object.keys(parent.pluginSettings).length > 0 ? { pluginSettings: parent.pluginSettings } : {}),
          ...(parent.plugins === null ? {} : { plugins: [...parent.plugins] }),
          ...(parent.languageName === undefined ? {} : { languageName: parent.languageName }),
        },
      },
      ...(Object.keys(preferences.slots).length > 0 ? [{ type: 'session.preferences-changed@1' as const, data: { preferences } }] : []),
    ];
  }
}
