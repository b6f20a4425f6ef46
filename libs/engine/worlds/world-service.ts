import { randomUUID } from 'node:crypto';
import { ConcurrencyError, type EventStore, IdempotencyKeyTakenError, type WorldProvenance, type WorldReads, type WorldRow } from '../../events';
import type { LoadedWorld, WorldDocument } from '../../plugins-sdk';
import { loggedWorldId, TENANT_WORLD_ID, type WorldCatalog, type WorldLoader, WorldNotFoundError, type WorldRef } from '../catalog/world-catalog';
import { type IdempotentAnswer, type IdempotentOperation, priorAnswer, requestHash } from '../session/idempotency';
import { WorldArchivedError, WorldReadOnlyError, WorldRevisionMismatchError, WorldRevisionRequiredError } from './errors';
import { applyMergePatch } from './merge-patch';
import { decodeWorldCursor, encodeWorldCursor } from './world-cursor';
import { checkWorldJson, validWorldDocument } from './world-document';
import { WorldRevisions } from './world-revisions';
import { exportedWorld, importedWorld, type WorldExportFormat, type WorldFile } from './world-files';
import { type MoveSessionWorldRequest, moveSessionWorld } from './session-world-move';
import { builtInWorldView, type WorldSummaryView, type WorldView, worldListSummary, worldSummary, worldView } from './world-views';

export interface WorldServiceDeps {
  store: EventStore;
  reads: WorldReads;
  /** The deployment's built-in worlds (`worlds/<id>/WORLD.md`): listed to every tenant, read-only. */
  files: WorldCatalog;
}

/** Most worlds a page of `GET /v1/worlds` holds. */
export const MAX_WORLD_PAGE = 100;

/** How many times a write is tried again when another write to the world comes first (only without If-Match). */
const MAX_APPEND_TRIES = 20;

/** A write's common part: its tenant and the idempotency key it may carry. */
interface WorldWrite {
  tenantId: string;
  idempotencyKey?: string;
}

/**
 * A tenant's worlds (issue 29): each world a stream of `world.created@1`, `world.revised@1` (the
 * whole document, revision n at stream version n) and `world.archived@1`; the `worlds` view reads
 * the current revision. Every read and write is scoped to the tenant: another tenant's world is
 * not found. The deployment's file worlds are listed and read beside them, read-only.
 */
export class WorldService implements WorldLoader {
  private readonly revisions: WorldRevisions;
  constructor(private readonly deps: WorldServiceDeps) {
    this.revisions = new WorldRevisions(deps);
  }

  /** The built-in file worlds of the deployment. */
  get files(): WorldCatalog {
    return this.deps.files;
  }

  async create(request: WorldWrite & { document: unknown; provenance?: WorldProvenance }): Promise<IdempotentAnswer<WorldView>> {
    const document = validWorldDocument(request.document);
    const provenance = request.provenance ?? { kind: 'authored' };
    const idempotency = this.idempotency(request, 'create-world', null, { document, provenance });
    for (let tries = 0; ; tries++) {
      if (idempotency) {
        const prior = await priorAnswer(this.deps.store, request.tenantId, idempotency, (e) => (e.type === 'world.created@1' ? e.streamId : null));
        if (prior) return { answer: await this.get({ tenantId: request.tenantId, worldId: prior }), replayed: true };
      }
      const worldId = randomUUID();
      try {
        await this.deps.store.append({
          tenantId: request.tenantId,
          streamId: worldId,
          expectedVersion: 0,
          events: [{ type: 'world.created@1', data: { worldId, revision: 1, document, provenance } }],
          idempotency,
        });
        return { answer: await this.get({ tenantId: request.tenantId, worldId }), replayed: false };
      } catch (error) {
        if (!(error instanceof IdempotencyKeyTakenError) || tries >= MAX_APPEND_TRIES) throw error;
      }
    }
  }

  /** `PUT`: the whole document as the next revision, at the revision `ifMatch` names (412 when it moved on, 428 without it). */
  replace(request: WorldWrite & { worldId: string; document: unknown; ifMatch: number | undefined }): Promise<IdempotentAnswer<WorldView>> {
    checkWorldJson(request.document); // before the body is hashed
    return this.revise(request, () => validWorldDocument(request.document), { document: request.document });
  }

  /** `PATCH`: a JSON Merge Patch (RFC 7396) of the current document, validated whole, as the next revision. */
  patch(request: WorldWrite & { worldId: string; patch: unknown; ifMatch: number | undefined }): Promise<IdempotentAnswer<WorldView>> {
    checkWorldJson(request.patch); // before the body is hashed or merged (both walk it)
    return this.revise(request, (current) => validWorldDocument(applyMergePatch(current, request.patch)), { patch: request.patch });
  }

