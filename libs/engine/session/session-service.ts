import { randomUUID } from 'node:crypto';
import { type EventData, type EventStore, hasEnded, type NewEvent, type ReadModels, StreamTenantMismatchError } from '../../events';
import { InvalidInputError } from '../../errors';
import { canonicalLocaleTag, languageNameOf, type LoadedWorld } from '../../plugins-sdk';
import { SessionNotFoundError } from '../errors';
import { loggedWorldId } from '../catalog/world-catalog';
import type { Logger } from '../logging/logger';
import type { PluginSettings } from '../plugin-host/plugin-settings';
import type { SessionPluginResolver } from './session-plugins';
import { chooseOpening, renderOpening } from './session-opening';
import { appendIdempotent } from './append-idempotent';
import { IdempotencyKeyMismatchError, type IdempotentAnswer, requestHash } from './idempotency';
import { queueUnavailable, type TurnJob, type TurnProducer } from '../queue';
import { type MidTurnAnswer, type MidTurnRequest, submitMidTurnMessage } from './mid-turn';
import { type ChangePreferencesRequest, changeSessionPreferences, normalizePreferences, type SessionPreferences } from '../preferences';

export interface SessionServiceDeps {
  store: EventStore;
  queue: TurnProducer;
  readModels: ReadModels;
  logger: Logger;
  /** Resolves a new session's plugin list (the request's, else its world's); none: nothing recorded. */
  plugins?: SessionPluginResolver;
  /** The world a new session starts on (a built-in one, or the tenant's current revision); none: no world is checked. */
  worlds?: SessionWorldResolver;
}

/**
 * Where `SessionService.createSession` finds the world a session is created in: a built-in file
 * world (no revision), or the tenant's world at its current revision (recorded with the session).
 * Unknown is a `WorldNotFoundError` (404), archived a `WorldArchivedError` (409).
 */
export interface SessionWorldResolver {
  /** The world, and its id as the log spells it (what `session.created@1` records). */
  forNewSession(tenantId: string, worldId: string): Promise<{ worldId: string; world: LoadedWorld; revision?: number }>;
}

export interface CreateSessionRequest {
  tenantId: string;
  worldId?: string;
  /** A BCP 47 tag; stored in its canonical form. Default `en`. */
  locale?: string;
  /** The player's configuration of plugins (validated by the caller against the loaded plugins' `contributes.settings`). */
  pluginSettings?: PluginSettings;
  /** The plugins the session runs (plugin ids); default the world's list, else the plugins enabled by default. */
  plugins?: readonly string[];
  /**
   * The player's preferences per model slot (validated by the caller: slot names against
   * `llm.toml`'s); set: recorded as `session.preferences-changed@1` right after `session.created@1`.
   */
  preferences?: SessionPreferences;
  /**
   * Which of the world's openings the session opens with (an index into its `openings`), recorded as
   * `session.opened@1` in the same append as `session.created@1`: turn 0's story message. Absent:
   * the first when the world has openings, else none; null: none. See `chooseOpening`.
   */
  opening?: number | null;
  /** A repeat with the same key and body answers the first session; see `IdempotencyKeyMismatchError`. */
  idempotencyKey?: string;
}

export interface SubmitInputRequest {
  tenantId: string;
  sessionId: string;
  text: string;
  /** The form the player filled in with this input (a JSON object; `player.lastFormValues`). */
  formValues?: PlayerInputFormValues;
  idempotencyKey?: string;
}

export type PlayerInputFormValues = NonNullable<EventData<'player-input.submitted@1'>['formValues']>;

/** Use cases behind the API: create a session, submit a player input. */
export class SessionService {
  constructor(private readonly deps: SessionServiceDeps) {}

