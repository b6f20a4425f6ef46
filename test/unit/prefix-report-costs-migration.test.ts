import { Kysely, Migrator, sql } from 'kysely';
import { migrations } from '../../migrations';
import { PGliteDialect } from '../../libs/events/pglite-dialect';
import { emptyPGlite } from '../support/empty-pglite';

/**
 * Migration 0016 gives `prefix_reports` each call's model and output tokens (what the sessions list
 * sums its est. $ from); rows written before it are filled in once from the log.
 */
describe('migration 0016_prefix_report_costs', () => {
  it('fills the model and the last reported output tokens of rows written before it', async () => {
    const pglite = emptyPGlite();
    const db = new Kysely<unknown>({ dialect: new PGliteDialect(pglite) });
    try {
      const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
      expect((await migrator.migrateTo('0015_execution_waiting')).error).toBeUndefined();
      const event = (version: number, type: string, data: object) =>
        sql`insert into events (tenant_id, stream_id, stream_version, type, data) values ('t', 's', ${version}, ${type}, ${JSON.stringify(data)}::jsonb)`.execute(
          db,
        );
      const usage = (outputTokens: number) => ({ inputTokens: 100, cachedInputTokens: 40, outputTokens });
      await event(1, 'llm.calling@1', { callId: 'c1', model: 'gpt-4.1-mini', body: '{}' });
      await event(2, 'llm.responded@1', { callId: 'c1', usage: usage(7) });
      await event(3, 'llm.responded@1', { callId: 'c1', usage: usage(9) }); // the last answer of a call counts
      await event(4, 'llm.calling@1', { callId: 'c2', model: 'gpt-4.1-nano', body: '{}' }); // never answered
      for (const [callId, input] of [
        ['c1', 100],
        ['c2', null],
      ] as const)
        await sql`insert into prefix_reports (call_id, tenant_id, session_id, turn_id, turn, runtime, position, first_in_turn, protocol, body, request_tokens, provider_input_tokens)
                  values (${callId}, 't', 's', 'turn', 1, 'p/r', 1, true, 'openai-chat', '{}', 10, ${input})`.execute(db);

      expect((await migrator.migrateToLatest()).error).toBeUndefined();
      const rows = await sql<{ call_id: string; model: string | null; provider_output_tokens: number | null }>`
        select call_id, model, provider_output_tokens from prefix_reports order by call_id`.execute(db);
      expect(rows.rows).toEqual([
        { call_id: 'c1', model: 'gpt-4.1-mini', provider_output_tokens: 9 },
        { call_id: 'c2', model: 'gpt-4.1-nano', provider_output_tokens: null },
      ]);
    } finally {
      await db.destroy();
    }
  }, 60_000);
});