  /** `DELETE`: archives the world. No new session starts on it; sessions on it keep running. Archiving twice is a no-op. */
  async archive(request: WorldWrite & { worldId: string }): Promise<IdempotentAnswer<WorldView>> {
    const { tenantId, worldId } = request;
    const idempotency = this.idempotency(request, 'archive-world', worldId, {});
    if (idempotency) {
      const prior = await priorAnswer(this.deps.store, tenantId, idempotency, (e) => (e.type === 'world.archived@1' && e.streamId === worldId ? worldId : null));
      if (prior) return { answer: await this.get({ tenantId, worldId }), replayed: true };
    }
    for (let tries = 0; ; tries++) {
      const row = await this.ownRow(tenantId, worldId);
      if (row.archived) return { answer: worldView(row), replayed: false };
      try {
        await this.deps.store.append({ tenantId, streamId: worldId, expectedVersion: row.revision, events: [{ type: 'world.archived@1', data: { worldId } }], idempotency });
        return { answer: await this.get({ tenantId, worldId }), replayed: false };
      } catch (error) {
        const retry = error instanceof ConcurrencyError || error instanceof IdempotencyKeyTakenError;
        if (!retry || tries >= MAX_APPEND_TRIES) throw error;
      }
    }
  }

  /** The world as it is now, or at `revision`: the tenant's own, else a built-in file world; else `WorldNotFoundError`. */
  async get(request: { tenantId: string; worldId: string; revision?: number }): Promise<WorldView> {
    const { tenantId, worldId, revision } = request;
    if (this.deps.files.has(worldId)) {
      if (revision !== undefined && revision !== 1) throw new WorldNotFoundError(`${worldId}@${revision}`);
      return builtInWorldView(worldId, this.deps.files.document(worldId));
    }
    const row = await this.deps.reads.current(tenantId, worldId);
    if (!row) throw new WorldNotFoundError(worldId);
    if (revision === undefined || revision === row.revision) return worldView(row);
    const older = revision < row.revision ? await this.deps.reads.revision(tenantId, worldId, revision) : null;
    if (!older) throw new WorldNotFoundError(`${worldId}@${revision}`);
    return worldView({ ...row, revision: older.revision, document: older.document, name: String(older.document.name ?? row.name), updatedAt: older.recordedAt });
  }

  /**
   * A page of the worlds the tenant can start a session on: the deployment's built-in ones first
   * (read-only), then the tenant's own in creation order; archived ones only with `archived`.
   * `cursor` is the `nextCursor` of the page before (opaque).
   */
  async list(request: { tenantId: string; cursor?: string; limit: number; archived?: boolean }): Promise<{ items: WorldSummaryView[]; nextCursor: string | null }> {
    const limit = Math.min(Math.max(1, request.limit), MAX_WORLD_PAGE);
    const after = request.cursor === undefined ? { kind: 'start' as const } : decodeWorldCursor(request.cursor);
    const items: WorldSummaryView[] = [];
    if (after.kind !== 'tenant') {
      const builtIn = this.deps.files
        .ids()
        .filter((id) => after.kind === 'start' || id > after.id)
        .slice(0, limit + 1);
      for (const id of builtIn.slice(0, limit)) items.push(worldSummary(builtInWorldView(id, this.deps.files.document(id))));
      const full = items.length === limit;
      // a page the built-in worlds fill goes on if more of them, or any of the tenant's, follow
      const more = full && (builtIn.length > limit || (await this.deps.reads.list(request.tenantId, { limit: 1, ...(request.archived ? { archived: true } : {}) })).length > 0);
      if (full) return { items, nextCursor: more ? encodeWorldCursor({ kind: 'built-in', id: items[items.length - 1].id }) : null };
    }
    const rows = await this.deps.reads.list(request.tenantId, {
      ...(after.kind === 'tenant' ? { afterPosition: after.position } : {}),
      limit: limit - items.length + 1,
      ...(request.archived ? { archived: true } : {}),
    });
    const page = rows.slice(0, limit - items.length);
    items.push(...page.map(worldListSummary));
    const last = page[page.length - 1];
    const more = rows.length > page.length && last !== undefined;
    return { items, nextCursor: more ? encodeWorldCursor({ kind: 'tenant', position: last.createdPosition }) : null };
  }

  /**
   * The world a new session of the tenant starts on: a built-in one (no revision), or the tenant's
   * current revision. Unknown (or another tenant's) is a 404 `WORLD_NOT_FOUND`, archived a 409 `WORLD_ARCHIVED`.
   */
  async forNewSession(tenantId: string, worldId: string): Promise<{ worldId: string; world: LoadedWorld; revision?: number }> {
    if (this.deps.files.has(worldId)) return { worldId, world: this.deps.files.get(worldId) };
    const row = TENANT_WORLD_ID.test(worldId) ? await this.deps.reads.current(tenantId, loggedWorldId(worldId)) : null;
    if (!row) throw new WorldNotFoundError(worldId);
    if (row.archived) throw new WorldArchivedError(worldId);
    // the id as the log spells it (a UUID in any letter case names the same world)
    const world = await this.load({ tenantId, worldId: row.worldId, revision: row.revision }); // parsed once per revision and process
    if (!world) throw new WorldNotFoundError(worldId);
    return { worldId: row.worldId, world, revision: row.revision };
  }