  /**
   * Appends `session.created@1`, with the session's opening (`session.opened@1`, rendered once
   * here) in the same append when it opens with one. Under an idempotency key, the key is recorded
   * in that event: a repeat (same key and body) answers the session the first request created and
   * appends nothing.
   */
  async createSession(request: CreateSessionRequest): Promise<IdempotentAnswer<{ id: string }>> {
    const { tenantId, idempotencyKey } = request;
    const locale = canonicalLocaleTag(request.locale ?? 'en');
    if (locale === null) throw new InvalidInputError([{ path: 'locale', message: 'must be a well-formed BCP 47 language tag' }]);
    const pluginSettings = request.pluginSettings && Object.keys(request.pluginSettings).length > 0 ? request.pluginSettings : undefined;
    const preferences = request.preferences ? normalizePreferences(request.preferences) : undefined;
    const setPreferences = preferences && Object.keys(preferences.slots).length > 0 ? preferences : undefined;
    // the request as sent (not what it resolves to: a retry after the world changed or was archived still finds its session)
    const idempotency =
      idempotencyKey === undefined
        ? undefined
        : {
            key: idempotencyKey,
            requestHash: requestHash({
              operation: 'create-session',
              sessionId: null,
              body: {
                worldId: request.worldId === undefined ? null : loggedWorldId(request.worldId),
                locale,
                ...(pluginSettings ? { pluginSettings } : {}),
                ...(request.plugins ? { plugins: [...new Set(request.plugins)].sort() } : {}),
                ...(setPreferences ? { preferences: setPreferences } : {}),
                ...(request.opening !== undefined ? { opening: request.opening } : {}),
              },
            }),
          };
    // the world as it is now, resolved once and after the key was looked up (a repeat answers even when the world has changed
    // since): a tenant's world is recorded with its revision (an edit later changes new sessions only)
    const resolve = async () => {
      const started = request.worldId !== undefined && this.deps.worlds ? await this.deps.worlds.forNewSession(tenantId, request.worldId) : null;
      const world = started?.world ?? null;
      const plugins = this.deps.plugins?.({ world, ...(request.plugins ? { requested: request.plugins } : {}) });
      return {
        worldId: started?.worldId ?? request.worldId ?? null,
        ...(started?.revision === undefined ? {} : { worldRevision: started.revision }),
        world,
        openingIndex: chooseOpening(world, request.opening),
        recorded: { ...(pluginSettings ? { pluginSettings } : {}), ...(plugins ? { plugins } : {}) },
      };
    };
    let resolved: Awaited<ReturnType<typeof resolve>> | undefined;
    return appendIdempotent(this.deps.store, {
      tenantId,
      ...(idempotency ? { idempotency } : {}),
      replay: (e) => (e.type === 'session.created@1' ? { id: e.data.sessionId } : null),
      plan: async () => {
        resolved ??= await resolve();
        const { worldId, worldRevision, world, openingIndex, recorded } = resolved;
        const sessionId = randomUUID();
        // rendered once, with this session's id: replay and audit read the recorded text
        const opening = world && openingIndex !== null ? renderOpening({ world, index: openingIndex, sessionId, locale }) : null;
        // the language's name is derived from the tag (not part of the request's hash), recorded to keep its bytes
        const events: NewEvent[] = [
          {
            type: 'session.created@1',
            data: { sessionId, worldId, ...(worldRevision === undefined ? {} : { worldRevision }), locale, ...recorded, languageName: languageNameOf(locale) },
          },
          ...(opening ? [{ type: 'session.opened@1' as const, data: opening }] : []),
          ...(setPreferences ? [{ type: 'session.preferences-changed@1' as const, data: { preferences: setPreferences } }] : []),
        ];
        return { streamId: sessionId, expectedVersion: 0, events, answer: { id: sessionId } };
      },
    });
  }

  /** True when the session exists and belongs to the tenant. */
  async owns(tenantId: string, sessionId: string): Promise<boolean> {
    return (await this.deps.store.streamTenant(sessionId)) === tenantId;
  }

