import { eventByEvent, type InlineProjection } from './projection';

/**
 * `world_generations`, from a world generation job's stream: `world-generation.requested@1` inserts
 * the job (`queued`), each `world-generation.call-requested@1` moves it to its round (`drafting` for
 * the draft, `repairing` after), `completed@1` and `failed@1` end it. Applied in the append's
 * transaction (a progress read after an append sees it); rebuilt from the log alone (`rebuildInline`).
 */
export const worldGenerationsProjection: InlineProjection = eventByEvent({
  name: 'world_generations',
  handles: ['world-generation.requested@1', 'world-generation.call-requested@1', 'world-generation.completed@1', 'world-generation.failed@1'],
  tables: ['world_generations'],
  streamKey: 'job_id',
  async apply(trx, event) {
    const job = trx.updateTable('world_generations').where('job_id', '=', event.streamId);
    switch (event.type) {
      case 'world-generation.requested@1':
        await trx
          .insertInto('world_generations')
          .values({
            job_id: event.streamId,
            tenant_id: event.tenantId,
            status: 'queued',
            round: 0,
            rounds: event.data.repairRounds,
            world_id: null,
            error_code: null,
            error_reason: null,
            created_at: event.recordedAt,
            updated_at: event.recordedAt,
          })
          .execute();
        return;
      case 'world-generation.call-requested@1':
        await job
          .set({ status: event.data.round === 0 ? 'drafting' : 'repairing', round: event.data.round, updated_at: event.recordedAt })
          .where('status', 'not in', ['done', 'failed'])
          .execute();
        return;
      case 'world-generation.completed@1':
        await job.set({ status: 'done', world_id: event.data.worldId, updated_at: event.recordedAt }).execute();
        return;
      case 'world-generation.failed@1':
        await job.set({ status: 'failed', error_code: event.data.code, error_reason: event.data.reason, updated_at: event.recordedAt }).execute();
        return;
    }
  },
});