  /** The world a session runs (see `WorldRevisions.load`). */
  load(ref: WorldRef): Promise<LoadedWorld | null> {
    return this.revisions.load(ref);
  }

  /** `POST /v1/worlds/import`: a world file (see `importedWorld`) as a new world of the tenant; a bad file creates nothing. */
  import(request: WorldWrite & { bytes: Uint8Array; contentType?: string }): Promise<IdempotentAnswer<WorldView>> {
    const { document, provenance } = importedWorld(request.bytes, request.contentType === undefined ? {} : { contentType: request.contentType });
    return this.create({ tenantId: request.tenantId, document, provenance, ...(request.idempotencyKey === undefined ? {} : { idempotencyKey: request.idempotencyKey }) });
  }

  /** `GET /v1/worlds/:id/export`: the world (now, or at `revision`) as a file. */
  async export(request: { tenantId: string; worldId: string; revision?: number; format: WorldExportFormat; container?: 'json' | 'png' }): Promise<WorldFile> {
    const view = await this.get(request);
    return exportedWorld({
      id: view.id,
      builtIn: view.builtIn,
      name: view.name,
      document: validWorldDocument(view.document),
      format: request.format,
      ...(request.container ? { container: request.container } : {}),
    });
  }

  /** `POST /v1/sessions/:id/world-revision`: see `moveSessionWorld`. */
  moveSession(request: MoveSessionWorldRequest): Promise<IdempotentAnswer<{ worldId: string; revision: number; fromRevision: number }>> {
    return moveSessionWorld(this.deps, request);
  }

  private async revise(
    request: WorldWrite & { worldId: string; ifMatch: number | undefined },
    next: (current: Record<string, unknown>) => WorldDocument,
    body: Record<string, unknown>,
  ): Promise<IdempotentAnswer<WorldView>> {
    const { tenantId, worldId, ifMatch } = request;
    const row = await this.ownRow(tenantId, worldId);
    const idempotency = this.idempotency(request, 'revise-world', worldId, { ...body, ifMatch: ifMatch ?? null });
    // the revision an earlier request with this key made (null: none)
    const replay = async (): Promise<IdempotentAnswer<WorldView> | null> => {
      if (!idempotency) return null;
      const prior = await priorAnswer(this.deps.store, tenantId, idempotency, (e) => (e.type === 'world.revised@1' && e.streamId === worldId ? e.data.revision : null));
      return prior === null ? null : { answer: await this.get({ tenantId, worldId, revision: prior }), replayed: true };
    };
    const earlier = await replay();
    if (earlier) return earlier;
    if (ifMatch === undefined) throw new WorldRevisionRequiredError(worldId);
    if (row.archived) throw new WorldArchivedError(worldId);
    if (ifMatch !== row.revision) throw new WorldRevisionMismatchError(worldId, ifMatch, row.revision);
    const document = next(row.document);
    const revision = row.revision + 1;
    try {
      await this.deps.store.append({ tenantId, streamId: worldId, expectedVersion: row.revision, events: [{ type: 'world.revised@1', data: { worldId, revision, document } }], idempotency });
    } catch (error) {
      if (error instanceof ConcurrencyError) {
        // the same request, sent twice at once: the one that got in first answers both
        const first = await replay();
        if (first) return first;
        const now = await this.deps.reads.current(tenantId, worldId);
        throw now?.archived ? new WorldArchivedError(worldId) : new WorldRevisionMismatchError(worldId, ifMatch, now?.revision ?? ifMatch + 1);
      }
      if (error instanceof IdempotencyKeyTakenError) return this.revise(request, next, body);
      throw error;
    }
    return { answer: await this.get({ tenantId, worldId }), replayed: false };
  }

  /** The tenant's own world's row; a built-in world is read-only, anything else not found. */
  private async ownRow(tenantId: string, worldId: string): Promise<WorldRow> {
    if (this.deps.files.has(worldId)) throw new WorldReadOnlyError(worldId);
    const row = await this.deps.reads.current(tenantId, worldId);
    if (!row) throw new WorldNotFoundError(worldId);
    return row;
  }

  private idempotency(request: WorldWrite, operation: IdempotentOperation, worldId: string | null, body: Record<string, unknown>) {
    return request.idempotencyKey === undefined
      ? undefined
      : { key: request.idempotencyKey, requestHash: requestHash({ operation, sessionId: worldId, body }) };
  }
}