  /**
   * Appends the input (retrying on concurrent appends to the same session), then enqueues its
   * turn job when it is the session's earliest pending execution (else the end of the one before
   * it hands off to it, see `handOff`). The append's own statement says whether one is pending
   * before it (`earliestPending`): its snapshot holds every append to the session before its lock
   * (an append in between fails it, and it is tried again), and the `executions` view is written
   * in those appends' transactions, so it decides as `enqueueSessionHead`'s read after the commit would. When the queue is known to be down, nothing is appended
   * and the caller gets `UnavailableError` (retry later). The input is durable once appended: if
   * the enqueue fails after that (bounded wait), the turn is still accepted and the sweeper enqueues it.
   * Under an idempotency key, the key is recorded in the input's event (one row, one
   * transaction): a repeat answers the first execution and appends nothing.
   */
  async submitInput(request: SubmitInputRequest): Promise<IdempotentAnswer<{ executionId: string; turnId: string }>> {
    const { tenantId, sessionId, text, formValues, idempotencyKey } = request;
    const idempotency =
      idempotencyKey === undefined
        ? undefined
        : { key: idempotencyKey, requestHash: requestHash({ operation: 'submit-input', sessionId, body: formValues ? { text, formValues } : { text } }) };
    const executionId = randomUUID();
    const turnId = randomUUID();
    const event: NewEvent = {
      type: 'player-input.submitted@1',
      data: { executionId, turnId, messageId: randomUUID(), text, ...(formValues ? { formValues } : {}) },
    };
    let pendingBefore: string | null | undefined;
    const result = await appendIdempotent(this.deps.store, {
      tenantId,
      ...(idempotency ? { idempotency } : {}),
      replay: (e) => (e.type === 'player-input.submitted@1' && e.streamId === sessionId ? { executionId: e.data.executionId, turnId: e.data.turnId } : null),
      plan: async () => {
        // a repeat is answered before this even with the queue away; a new input is not recorded then
        if (!this.deps.queue.isAvailable()) throw queueUnavailable('the turn queue is unavailable; nothing was recorded, retry later');
        // an input depends on nothing the log holds: appended after its head, whatever it is, and
        // only to the tenant's existing session (the append's own statement checks both)
        // the append's statement also says whether an earlier execution of the session is pending (the enqueue decision)
        return {
          streamId: sessionId,
          expectedVersion: 'head',
          events: [event],
          answer: { executionId, turnId },
          earliestPending: true,
          appended: (r) => (pendingBefore = r.earliestPending),
        };
      },
    }).catch(async (error: unknown) => {
      if (error instanceof StreamTenantMismatchError) throw new SessionNotFoundError(sessionId);
      // a key used for another request: unless the session is the tenant's, the answer is still 404 (a
      // key never tells whether another tenant's session exists); read only on this path
      if (error instanceof IdempotencyKeyMismatchError && (await this.deps.store.streamHead(sessionId)).tenantId !== tenantId) {
        throw new SessionNotFoundError(sessionId);
      }
      throw error;
    });
    if (result.replayed) await this.resumeIfUnfinished({ tenantId, sessionId, executionId: result.answer.executionId });
    // none pending before the input (read by its append's statement, under the session's lock): it is the session's head
    else if (pendingBefore === null) await this.enqueue({ tenantId, sessionId, executionId });
    else if (pendingBefore === undefined) await this.enqueueSessionHead({ tenantId, sessionId, executionId });
    return result;
  }

  /**
   * A message the player adds to the session's running turn (`midTurn: true`): joins it instead
   * of queueing a turn, or `NoRunningTurnError` (409) when none is running (see `submitMidTurnMessage`).
   */
  submitMidTurn(request: MidTurnRequest): Promise<IdempotentAnswer<MidTurnAnswer>> {
    return submitMidTurnMessage(this.deps, request);
  }

  /**
   * Changes the player's preferences (`PATCH /v1/sessions/:id/preferences`), recorded as
   * `session.preferences-changed@1`: the turns accepted after it use them (see `changeSessionPreferences`).
   */
  changePreferences(request: ChangePreferencesRequest): Promise<{ preferences: SessionPreferences }> {
    return changeSessionPreferences(this.deps, request);
  }

  /**
   * Enqueues the session's earliest pending execution when it is `job`'s (read after the input's
   * append). Racing the end of the execution before it is safe: that end is appended at the
   * version its worker's journal was read at (so an input appended first is in the journal its
   * hand-off reads), this reads after the input's commit, so whichever of the two commits comes
   * second sees the other, and at least one side enqueues this execution (both may: the enqueue is
   * idempotent). The `executions` view is applied in each append's transaction,
   * so the read sees every commit before it.
   */
  private async enqueueSessionHead(job: TurnJob) {
    const head = await this.deps.readModels.earliestPendingExecution(job.tenantId, job.sessionId);
    if (head === null || head.executionId === job.executionId) await this.enqueue(job);
  }

  /**
   * A retried request may come after a crash between the append and the enqueue: unless the
   * execution has finished, enqueue the session's earliest pending execution (this one, or one
   * before it whose end hands off to it; enqueueing is idempotent per execution).
   */
  private async resumeIfUnfinished(job: TurnJob) {
    const view = await this.deps.readModels.execution(job.tenantId, job.executionId);
    if (view && hasEnded(view)) return;
    const head = await this.deps.readModels.earliestPendingExecution(job.tenantId, job.sessionId);
    await this.enqueue(head ? { ...job, executionId: head.executionId } : job);
  }

  private async enqueue(job: TurnJob) {
    try {
      await this.deps.queue.enqueue(job);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.deps.logger.warn(`enqueue of execution ${job.executionId} failed (${reason}); the input is recorded and the sweeper will enqueue it`);
    }
  }
}
